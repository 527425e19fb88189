# The two commands: `make demo` and `make test`. Everything else is set up by them.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JS := sample_bots/javascript
JS_STAMP := $(JS)/node_modules/.installed
CPP := sample_bots/cpp
CPP_STAMP := $(CPP)/build/.installed

.PHONY: install test lint demo bench proto clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
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

install: $(STAMP) $(JS_STAMP) $(CPP_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check arena tests sample_bots/python
	$(BIN)/mypy

test: install lint
	cd $(JS) && npm test --silent
	$(BIN)/pytest

demo: install
	$(BIN)/arena demo

bench: install
	$(BIN)/python -m tests.bench

proto: $(STAMP)
	$(BIN)/python -m arena.transport.build_proto

clean:
	rm -rf $(VENV) build *.egg-info $(JS)/node_modules $(CPP)/build
