# The two commands a new user needs: `make demo` and `make test`.
# Both create or refresh .venv first, so they work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv demo test lint verify-deploy bench fuzz clean

venv:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,analysis]'

demo: venv
	$(BIN)/shoectl demo --game macau-1 --decks 8 --device shoe

lint: venv
	$(BIN)/ruff check .

# udevadm verify and systemd-analyze on the udev rules and the unit (docs/deployment.md).
verify-deploy: venv
	bash .ci/validate-deploy.sh $(BIN)/shoectl

test: venv lint verify-deploy
	$(BIN)/python -m pytest

bench: venv
	$(BIN)/python bench/run_all.py

# Coverage-guided fuzzing of the link codec with atheris (the optional fuzz extra).
FUZZ_SECONDS ?= 60
fuzz: venv
	$(BIN)/python -m pip install --quiet -e '.[test,fuzz]'
	$(BIN)/python tests/fuzz/fuzz_link.py --write-seeds build/fuzz-corpus
	$(BIN)/python tests/fuzz/fuzz_link.py -max_total_time=$(FUZZ_SECONDS) build/fuzz-corpus

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
