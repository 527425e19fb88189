# The two commands: `make demo` and `make test`. Everything else is set up by them.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS := sample_bots/javascript
JS_STAMP := $(JS)/node_modules/.installed
CPP := sample_bots/cpp
CPP_STAMP := $(CPP)/build/.installed

.PHONY: install test lint demo bench soak sdk-check proto clean system-run system-test

# Python caches what it compiles (__pycache__, ignored by git) even where the environment says not to: without the
# cache every interpreter compiles arena's modules again (0.1 s more for every `arena` command and bot start) and
# pytest rewrites every test module's asserts in every worker (6 s of CPU each)
unexport PYTHONDONTWRITEBYTECODE

# $(call need,COMMAND,DEBIAN-PACKAGE): install the package with apt-get when COMMAND is missing and we are root;
# otherwise say exactly what to install and stop.
define need
	@if ! command -v $(1) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing the Debian package $(2) (for $(1))"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	  else \
	    echo "$(1) is missing: install the package $(2) (Debian/Ubuntu: sudo apt-get install -y $(2))" >&2; exit 1; \
	  fi; \
	fi
endef

# What running bots needs: bubblewrap, the sandbox every local bot runs in.
system-run:
	$(call need,bwrap,bubblewrap)

# What the tests need beyond that: Chromium for the published site's browser tests.
system-test: system-run
	$(call need,chromium,chromium)

# The bots' SDK first (proto/python, with the hand evaluator's C core): arena depends on it. gRPC's C++ library
# first too (the C++ bot's install_deps.sh): the referee's C++ bot server is built against it.
$(STAMP): pyproject.toml proto/python/pyproject.toml proto/python/arena_sdk/_eval.c arena/engine/_core.cpp arena/engine/core_api.h arena/deals/_deck.c arena/transport/_native_server.cpp
	$(CPP)/install_deps.sh
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e proto/python
	$(BIN)/pip install --quiet -e '.[dev,ray,pettingzoo,mcp]'
	touch $(STAMP)

$(JS_STAMP): $(JS)/package.json $(JS)/package-lock.json
	cd $(JS) && npm ci --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

# The C++ bot: install_deps.sh apt-gets its build tools when missing (as root), then CMake builds it.
$(CPP_STAMP): $(CPP)/CMakeLists.txt $(wildcard $(CPP)/*.cpp $(CPP)/*.hpp) $(wildcard proto/arena/v1/*.proto)
	$(CPP)/install_deps.sh
	cmake -S $(CPP) -B $(CPP)/build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(CPP)/build --parallel "$$(nproc 2>/dev/null || echo 2)"
	touch $(CPP_STAMP)

install: system-run $(STAMP) $(JS_STAMP) $(CPP_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check arena proto/python tests sample_bots/python
	$(BIN)/mypy

# A fresh checkout's first run compiles everything once, in one process, before the workers start: otherwise each of
# the four workers rewrites every test module's asserts and the first `arena` commands each compile arena's modules
# (a clean clone's suite took 302 s, 270 s run again; compileall skips what is compiled already)
test: install system-test lint
	cd $(JS) && npm test --silent
	$(BIN)/python -m compileall -q arena proto/python/arena_sdk sample_bots/python
	@ls tests/__pycache__/conftest.*-pytest-*.pyc >/dev/null 2>&1 || $(BIN)/pytest --collect-only -q -n 0 >/dev/null
	$(BIN)/pytest

demo: install
	$(BIN)/arena demo

bench: install
	$(BIN)/python -m tests.bench

# The randomized tests with ten times the hands and examples `make test` plays (tests/soak.py).
soak: install
	ARENA_SOAK=10 $(BIN)/pytest tests/engine tests/adapters/test_openspiel_oracle.py

# The bots' SDK installed into a fresh venv as a bot author would: none of the referee's dependencies come with it.
sdk-check: $(STAMP)
	$(BIN)/python -m tests.bench.bench_sdk install

proto: $(STAMP)
	$(BIN)/python -m arena.transport.build_proto

clean:
	rm -rf $(VENV) build *.egg-info proto/python/build proto/python/*.egg-info proto/python/arena_sdk/*.so arena/engine/*.so arena/deals/*.so $(JS)/node_modules $(CPP)/build
