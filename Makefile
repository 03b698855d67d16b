# bridged — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8787
RELEASE_BIN := .build/release/bridged
export BRIDGED_BIN ?= $(CURDIR)/$(RELEASE_BIN)

.PHONY: deps deps-test embed build build-release run test test-swift test-js test-integration clean

# Install what is missing (idempotent; apt-get only when a piece is absent).
deps:
	@./scripts/install-deps.sh

deps-test:
	@./scripts/install-deps.sh --test

# js-client/bridge.js is compiled into the daemon (Sources/bridged/BridgeJS.generated.swift).
embed:
	@$(PYTHON) scripts/embed-js.py

build-release: deps embed
	$(SWIFT) build -c release --product bridged

build: build-release

run: build-release
	@echo "bridged: dashboard http://$(HOST):$(PORT)/  demo PWA http://$(HOST):$(PORT)/app/  page library http://$(HOST):$(PORT)/bridge.js"
	$(RELEASE_BIN) --host $(HOST) --port $(PORT) --static js-client/demo --config examples/app.yaml $(RUN_ARGS)

test: deps-test
	@$(PYTHON) scripts/embed-js.py --check
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

clean:
	rm -rf .build
