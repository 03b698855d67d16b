# bridged — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8787
RELEASE_BIN := .build/release/bridged
export BRIDGED_BIN ?= $(CURDIR)/$(RELEASE_BIN)

.PHONY: fuzz fuzz-build test-asan test-asan-smoke test-tsan deps deps-test deps-deb deb build build-release run test test-swift test-js test-python-client test-integration clean bench bench-build

# Install what is missing (idempotent; apt-get only when a piece is absent).
deps:
	@./scripts/install-deps.sh

deps-test:
	@./scripts/install-deps.sh --test

deps-deb:
	@./scripts/install-deps.sh --deb

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
	$(MAKE) deb
	$(MAKE) test-js
	$(MAKE) test-python-client
	BRIDGED_DEB_REQUIRED=1 $(MAKE) test-integration

test-swift:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# js-client/controller.js's tests need a WebSocket: global from Node 22, behind a flag on Node 20.
test-js:
	flag=""; node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || \
	  { node --experimental-websocket -e '' 2>/dev/null && flag=--experimental-websocket; }; \
	  node $$flag --test js-client/test/

# The integration tests speak to the daemon through the project's Python client (clients/python):
# Tests/integration/conftest.py puts clients/python/src first on sys.path, so the checkout's own
# package is used, installed or not (its one dependency, websockets, comes from deps-test).
test-integration:
	$(PYTHON) -m pytest -q Tests/integration

# The Python client (clients/python, docs/PYTHON-CLIENT.md): `pip install './clients/python[playwright]'`
# into a fresh venv (it sees the system's pytest, websockets and Playwright: only pytest-playwright
# and python-slugify come from PyPI, kept out of the system so that they stay out of the other
# suites), then its own tests against that installed package and the release binary
# ($BRIDGED_BIN). test_shell.py runs a Turbo app's suite in the shell: Turbo from fetch-turbo.sh.
PY_CLIENT_VENV := .build/python-client-venv
test-python-client:
	./scripts/fetch-turbo.sh
	rm -rf $(PY_CLIENT_VENV)
	$(PYTHON) -m venv --system-site-packages $(PY_CLIENT_VENV)
	$(PY_CLIENT_VENV)/bin/python -m pip install -q --disable-pip-version-check './clients/python[playwright]'
	$(PY_CLIENT_VENV)/bin/python -m pytest -q -p no:cacheprovider clients/python/tests

# The Debian package (docs/INSTALL.md): dist/bridged_VERSION_amd64.deb, built by
# scripts/build-deb.sh under .build-deb (the manual pages from the argument parser's generator,
# the binary with --static-swift-stdlib, Depends from dpkg-shlibdeps, lintian). `make test`
# builds it once; Tests/integration/test_deb.py runs its bridged with /opt/swift hidden.
# Measured on the 2-core VM at load average 12 (wall time, CPU time in brackets), `make deb` from
# a clean clone: 8.6 min [3.4 min]; of it the static release build 6.5 min, the man page
# generator 0.6 min, lintian 0.9 min [0.1 min]. test_deb.py: 22 s [4 s] (8 tests).
deb: deps-deb
	./scripts/build-deb.sh

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

# ---------------------------------------------------------------------------------------------
# Fuzzing: libFuzzer targets under AddressSanitizer (Fuzz/Sources). One binary, built by swiftc
# from BridgeProtocol's sources and the targets (one module, so internals are reachable), run as
#   fuzz-json      the JSON parser: round trip, stable output, depth limits, error offsets
#   fuzz-envelope  the request fast path against the general parser: same verdict, same values
#   fuzz-bridge    the whole Bridge state machine (the project's one Bridge fuzzer; with and
#                  without a routing configuration, browser sessions played by script, with the
#                  hotwire-native and capacitor profiles and their page events): one reply
#                  per request, a refused frame leaves the whole Bridge equal to a copy taken
#                  before it, nothing sent after a close, well-formed stacks and timers, what a
#                  subscribed observer hears, bounded sessions and stacks, every session within
#                  --max-session-bytes, every stack stackJSON would send equal to writeStack of
#                  the engine's items (first byte with bit 1: an observer without stack.changed,
#                  so the cached stack meets changes it did not write). `swift test` replays its
#                  seed corpus through the same file (BridgeFuzzReplayTests).
# LeakSanitizer reads Fuzz/lsan.supp (one static's Regexes, reported at exit).
# Seeds are in Fuzz/corpus/NAME (kept small); what a run finds goes to .build-fuzz/corpus/NAME,
# and a failing input to .build-fuzz/artifacts/NAME-crash-… (replay: .build-fuzz/fuzz-NAME FILE).
# FUZZ_SECONDS per target (default 60). Measured on the 2-core VM: the build takes 1.3 min of CPU
# (5 min of wall time while other builds ran), then each target runs FUZZ_SECONDS; at 20 s about
# 270,000 inputs for fuzz-json, 100,000 for fuzz-envelope, 1,700 scripts for fuzz-bridge.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := json envelope bridge
FUZZ_DIR := .build-fuzz
FUZZ_SOURCES := $(shell find Sources/BridgeProtocol Fuzz/Sources -name '*.swift' | LC_ALL=C sort)
SWIFTC ?= swiftc

