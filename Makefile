# mini-n8n: `make run` opens the editor, `make test` runs every test, `make bench` prints benchmarks (`make bench QUICK=1`: in under 3 minutes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= dev,local,server
# Bytecode of our own modules, written even when PYTHONDONTWRITEBYTECODE is set (Python still
# reads it then): without it every start compiles the engine again.
BYTECODE := $(BIN)/python -m compileall -q engine nodes gui resources
# llama-cpp-python compiles llama.cpp from source. It is built for a portable x86-64 baseline
# (x86-64-v3: AVX2, FMA, F16C, BMI2; CPUs since 2013-2015), never with -march=native for the build
# machine's CPU, so a venv computes the same on every machine. On an older CPU, e.g.:
#   make venv LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX512=OFF -DLLAVA_BUILD=OFF
LLAMA_NOTICE := building llama.cpp, about 5-10 minutes on 2 cores

.PHONY: run test bench venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Luxon and jmespath: the libraries n8n's expressions expose as DateTime/$now and $jmespath
JS_LIBS := luxon@3.7.2 jmespath@0.16.0

# pip's wheel cache keys a built llama-cpp-python on its source, not on CMAKE_ARGS: a cache that
# holds a -march=native build hands it over, so the installed build is checked and, only when it
# is not the portable one, rebuilt once with the cache bypassed.
$(STAMP): pyproject.toml Makefile | $(BIN)/python
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || echo "$(LLAMA_NOTICE) (unless pip has it built already)"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	@$(BIN)/python nodes/models/llama_build.py || { \
		echo "$(LLAMA_NOTICE) (the installed build is for one CPU type only)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --force-reinstall --no-deps \
			--no-cache-dir --no-binary llama-cpp-python "llama-cpp-python==$$($(BIN)/python nodes/models/llama_build.py --version)" \
		&& $(BIN)/python nodes/models/llama_build.py; }
	npm install --silent --no-audit --no-fund --prefix $(VENV)/js $(JS_LIBS)
	$(BYTECODE)
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BYTECODE)
	$(BIN)/mini-n8n resources/examples/local-chat-agent.json

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

# the peers the benchmarks measure against (LangGraph with its SQLite checkpointer, aiohttp), installed once
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS),bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BYTECODE)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tests/benchmarks/run_all.py $(if $(QUICK),--quick)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
