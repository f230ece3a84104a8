# arcadego: `make demo` runs the demo, `make test` runs every test.
# Every tool this file needs is installed by the repo's own scripts
# (build/pyenv.sh for Python packages; Go modules come from the proxy).

SHELL := /bin/bash
GO ?= go
PYTHON ?= python3
OUT := build/out
LIB := $(OUT)/libarcadego.so
LIB_CGOCHECK := build/out-cgocheck2/libarcadego.so
VENV := .venv
VENV_NOARROW := .venv-noarrow
VENV_INTEROP := .venv-interop
CRASH_TRIALS ?= 50

.PHONY: all deps lib lib-cgocheck2 test test-go test-race test-abi test-c test-python interop crash fuzz bench bench-go bench-c bench-python demo venv clean

all: lib

deps:
	build/deps.sh

lib: deps
	build/lib.sh $(OUT)

# The same library built with cgocheck2, which aborts on any Go pointer
# stored into C memory; the ABI tests run against both.
lib-cgocheck2: deps
	GOEXPERIMENT=cgocheck2 build/lib.sh build/out-cgocheck2

test: deps test-go test-race test-abi test-c test-python
	@echo "make test: all suites passed"

# The core is cgo-free: vet and test it with cgo off.
test-go:
	CGO_ENABLED=0 $(GO) vet ./core/... ./arrowbridge/... ./internal/... ./tests/...
	$(GO) vet ./capi/
	CGO_ENABLED=0 ARCADEGO_CRASH_TRIALS=$(CRASH_TRIALS) $(GO) test -count=1 ./core/... ./arrowbridge/... ./internal/...

test-race:
	ARCADEGO_CRASH_TRIALS=10 $(GO) test -race -count=1 ./core/... ./arrowbridge/... ./internal/...

test-abi: lib lib-cgocheck2
	CGO_ENABLED=0 ARCADEGO_LIB=$(CURDIR)/$(LIB) $(GO) test -count=1 ./tests/abi/
	CGO_ENABLED=0 ARCADEGO_LIB=$(CURDIR)/$(LIB_CGOCHECK) $(GO) test -count=1 ./tests/abi/

test-c: lib
	tests/c/run.sh $(OUT)

venv:
	build/pyenv.sh $(VENV)

test-python: venv
	$(VENV)/bin/python -m pytest -q tests/python
	build/pyenv.sh $(VENV_NOARROW) --no-pyarrow
	$(VENV_NOARROW)/bin/python -m pytest -q tests/python/test_no_pyarrow.py

# Apache Spark (delta-spark) reads flushed databases in place and must return
# what db.scan returns. Not part of `make test`: it installs Java 17 (apt),
# pyspark and the Delta jars (Maven Central) into $(VENV_INTEROP).
interop: deps
	build/interop.sh $(VENV_INTEROP)

# More crash trials than `make test` runs.
crash:
	CGO_ENABLED=0 ARCADEGO_CRASH_TRIALS=500 $(GO) test -count=1 -run Crash -v ./core/engine/ | tail -3

# Fuzz the Arrow C Data Interface import for FUZZTIME (its seeds run in make test).
FUZZTIME ?= 5m
fuzz:
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz FuzzImport -fuzztime $(FUZZTIME) ./internal/cdata/
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/flatjson/

bench: bench-go bench-c bench-python

# The fixed cost of a small insert through the C ABI, from a C program.
bench-c: lib
	tests/c/bench.sh $(OUT)

bench-go:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench '^Benchmark[^D]' -benchtime 200x ./core/memtable/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench 'DeviceMemory' -benchtime 1x ./core/memtable/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchtime 20x ./core/schema/ ./arrowbridge/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench Order -benchtime 3x ./core/internal/namesort/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench DecodeDeltaTimes ./core/segment/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench 'InsertExpansion|SchemaBatch|BulkInsert|Scan$$|ScanWhereWide|Flush|Reopen|DirectWrite|InsertLong|AddProperty|DevicesFromMemtable' -benchtime 10x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench QueryDuringExpansion -benchtime 10x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench PointRead -benchtime 20000x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench SmallTablets -benchtime 200000x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench 'Compact$$|DeleteRange|Clone$$' -benchtime 1x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench 'CreateIndex|InsertIndexed' -benchtime 2x ./core/engine/
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchtime 200x ./core/wal/
	$(MAKE) lib
	CGO_ENABLED=0 ARCADEGO_LIB=$(CURDIR)/$(LIB) $(GO) test -run '^$$' -bench 'Insert|Scan' -benchtime 20x ./tests/abi/

bench-python: venv
	$(VENV)/bin/python tests/bench/bench_ingest.py
	$(VENV)/bin/python tests/bench/bench_storage.py
	$(VENV)/bin/python tests/bench/bench_devices.py
	$(VENV)/bin/python tests/bench/bench_calls.py
	$(VENV)/bin/python tests/bench/bench_sum.py
	$(VENV)/bin/python tests/bench/bench_queries.py
	$(VENV)/bin/python tests/bench/bench_index.py
	$(VENV)/bin/python tests/bench/bench_template.py

demo: venv
	$(VENV)/bin/python python/examples/demo.py

clean:
	rm -rf build/out build/out-cgocheck2 $(VENV) $(VENV_NOARROW) $(VENV_INTEROP) dist
