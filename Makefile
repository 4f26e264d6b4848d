# mini-n8n: `make run` opens the editor, `make test` runs every test, `make bench` prints benchmarks (`make bench QUICK=1`: in under 3 minutes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= dev,local
# Bytecode of our own modules, written even when PYTHONDONTWRITEBYTECODE is set (Python still
# reads it then): without it every start compiles the engine again.
BYTECODE := $(BIN)/python -m compileall -q engine nodes gui resources

.PHONY: run test bench venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Luxon and jmespath: the libraries n8n's expressions expose as DateTime/$now and $jmespath
JS_LIBS := luxon@3.7.2 jmespath@0.16.0

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	npm install --silent --no-audit --no-fund --prefix $(VENV)/js $(JS_LIBS)
	$(BYTECODE)
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BYTECODE)
	$(BIN)/mini-n8n resources/examples/local-chat-agent.json

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS),bench]"
	$(BYTECODE)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tests/benchmarks/run_all.py $(if $(QUICK),--quick)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
