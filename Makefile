# graphmem: make demo | make test | make lint | make bench
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-kuzu test-ladybug test-postgresql lint bench bench-small bench-evidence bench-locomo bench-recommend bench-service bench-engines clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## build the example store and walk through it
	$(BIN)/graphmem --store .demo-store demo

test: test-kuzu test-ladybug test-postgresql  ## the whole test suite, once per engine (docs/engines.md)

test-kuzu: $(STAMP)  ## the suite on Kuzu, with the docstrings' examples
	GRAPHMEM_TEST_ENGINE=kuzu $(BIN)/pytest

test-ladybug: $(STAMP)  ## the suite on LadybugDB (tests of Kuzu's own files left out)
	GRAPHMEM_TEST_ENGINE=ladybug $(BIN)/pytest tests

test-postgresql: $(STAMP)  ## the suite on PostgreSQL (tests of the embedded engines' own files left out), when a server binary is found (else skipped, saying so)
	@if command -v pg_ctl >/dev/null 2>&1 || [ -x /usr/local/bin/pg_ctl ] || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then \
		GRAPHMEM_TEST_ENGINE=postgresql $(BIN)/pytest tests; \
	elif [ -n "$$GRAPHMEM_REQUIRE_POSTGRESQL" ]; then \
		echo "make test: no PostgreSQL server binary (pg_ctl) on this machine, and GRAPHMEM_REQUIRE_POSTGRESQL requires the PostgreSQL run"; exit 1; \
	else echo "make test: the PostgreSQL run is skipped: no PostgreSQL server binary (pg_ctl) on this machine"; fi

lint: $(STAMP)  ## ruff and mypy
	$(BIN)/ruff check graphmem tests benchmarks tools
	$(BIN)/mypy

bench: $(STAMP)  ## benchmarks at 10k, 100k and 1M assertions, the real data sets, evidence at 100k records, recommend
	$(BIN)/python benchmarks/bench.py --scales 10000 100000 1000000
	$(BIN)/python benchmarks/realdata/bench_real.py
	$(BIN)/python benchmarks/bench_evidence.py --records 100000
	$(BIN)/python benchmarks/bench_recommend.py --scales 10000 100000 1000000
	$(BIN)/python benchmarks/realdata/recommend_quality.py
	$(BIN)/python benchmarks/pack_quality.py
	$(BIN)/python benchmarks/bench_service.py --scale 100000
	$(BIN)/python benchmarks/bench_locomo.py
	$(BIN)/python benchmarks/bench_lifecycle.py --records 100000
	$(BIN)/python benchmarks/bench_pack_tail.py --records 100000
	$(BIN)/python benchmarks/bench_scopes.py --scale 100000
	$(BIN)/python benchmarks/bench_openclaw.py
	$(BIN)/python benchmarks/bench_engines.py --scales 100000 1000000
	$(BIN)/python benchmarks/bench_service_workers.py --scale 100000

bench-locomo: $(STAMP)  ## conversations: evidence recall of search and pack beside a plain BM25 (../shared/data/locomo-dev)
	$(BIN)/python benchmarks/bench_locomo.py

bench-recommend: $(STAMP)  ## recommend, path and pack at 10k, 100k and 1M beside raw Kuzu and search; their quality
	$(BIN)/python benchmarks/bench_recommend.py --scales 10000 100000 1000000
	$(BIN)/python benchmarks/realdata/recommend_quality.py
	$(BIN)/python benchmarks/pack_quality.py

bench-service: $(STAMP)  ## the service under 1, 8 and 32 clients on the 100k store, beside in-process calls
	$(BIN)/python benchmarks/bench_service.py --scale 100000

bench-engines: $(STAMP)  ## Kuzu, LadybugDB and PostgreSQL at 100k and 1M beside raw queries; the service's workers at 100k
	$(BIN)/python benchmarks/bench_engines.py --scales 100000 1000000
	$(BIN)/python benchmarks/bench_service_workers.py --scale 100000

bench-evidence: $(STAMP)  ## ingest, search and extraction at 100k records
	$(BIN)/python benchmarks/bench_evidence.py --records 100000

bench-small: $(STAMP)  ## a quick benchmark at 10k assertions
	$(BIN)/python benchmarks/bench.py --scales 10000

clean:
	rm -rf $(VENV) .demo-store bench-results .pytest_cache .mypy_cache .ruff_cache