$(FUZZ_DIR)/bridged-fuzz: $(FUZZ_SOURCES)
	@mkdir -p $(FUZZ_DIR)
	$(SWIFTC) -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -module-name BridgedFuzz \
		$(FUZZ_SOURCES) -o $@

fuzz-build: $(FUZZ_DIR)/bridged-fuzz
	@for t in $(FUZZ_TARGETS); do ln -sf bridged-fuzz $(FUZZ_DIR)/fuzz-$$t; done

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/artifacts $(FUZZ_DIR)/logs; \
	  echo "fuzz-$$t: $(FUZZ_SECONDS) s (log: $(FUZZ_DIR)/logs/$$t.log)"; \
	  if SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=Fuzz/lsan.supp $(FUZZ_DIR)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	      -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- \
	      $(FUZZ_DIR)/corpus/$$t Fuzz/corpus/$$t > $(FUZZ_DIR)/logs/$$t.log 2>&1; then \
	    grep -E '^Done|DONE' $(FUZZ_DIR)/logs/$$t.log | tail -2; \
	  else \
	    tail -40 $(FUZZ_DIR)/logs/$$t.log; echo "fuzz-$$t FAILED: the input is in $(FUZZ_DIR)/artifacts/"; exit 1; \
	  fi; \
	done

# ---------------------------------------------------------------------------------------------
# Sanitizers, each with its own scratch path (so the normal .build is untouched):
#   test-asan  every Swift test under AddressSanitizer, then an integration smoke run (protocol,
#              transport and command-line tests) against a daemon built with ASan
#   test-tsan  the transport's and the daemon's tests (BridgeServerTests: the service thread, the
#              remote, timers, real sockets) under ThreadSanitizer, then the transport's
#              integration tests against a daemon built with TSan
# A report fails the run (halt_on_error). Measured on the 2-core VM under load from other builds
# (wall time, CPU time in brackets): test-asan's build 16 min [4 min], its Swift tests 1.6 min,
# its smoke run 1.3 min (49 tests; 2.3 min at load average 20); test-tsan's build about 15 min (load average 20), its Swift
# tests 8 s (68 tests), its integration run 30 s (32 tests).
ASAN_SCRATCH := .build-asan
TSAN_SCRATCH := .build-tsan
ASAN_SMOKE ?= Tests/integration/test_protocol.py Tests/integration/test_transport.py Tests/integration/test_cli.py
TSAN_SMOKE ?= Tests/integration/test_transport.py
# The daemons the integration tests start write their reports to files (their stderr goes to
# temporary files nobody reads, and most tests never look at how a daemon exited): any file
# there fails the run, and is printed. ASan's `exitcode` is set to 23 (TSan's default is 66), so
# a daemon stopped by a report is told apart from one that exited 1 by itself.
ASAN_REPORTS := $(ASAN_SCRATCH)/reports
TSAN_REPORTS := $(TSAN_SCRATCH)/reports
SANITIZER_ENV := SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 TSAN_OPTIONS=halt_on_error=1
# The ASan daemon of the smoke run (test-asan builds it; `make test-asan-smoke ASAN_BIN=…` runs
# the smoke run alone, against another binary).
ASAN_BIN ?= $(CURDIR)/$(ASAN_SCRATCH)/debug/bridged

test-asan: deps-test
	$(SWIFT) build --build-tests --sanitize=address --scratch-path $(ASAN_SCRATCH)
	$(SANITIZER_ENV) $(SWIFT) test --skip-build --sanitize=address --scratch-path $(ASAN_SCRATCH)
	$(SWIFT) build --product bridged --sanitize=address --scratch-path $(ASAN_SCRATCH)
	$(MAKE) test-asan-smoke

test-asan-smoke:
	rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	$(SANITIZER_ENV) ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:exitcode=23:log_path=$(CURDIR)/$(ASAN_REPORTS)/asan \
	  BRIDGED_BIN=$(ASAN_BIN) $(PYTHON) -m pytest -q $(ASAN_SMOKE); \
	  status=$$?; \
	  if [ -n "$$(ls -A $(ASAN_REPORTS))" ]; then cat $(ASAN_REPORTS)/*; echo "test-asan: AddressSanitizer reports from the daemon (above)" >&2; exit 1; fi; \
	  exit $$status

test-tsan: deps-test
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path $(TSAN_SCRATCH)
	$(SANITIZER_ENV) $(SWIFT) test --skip-build --sanitize=thread --scratch-path $(TSAN_SCRATCH) --filter BridgeServerTests
	$(SWIFT) build --product bridged --sanitize=thread --scratch-path $(TSAN_SCRATCH)
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	$(SANITIZER_ENV) TSAN_OPTIONS=halt_on_error=1:log_path=$(CURDIR)/$(TSAN_REPORTS)/tsan \
	  BRIDGED_BIN=$(CURDIR)/$(TSAN_SCRATCH)/debug/bridged $(PYTHON) -m pytest -q $(TSAN_SMOKE); \
	  status=$$?; \
	  if [ -n "$$(ls -A $(TSAN_REPORTS))" ]; then cat $(TSAN_REPORTS)/*; echo "test-tsan: ThreadSanitizer reports from the daemon (above)" >&2; exit 1; fi; \
	  exit $$status

clean:
	rm -rf .build .build-asan .build-tsan .build-fuzz .build-deb dist Benchmarks/.build
