# bridged — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8787
RELEASE_BIN := .build/release/bridged
export BRIDGED_BIN ?= $(CURDIR)/$(RELEASE_BIN)

.PHONY: deps deps-test build build-release run test test-swift test-js test-integration clean bench bench-build

# Install what is missing (idempotent; apt-get only when a piece is absent).
deps:
	@./scripts/install-deps.sh

deps-test:
	@./scripts/install-deps.sh --test

# js-client/bridge.js (and every file under Sources/BridgeServer/Assets/) is compiled into the
# daemon at build time by the EmbedAssets build-tool plugin (Plugins/EmbedAssets).
build-release: deps
	$(SWIFT) build -c release --product bridged

build: build-release

run: build-release
	@echo "bridged: dashboard http://$(HOST):$(PORT)/  demo PWA http://$(HOST):$(PORT)/app/  page library http://$(HOST):$(PORT)/bridge.js"
	$(RELEASE_BIN) --host $(HOST) --port $(PORT) --static js-client/demo --config examples/app.yaml $(RUN_ARGS)

test: deps-test
	$(MAKE) test-swift
	$(MAKE) build-release
	$(MAKE) test-js
	$(MAKE) test-integration

test-swift:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-js:
	node --test js-client/test/

test-integration:
	$(PYTHON) -m pytest -q Tests/integration

# Benchmarks (not part of `make test`): every workload against bridged, a raw libwebsockets echo
# server and a Python `websockets` mock, one core each side; prints the table of
# docs/PERFORMANCE.md. BENCH_ARGS is passed to Benchmarks/run.py (e.g. BENCH_ARGS="--duration 2").
BENCH_ARGS ?=

# The benchmarks are a package of their own (Benchmarks/Package.swift, depending on this one by
# path), so `make test` never builds them.
bench-build: build-release
	$(SWIFT) build -c release --package-path Benchmarks --product bridge-load

bench: bench-build
	@$(PYTHON) -c 'import websockets' 2>/dev/null || $(PYTHON) -m pip install -q --disable-pip-version-check websockets
	$(PYTHON) Benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf .build Benchmarks/.build
