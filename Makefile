# The two commands of the README: `make demo` and `make test`. Both set up everything they need.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.statewright-installed
NPM_DIR   := tests/npm
NPM_STAMP := $(NPM_DIR)/node_modules/.statewright-installed
# the real Claude Code CLI (pinned), which tests/host drives offline with a scripted model
HOST_DIR   := tests/host/npm
HOST_STAMP := $(HOST_DIR)/node_modules/.statewright-installed
# the real Codex, Gemini CLI and Copilot CLI (pinned), which tests/hosts drives offline
HOSTS_DIR   := tests/hosts/npm
HOSTS_STAMP := $(HOSTS_DIR)/node_modules/.statewright-installed
# Node 22 (shipped inside an npm package) with the official MCP Inspector and conformance suite
MCP_TOOLS_DIR   := tests/npm-node22
MCP_TOOLS_STAMP := $(MCP_TOOLS_DIR)/node_modules/.statewright-installed

.PHONY: demo test lint bench screenshots venv node mcp-tools chromium host-sandbox postgres clean

$(STAMP): pyproject.toml statewright/sandbox/swbox.c statewright/hook/swhook.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@# the hook starts a process per tool call: ship it byte-compiled even where the
	@# environment sets PYTHONDONTWRITEBYTECODE (stale .pyc files are rechecked by mtime)
	$(PY) -m compileall -q statewright
	@# the sandbox launcher and the native hook client (`statewright-hook-native`, into the
	@# venv's bin/, beside statewright-hook; again here when only their sources changed)
	$(PY) hatch_build.py
	touch $(STAMP)

$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

$(HOST_STAMP): $(HOST_DIR)/package.json $(HOST_DIR)/package-lock.json
	cd $(HOST_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(HOST_STAMP)

# each host ships its binary as an optional dependency: nothing downloads at install
$(HOSTS_STAMP): $(HOSTS_DIR)/package.json $(HOSTS_DIR)/package-lock.json
	cd $(HOSTS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(HOSTS_STAMP)

# --ignore-scripts: no package here needs an install script (the Inspector's postinstall
# only prepares its web client)
$(MCP_TOOLS_STAMP): $(MCP_TOOLS_DIR)/package.json $(MCP_TOOLS_DIR)/package-lock.json
	cd $(MCP_TOOLS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $(MCP_TOOLS_STAMP)

venv: $(STAMP)
node: $(NPM_STAMP) $(HOST_STAMP) $(HOSTS_STAMP)
mcp-tools: $(MCP_TOOLS_STAMP)

## make chromium: Debian's chromium for the web page's end-to-end tests (Playwright drives the
## system browser; it never downloads one)
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

## make postgres: Debian's postgresql for the shared store's tests (they start a real server
## of their own with initdb and pg_ctl in a temp dir; the package's own cluster is not used)
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql; }

## make host-sandbox: bubblewrap and socat, which Claude Code's own sandbox needs (the kernel
## tier's tests run the launcher inside it)
host-sandbox:
	@command -v bwrap >/dev/null 2>&1 && command -v socat >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq bubblewrap socat; }

## make demo: set up, then run the end-to-end demo
demo: $(STAMP) $(NPM_STAMP)
	$(PY) -m statewright.demo

## make lint: ruff (rules in pyproject.toml) and the type checker (mypy)
lint: $(STAMP)
	$(VENV)/bin/ruff check statewright tests benchmarks
	$(VENV)/bin/mypy

## make test: set up, lint, then run every test (unit, property-based, end-to-end)
test: lint $(NPM_STAMP) $(HOST_STAMP) $(HOSTS_STAMP) $(MCP_TOOLS_STAMP) chromium host-sandbox postgres
	$(PY) -m pytest -n auto --dist loadgroup -q

## make screenshots: retake docs/images/ui-*.png from the browser test (make test leaves them)
screenshots: $(STAMP) chromium
	UPDATE_SCREENSHOTS=1 $(PY) -m pytest tests/ui/test_browser.py -q

## make bench: run the benchmarks of docs/design.md section 8 and print a table of ratios
bench: $(STAMP) $(NPM_STAMP) $(HOST_STAMP) $(HOSTS_STAMP) postgres
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) $(NPM_DIR)/node_modules $(HOST_DIR)/node_modules $(HOSTS_DIR)/node_modules $(MCP_TOOLS_DIR)/node_modules .pytest_cache .hypothesis
