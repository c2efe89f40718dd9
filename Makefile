# The two commands a new user needs: `make demo` and `make test`.
# Both set up .venv first, so they work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv demo lock test lint typecheck verify-deploy browser floor-demo floor-servers bench fuzz man completion catalogs clean

# Set-up runs only when it is out of date: each set-up's last successful run leaves its stamp,
# and make reruns it only when one of its inputs is newer. So a second `make demo` or
# `make test` installs nothing, needs no network and prints nothing.
# Two set-ups, each with its stamp: the runtime one (`make demo`: the package and its runtime
# dependencies, no extras, no apt, any user) and the test one on top of it (`make test` and
# `make venv`: the test, analysis and lock extras, the lock check, and as root Debian's
# mosquitto and PostgreSQL). Every pip install is constrained by the lock, constraints.txt.
# To add a set-up step (an extra, or apt packages installed by a .ci/ script with
# --no-install-recommends), add its line to the recipe that needs it and the files it reads
# (the script itself included) to that recipe's inputs; a stamp is touched only after every
# step of its recipe has succeeded.
# The setuptools notice "Editable installation ... be careful with folders" is filtered by
# its message, the way setuptools' warnings module says to; every other warning still shows.
LOCK := constraints.txt
SETUP_INPUTS := pyproject.toml Makefile $(LOCK)
SETUP_STAMP := $(VENV)/.setup-done
TEST_SETUP_INPUTS := $(SETUP_STAMP) .ci/install-floor.sh .ci/install-console.sh .ci/lock.sh
TEST_SETUP_STAMP := $(VENV)/.test-setup-done
FLOOR_SETUP_STAMP := $(VENV)/.floor-setup-done
QUIET_EDITABLE := PYTHONWARNINGS='ignore:Editable installation.:UserWarning'
PIP_INSTALL := $(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet --constraint $(LOCK)

venv: $(TEST_SETUP_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(SETUP_STAMP): $(SETUP_INPUTS) | $(BIN)/python
	$(PIP_INSTALL) -e .
	touch $@

$(TEST_SETUP_STAMP): $(TEST_SETUP_INPUTS)
	$(PIP_INSTALL) -e '.[test,analysis,lock]'
	bash .ci/lock.sh --check
	bash .ci/install-floor.sh
	bash .ci/install-console.sh
	touch $@

$(FLOOR_SETUP_STAMP): $(SETUP_STAMP)
	$(PIP_INSTALL) -e '.[floor]'
	touch $@

demo: $(SETUP_STAMP)
	$(BIN)/shoectl demo --game macau-1 --decks 8 --device shoe

# The lock, constraints.txt, anew from pyproject.toml (uv, the `lock` extra): run it after
# changing a dependency and commit the lock with it; `make test` fails until then. It needs
# only uv, so it works while the lock and pyproject.toml disagree.
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(if $(wildcard $(LOCK)),--constraint $(LOCK)) uv
	bash .ci/lock.sh

# ruff's checks and its formatting, and the import-linter contracts of pyproject.toml that keep
# the layers one way.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

# mypy cannot follow setuptools' package-dir mapping, so it checks a tree of links that
# lays the three code folders out as the installed cardshoe package.
TYPECHECK_TREE := build/typecheck
typecheck: venv
	mkdir -p $(TYPECHECK_TREE)/cardshoe
	for folder in controller drivers firmware_sim; do \
		ln -sfn ../../../$$folder $(TYPECHECK_TREE)/cardshoe/$$folder; done
	cd $(TYPECHECK_TREE) && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p cardshoe

# udevadm verify and systemd-analyze on the udev rules and the unit (docs/deployment.md).
verify-deploy: venv
	bash .ci/validate-deploy.sh $(BIN)/shoectl

# Debian's headless Chromium and a CJK font for the scoreboard's browser tests (tests/web).
browser:
	@bash .ci/install-browser.sh

test: venv lint typecheck verify-deploy browser
	$(BIN)/python -m pytest

# 12 simulated tables, each with its simulator, service, journal and uplink, into a
# throwaway mosquitto and PostgreSQL through one ingest (docs/floor.md), and the pit on
# PIT_LISTEN with alarms to acknowledge (docs/pit.md); Ctrl-C ends it.
# mosquitto and PostgreSQL come from Debian: without them it stops, before installing
# anything, with the apt-get line that brings them.
PIT_LISTEN ?= 127.0.0.1:8090
floor-demo: floor-servers $(FLOOR_SETUP_STAMP)
	$(BIN)/shoectl floor demo --tables 12 --pit $(PIT_LISTEN)

floor-servers:
	@bash .ci/install-floor.sh --check

bench: venv
	$(BIN)/python bench/run_all.py

# Coverage-guided fuzzing of the link codec with atheris (the optional fuzz extra).
FUZZ_SECONDS ?= 60
fuzz: venv
	$(PIP_INSTALL) -e '.[test,fuzz]'
	$(BIN)/python tests/fuzz/fuzz_link.py --write-seeds build/fuzz-corpus
	$(BIN)/python tests/fuzz/fuzz_link.py -max_total_time=$(FUZZ_SECONDS) build/fuzz-corpus

# shoectl's man pages (build/man/*.1) and bash/zsh completion (build/completion/), generated
# from the click commands; udev/install.sh generates and installs the same files.
man: $(SETUP_STAMP)
	$(BIN)/python -m cardshoe.controller.cli.reference_pages man build/man

completion: $(SETUP_STAMP)
	$(BIN)/python -m cardshoe.controller.cli.reference_pages completion build/completion

# The console's gettext catalogs (docs/console.md#languages): its words taken from the code into
# controller/locale/cardshoe.pot, merged into each language's .po (the file a translator
# edits), then compiled into the .mo files the package ships. Commit all three kinds.
LOCALE := controller/locale
CATALOGS := zh_Hant zh_Hans
catalogs: venv
	$(BIN)/pybabel extract -F babel.cfg -k N_ -k tr -k Words:1 --no-location \
		--project cardshoe -o $(LOCALE)/cardshoe.pot controller
	for catalog in $(CATALOGS); do \
		if [ -f $(LOCALE)/$$catalog/LC_MESSAGES/cardshoe.po ]; then \
			$(BIN)/pybabel update --no-fuzzy-matching -D cardshoe \
				-i $(LOCALE)/cardshoe.pot -d $(LOCALE) -l $$catalog; \
		else \
			$(BIN)/pybabel init -D cardshoe -i $(LOCALE)/cardshoe.pot -d $(LOCALE) \
				-l $$catalog; \
		fi; \
	done
	$(BIN)/pybabel compile --statistics -D cardshoe -d $(LOCALE)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
