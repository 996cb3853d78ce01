# The two commands of the README: `make demo` and `make test`.
# Each creates (or updates) its own virtual environment.
PY ?= python3
VENV := .venv
BENCH_VENV := .venv-bench

.PHONY: demo demo-dask test bench lint clean

$(VENV)/.stamp-test: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.stamp-test
	$(VENV)/bin/python -m tapegrad.demo

demo-dask: $(VENV)/.stamp-test
	$(VENV)/bin/python -m tapegrad.dask --n 100000

test: $(VENV)/.stamp-test
	$(VENV)/bin/ruff check tapegrad tests benchmarks
	$(VENV)/bin/python -m pytest -q

$(BENCH_VENV)/.stamp: pyproject.toml
	$(PY) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --upgrade pip
	$(BENCH_VENV)/bin/pip install -q -e '.[bench]'
	touch $@

bench: $(BENCH_VENV)/.stamp
	$(BENCH_VENV)/bin/python -m benchmarks.run
	$(BENCH_VENV)/bin/python -m benchmarks.overhead
	$(BENCH_VENV)/bin/python -m benchmarks.readme

clean:
	rm -rf $(VENV) $(BENCH_VENV)
