# The two commands a new user needs: `make demo` and `make test`.
# Both set up .venv first, so they work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv demo test lint typecheck verify-deploy browser floor-demo bench fuzz man completion clean

# Set-up runs only when it is out of date: its last successful run leaves $(SETUP_STAMP),
# and make reruns it only when a file in SETUP_INPUTS is newer. So a second `make demo` or
# `make test` installs nothing, needs no network and prints nothing.
# To add a set-up step (an extra such as '.[test,analysis]', or apt packages installed by a
# .ci/ script with --no-install-recommends), add its line to the recipe below and the files
# it reads (the script itself included) to SETUP_INPUTS; the stamp is touched only after
# every step has succeeded.
# The setuptools notice "Editable installation ... be careful with folders" is filtered by
# its message, the way setuptools' warnings module says to; every other warning still shows.
SETUP_INPUTS := pyproject.toml Makefile .ci/install-floor.sh
SETUP_STAMP := $(VENV)/.setup-done
QUIET_EDITABLE := PYTHONWARNINGS='ignore:Editable installation.:UserWarning'

venv: $(SETUP_STAMP)

$(SETUP_STAMP): $(SETUP_INPUTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e '.[test,analysis]'
	bash .ci/install-floor.sh
	touch $@

demo: venv
	$(BIN)/shoectl demo --game macau-1 --decks 8 --device shoe

# ruff, and the import-linter contracts of pyproject.toml that keep the layers one way.
lint: venv
	$(BIN)/ruff check .
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
PIT_LISTEN ?= 127.0.0.1:8090
floor-demo: venv
	$(BIN)/shoectl floor demo --tables 12 --pit $(PIT_LISTEN)

bench: venv
	$(BIN)/python bench/run_all.py

# Coverage-guided fuzzing of the link codec with atheris (the optional fuzz extra).
FUZZ_SECONDS ?= 60
fuzz: venv
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e '.[test,fuzz]'
	$(BIN)/python tests/fuzz/fuzz_link.py --write-seeds build/fuzz-corpus
	$(BIN)/python tests/fuzz/fuzz_link.py -max_total_time=$(FUZZ_SECONDS) build/fuzz-corpus

# shoectl's man pages (build/man/*.1) and bash/zsh completion (build/completion/), generated
# from the click commands; udev/install.sh generates and installs the same files.
man: venv
	$(BIN)/python -m cardshoe.controller.cli.reference_pages man build/man

completion: venv
	$(BIN)/python -m cardshoe.controller.cli.reference_pages completion build/completion

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
