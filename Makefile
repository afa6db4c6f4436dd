# Order Guard - every target bootstraps .venv (CPython 3.13 + requirements-dev.txt) first.
# A fresh machine needs only CPython 3.13 (on PATH as python3.13, or under pyenv), make,
# and access to PyPI.

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed-$(shell cat requirements-dev.txt src/requirements.txt | cksum | cut -d' ' -f1)
RUNTIMES_STAMP := $(VENV)/.runtimes-$(shell cat requirements-runtime.txt | cksum | cut -d' ' -f1)
VIEW_STAMP := node_modules/.installed-$(shell cat package-lock.json | cksum | cut -d' ' -f1)
SCAN_VENV := .venv-scan
SCAN_BIN := $(abspath $(SCAN_VENV))/bin
SCAN_STAMP := $(SCAN_VENV)/.installed-$(shell cat requirements-scan.txt | cksum | cut -d' ' -f1)
AWSCLI_VENV := .venv-awscli
AWSCLI_STAMP := $(AWSCLI_VENV)/.installed-$(shell cat requirements-awscli.txt | cksum | cut -d' ' -f1)

# The interpreter that builds .venv: python3.13 if it runs, else pyenv's 3.13.x (found
# through pyenv, or in pyenv's folder when pyenv itself is not on PATH).
PYTHON313 ?= $(shell python3.13 -c 'import sys; print(sys.executable)' 2>/dev/null \
	|| PYENV_VERSION=3.13 pyenv which python 2>/dev/null \
	|| ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.13*/bin/python3.13 2>/dev/null | tail -n 1)

# The venv's bin/ first on PATH puts python3.13 there, which `sam build` checks for.
export PATH := $(BIN):$(PATH)
export AWS_DEFAULT_REGION ?= us-east-1
export SAM_CLI_TELEMETRY := 0

.PHONY: help setup wheel wheel-env wheelhouse bytecode inventory durations durations-commit check-localcloud browser bench-env bench-cold lab-tools lab lab-env lab-check lab-texts lab-replay model histories check test lint scan audit build demo serve status invoke verify soak attribution bench deploy deploy-prod samples samples-folder clean lock

# The first-run set-ups (.venv, .venv-awscli, .venv-scan, node_modules) are safe to start
# twice at once, as `make lab` in one terminal and `eval "$(make -s lab-env)"` in another
# do: each recipe is one shell line beginning with $(call locked,DIR), which holds flock on
# DIR.lock (beside DIR) until the recipe ends. A make that finds the lock held says so on
# stderr and waits; once it holds the lock, it ends the recipe there, successfully, if the
# other make has built the target meanwhile (the target exists and no prerequisite is
# newer, as make itself judges), and otherwise builds it, stopping at the first failure.
locked = command -v flock >/dev/null || { echo "flock not found: install util-linux (Debian: apt-get install util-linux)" >&2; exit 1; }; \
	exec 9>$(1).lock; \
	flock --nonblock 9 || { echo "$(1) is being set up by another make ($(1).lock is held): waiting for it" >&2; flock 9; }; \
	if [ -e $@ ] && [ -z "$$(find $^ -newer $@)" ]; then exit 0; fi; \
	set -e

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup: $(STAMP) $(RUNTIMES_STAMP) $(VIEW_STAMP) ## create .venv (pinned requirements), Lambda's other Python runtimes, node_modules (the live view's htmx)

$(STAMP): requirements-dev.txt src/requirements.txt
	@$(call locked,$(VENV)); \
	test -n "$(PYTHON313)" || { echo "CPython 3.13 not found: install it (pyenv install 3.13) or put python3.13 on PATH" >&2; exit 1; }; \
	test -x $(BIN)/python3.13 || $(PYTHON313) -m venv $(VENV); \
	echo "$(VENV): pip install -r requirements-dev.txt"; \
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt; \
	$(BIN)/python -m pip check; \
	rm -f $(VENV)/.installed-* && touch $@

# Lambda's other Python runtimes: awslambdaric (requirements-runtime.txt) for each CPython
# 3.10, 3.11, 3.12 and 3.14 the machine has (pyenv's, else on PATH), in
# .venv/lambda-runtimes/python3.X, so that a python3.X function runs under its own version;
# one the machine lacks runs under 3.13, with a warning from the local cloud.
$(RUNTIMES_STAMP): requirements-runtime.txt $(STAMP)
	@$(call locked,$(VENV)); \
	for v in 3.10 3.11 3.12 3.14; do \
	  py=$$(PYENV_VERSION=$$v pyenv which python 2>/dev/null \
	    || ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v.*/bin/python$$v 2>/dev/null | tail -n 1 \
	    || true); \
	  [ -n "$$py" ] || py=$$(command -v python$$v || true); \
	  [ -n "$$py" ] && [ "$$($$py -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$$v" ] || continue; \
	  dir=$(VENV)/lambda-runtimes/python$$v; rm -rf $$dir; \
	  if $$py -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
	      --target $$dir/site -r requirements-runtime.txt 2>/dev/null; then \
	    echo "$$py" > $$dir/interpreter; echo "Lambda runtime python$$v: $$py"; \
	  else \
	    rm -rf $$dir; echo "python$$v ($$py) has no pip: python$$v functions run under 3.13" >&2; \
	  fi; \
	done; \
	rm -f $(VENV)/.runtimes-* && touch $@

$(VIEW_STAMP): package.json package-lock.json
	@$(call locked,node_modules); \
	command -v npm >/dev/null || { echo "npm not found: install Node.js 20+ with npm (Debian: apt-get install nodejs npm)" >&2; exit 1; }; \
	echo "node_modules: npm ci"; \
	npm ci --no-audit --no-fund --loglevel=error; \
	rm -f node_modules/.installed-* && touch $@

# apt-get that waits (up to 10 minutes) for another apt or dpkg to let go of its locks
# instead of failing at once: DPkg::Lock::Timeout covers dpkg's lock, but `apt-get update`
# never waits for the package lists' lock, so it is retried while that lock is held.
APT_INSTALL = for try in $$(seq 60); do \
	  out=$$(apt-get update -qq 2>&1) && break; \
	  echo "$$out" | grep -q "Could not get lock" || { echo "$$out" >&2; exit 1; }; \
	  echo "apt-get update: another apt holds the package lists' lock; waiting" >&2; sleep 10; \
	done; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq

# The browser tests drive Debian's chromium: installed here when missing (as root), or
# the one line that says what to install. They never skip.
CHROMIUM ?= $(shell command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null)
browser:
	@if [ -z "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(APT_INSTALL) chromium >/dev/null; \
	  else echo "chromium not found: install Debian's chromium (sudo apt-get install chromium) for the browser tests" >&2; exit 1; fi; \
	fi

# The seed labs' shell: the stock AWS CLI v1 (pinned, in .venv-awscli: it pins its own
# botocore), and Debian's jq and zip, installed when missing (as root), or the one line
# that says what to install.
$(AWSCLI_STAMP): requirements-awscli.txt
	@$(call locked,$(AWSCLI_VENV)); \
	test -n "$(PYTHON313)" || { echo "CPython 3.13 not found" >&2; exit 1; }; \
	test -x $(AWSCLI_VENV)/bin/python3.13 || $(PYTHON313) -m venv $(AWSCLI_VENV); \
	echo "$(AWSCLI_VENV): pip install -r requirements-awscli.txt"; \
	$(AWSCLI_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-awscli.txt; \
	rm -f $(AWSCLI_VENV)/.installed-* && touch $@

lab-tools: $(AWSCLI_STAMP)
	@if ! command -v jq >/dev/null || ! command -v zip >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(APT_INSTALL) jq zip >/dev/null; \
	  else echo "jq or zip not found: install Debian's jq and zip (sudo apt-get install jq zip) for the labs" >&2; exit 1; fi; \
	fi

model: $(STAMP) ## SPIN model check: the queue and workflow protocols hold, each mutant is caught (needs spin, cc)
	@if ! command -v spin >/dev/null || ! command -v cc >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(APT_INSTALL) spin gcc >/dev/null; \
	  else echo "spin or cc not found: install Debian's spin and gcc (sudo apt-get install spin gcc) for the model check" >&2; exit 1; fi; \
	fi
	python -m model.check

$(SCAN_STAMP): requirements-scan.txt
	@$(call locked,$(SCAN_VENV)); \
	test -n "$(PYTHON313)" || { echo "CPython 3.13 not found" >&2; exit 1; }; \
	test -x $(SCAN_BIN)/python3.13 || $(PYTHON313) -m venv $(SCAN_VENV); \
	echo "$(SCAN_VENV): pip install -r requirements-scan.txt"; \
	$(SCAN_BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-scan.txt; \
	$(SCAN_BIN)/python -m pip check; \
	rm -f $(SCAN_VENV)/.installed-* && touch $@

scan: $(SCAN_STAMP) ## checkov on template.yaml (0 failed checks), bandit on src/
	$(SCAN_BIN)/checkov --file template.yaml --framework cloudformation --compact --quiet --skip-download
	$(SCAN_BIN)/bandit --quiet --recursive src

audit: $(SCAN_STAMP) ## pip-audit of the runtime requirements (needs PyPI's JSON API)
	$(SCAN_BIN)/pip-audit --strict --progress-spinner off --requirement src/requirements.txt

lint: $(STAMP) ## ruff, mypy, lint-imports (the three parts' directions), cfn-lint, sam validate --lint (the Python tools alone: no npm)
	ruff check src localcloud order_guard_tools tests model
	ruff format --check src localcloud order_guard_tools tests model
	mypy
	PYTHONPATH=src:. lint-imports --no-cache
	cfn-lint template.yaml
	sam validate --lint

build: setup ## sam build (no container: pure-Python dependencies only)
	sam build

# The test suite's files run on every core (pytest-xdist; JOBS=0 runs them in this one process).
JOBS ?= auto

# The functions' pinned dependencies for Lambda's platform (src/Makefile's `download`),
# fetched once per src/requirements.txt: tests/template/test_build.py installs them from
# here with no index, so `make check` runs with the network off.
WHEELHOUSE := $(VENV)/wheelhouse
WHEELHOUSE_STAMP := $(WHEELHOUSE)/.requirements-$(shell sha256sum src/requirements.txt | cut -c1-16)
$(WHEELHOUSE_STAMP): src/requirements.txt $(STAMP)
	@$(call locked,$(WHEELHOUSE)); \
	rm -rf $(WHEELHOUSE); \
	make --no-print-directory -s -C src download PYTHON=$(BIN)/python WHEELHOUSE=$(abspath $(WHEELHOUSE)); \
	touch $@

wheelhouse: $(WHEELHOUSE_STAMP)

# The checkout's own Python compiled once, as pip compiles what it installs. Where the
# environment sets PYTHONDONTWRITEBYTECODE (these machines do), no process writes a .pyc,
# and each of the suite's processes that imports the local cloud from the checkout (every
# worker, every `python -m order_guard_tools` or `localcloud` it starts) compiled it again:
# `import localcloud.account, order_guard_tools.cli` took 8.4 s of CPU, 2.8 s compiled.
# The fixture apps are left as written (tests compare their folders).
bytecode: $(STAMP)
	python -m compileall -q -j 0 -x '/fixtures/' localcloud order_guard_tools tests src/order_guard model

check: lint wheelhouse bytecode ## the fast loop: lint, then the application's unit and template tests (no npm, no browser, no local cloud, no network once set up)
	pytest -m "unit or template" -n $(JOBS)

check-localcloud: $(STAMP) $(VIEW_STAMP) ## the local cloud's quick loop: its own suite (localcloud/tests) but the slow modules, from the checkout (no browser, no sam build, no lint)
	pytest localcloud/tests -m "not slow" -n $(JOBS) --dist loadfile

# make test's workers: twice as many as the machine has cores, unless JOBS is given. Its
# tests wait much of their time on servers, the SAM CLI, function processes and a browser:
# on 2 cores (pytest tests -n N --dist loadfile, one run after the other), 3 workers took
# 301 s, 4 took 270 s, 5 took 261 s; each worker more collects the whole suite again (7 s
# of CPU) and loads the machine more for the tests that time their servers.
TEST_JOBS ?= $(if $(filter-out auto,$(JOBS)),$(JOBS),$(shell echo $$(( $$(nproc) * 2 ))))

test: lint scan build browser lab-tools model wheel wheelhouse bytecode ## everything CI runs: lint, scanners, sam build, the model check, the local cloud's wheel, then the whole test suite in one pool (the local cloud's own suite from that wheel: tests/package)
	pytest tests -n $(TEST_JOBS) --dist loadfile

# The local cloud's wheel, built from packaging/localcloud and installed alone (with its
# `test` extra, constrained by the development lock) in a virtual environment outside the
# repository: WHEEL_ENV, one per checkout. Rebuilt when a file it is built from changes or
# goes (the stamp's name holds the list of those files). tests/package runs the local
# cloud's own suite from it, in the same pool as every other test
# (tests/package/test_wheel_suite.py); a test finds it out of date (make -q) and says so,
# never rebuilds it under the other tests. `make wheel-env` prints its folder and stamp.
WHEEL_ENV ?= $(or $(TMPDIR),/tmp)/order-guard-localcloud-$(shell printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)
WHEEL_SOURCES := $(shell find localcloud packaging/localcloud -type f -not -path '*/__pycache__/*' -not -path '*/.aws-sam/*' -not -name '*.pyc' 2>/dev/null | LC_ALL=C sort) LICENSE
WHEEL_STAMP := $(WHEEL_ENV)/.installed-$(shell printf '%s\n' $(WHEEL_SOURCES) | cksum | cut -d' ' -f1)
$(WHEEL_STAMP): $(WHEEL_SOURCES) requirements-dev.txt $(STAMP) $(VIEW_STAMP)
	@mkdir -p $(WHEEL_ENV); $(call locked,$(WHEEL_ENV)/build); \
	echo "$(WHEEL_ENV): the local cloud's wheel, installed alone"; \
	rm -rf $(WHEEL_ENV)/dist $(WHEEL_ENV)/venv $(WHEEL_ENV)/.installed-*; \
	$(BIN)/python -m pip wheel --no-deps --quiet --disable-pip-version-check -w $(WHEEL_ENV)/dist packaging/localcloud; \
	$(PYTHON313) -m venv $(WHEEL_ENV)/venv; \
	$(BIN)/python -m pip --python $(WHEEL_ENV)/venv/bin/python install --quiet --disable-pip-version-check --no-compile \
	  -c requirements-dev.txt "localcloud[test] @ $$(ls $(WHEEL_ENV)/dist/localcloud-*.whl | sed 's|^|file://|')"; \
	$(BIN)/python -m pip --python $(WHEEL_ENV)/venv/bin/python check; \
	touch $@

wheel-env:
	@echo $(WHEEL_ENV); echo $(WHEEL_STAMP)

wheel: $(WHEEL_STAMP) ## the local cloud's wheel, installed alone in a virtual environment outside the repository (prints its folder)
	@echo $(WHEEL_ENV)

durations: ## the slowest test files of the last runs and their change since the run before (written by every pytest run of tests/) [COUNT=15]
	python -m tests.support.durations $(COUNT)

inventory: $(STAMP) ## how many tests tests/ and localcloud/tests collect, and how many carry each marker (nothing is run)
	python -m tests.support.inventory

durations-commit: ## copy the last runs' per-file seconds to tests/durations.json, which balances a fresh clone's pool
	python -m tests.support.durations --commit

# Parameters as `sam deploy` takes them, for demo, serve, invoke and verify:
#   CONFIG_ENV=prod                       samconfig.toml environment (default: default)
#   PARAMETER_OVERRIDES="BatchSize=1 …"   replaces samconfig's parameter_overrides
PARAMETERS = $(if $(CONFIG_ENV),--config-env $(CONFIG_ENV)) $(if $(PARAMETER_OVERRIDES),--parameter-overrides $(PARAMETER_OVERRIDES))

demo: $(STAMP) ## the whole system on the embedded local cloud (no AWS account, no Docker)
	python -m order_guard_tools demo $(PARAMETERS)

# Who the server answers besides 127.0.0.1 and localhost: ALLOW_HOST="name …" (HOST=0.0.0.0,
# the container setup, adds host.docker.internal) and ALLOW_ORIGIN="http://localhost:3000 …".
ALLOW_HOST ?= $(if $(filter 0.0.0.0,$(HOST)),host.docker.internal)
serve: setup ## the application on 127.0.0.1:5000 for the AWS CLI (PORT=5001 if busy; HOST=0.0.0.0 for containers; Ctrl-C stops)
	python -m order_guard_tools serve --port $(or $(PORT),5000) $(if $(HOST),--host $(HOST)) $(foreach h,$(ALLOW_HOST),--allow-host $(h)) $(foreach o,$(ALLOW_ORIGIN),--allow-origin $(o)) $(if $(VISIBILITY_TIMEOUT),--visibility-timeout $(VISIBILITY_TIMEOUT)) $(PARAMETERS)

status: $(STAMP) ## the live view's tables once, from a running make serve [ENDPOINT=url]
	python -m order_guard_tools status $(if $(ENDPOINT),--endpoint-url $(ENDPOINT))

invoke: $(STAMP) ## make invoke FUNCTION=QueueWorkerFunction EVENT=events/sqs-first-order.json [ENDPOINT=url]
	python -m order_guard_tools invoke $(FUNCTION) $(foreach e,$(EVENT),-e $(e)) $(if $(ENDPOINT),--endpoint-url $(ENDPOINT)) $(PARAMETERS)

verify: $(STAMP) ## make verify [STACK=order-guard] [REGION=…] [ENDPOINT=http://127.0.0.1:5000]
	python -m order_guard_tools verify $(if $(STACK),--stack-name $(STACK)) $(if $(REGION),--region $(REGION)) $(if $(ENDPOINT),--endpoint-url $(ENDPOINT)) $(PARAMETERS)

soak: $(STAMP) ## 5,000 messages through the local cloud, every one accounted for (SOAK_MESSAGES=N)
	python -m order_guard_tools soak --messages $(or $(SOAK_MESSAGES),5000)

histories: $(STAMP) ## the nightly size of the generated histories against the real worker (HISTORIES=2000)
	ORDER_GUARD_HISTORIES=$(or $(HISTORIES),2000) pytest tests/proofs/test_histories.py --hypothesis-show-statistics

attribution: setup ## 8 concurrent clients × 15 batches of 10 (1,200 orders): every RESULT line in the log group and the view once (ATTRIBUTION_BATCHES=15)
	ORDER_GUARD_ATTRIBUTION_BATCHES=$(or $(ATTRIBUTION_BATCHES),15) pytest tests/e2e/test_log_attribution.py -k concurrent

bench: build ## Order Guard against the floor, Powertools and read-then-write, and the cold start (BENCH_MESSAGES=2000 BENCH_ROUNDS=5 BENCH_REPEATS=15)
	PYTHONPATH=src:. python -m order_guard_tools bench --messages $(or $(BENCH_MESSAGES),2000) --rounds $(or $(BENCH_ROUNDS),5) --repeats $(or $(BENCH_REPEATS),15)

# The seed labs (../shared/labs/): LAB=q05 or LAB=ev05 on 127.0.0.1:5000 (PORT= to change).
# The labs' own text is not in the repository: LAB_TEXTS names the folder that holds it
# (q05.zh.txt, ev05.zh.txt). make lab reads it for the port the lab's code calls (Q05's
# worker calls 127.0.0.1:5000 itself) and refuses another PORT unless ANY_PORT=1 (you
# edited that line); make lab-replay checks it is there before anything is installed.
LAB_TEXTS ?= ../shared/labs
LAB_TEXT_FILES := q05.zh.txt ev05.zh.txt
lab: setup lab-tools ## a seed lab's machine with its AWS View: make lab LAB=q05|ev05 [PORT=5000] [ANY_PORT=1] (Ctrl-C stops)
	@test -n "$(LAB)" || { echo "which lab? make lab LAB=q05 or make lab LAB=ev05" >&2; exit 2; }
	python -m order_guard_tools lab $(LAB) --port $(or $(PORT),5000) $(if $(ANY_PORT),--any-port) --lab-texts "$(abspath $(LAB_TEXTS))"

# It first builds .venv and the lab's tools (.venv-awscli, jq, zip), or waits for another
# make building them; all that reports on stderr: stdout is only the lines for eval.
lab-env: ## for eval "$$(make -s lab-env)": the lab's aws, region, credentials [PORT=5000: another once its lab runs]
	@$(MAKE) --no-print-directory -s $(STAMP) lab-tools >&2
	@python -m order_guard_tools lab-env --port $(or $(PORT),5000)

lab-check: setup ## the running make lab's named checks, each ✓, ✗ or not yet [PORT=5000]
	@python -m order_guard_tools lab-check --port $(or $(PORT),5000) --lab-texts "$(abspath $(LAB_TEXTS))" || true  # the command itself exits 1 until every check holds

lab-texts:
	@for f in $(LAB_TEXT_FILES); do test -f "$(LAB_TEXTS)/$$f" || { \
	  echo "make lab-replay: no $$f in LAB_TEXTS=$(LAB_TEXTS) ($(abspath $(LAB_TEXTS))): the labs' text is kept outside the repository; point LAB_TEXTS at the folder holding $(LAB_TEXT_FILES), e.g. make lab-replay LAB_TEXTS=/path/to/labs" >&2; exit 2; }; done

lab-replay: lab-texts setup lab-tools ## both labs' commands on port 5000 with the labs' own workers from LAB_TEXTS (../shared/labs)
	LOCALCLOUD_LAB_PORT=5000 LOCALCLOUD_LAB_TEXTS=$(abspath $(LAB_TEXTS)) pytest tests/e2e/test_labs.py -p no:xdist -k "as_written"

bench-env: $(STAMP) ## the local cloud's cold start of an execution environment against a bare interpreter start (BENCH_ROUNDS=15)
	python -m order_guard_tools bench-env --rounds $(or $(BENCH_ROUNDS),15)

bench-cold: build ## only the cold-start table: each function's INIT against a bare boto3 handler (BENCH_REPEATS=15)
	PYTHONPATH=src:. python -m order_guard_tools bench --cold-start-only --repeats $(or $(BENCH_REPEATS),15)

# Other people's SAM applications on the local cloud: every folder of SAMPLES holding a
# template.yaml, each built, deployed with the stock SAM CLI to a fresh local account, and
# judged by its own tests/integration (python -m localcloud test-app; docs/local-cloud.md).
# SAMPLE_ARGS passes options on: SAMPLE_ARGS="--stack-name trader-b --region eu-west-1".
samples-folder:
	@test -n "$(SAMPLES)" || { echo "which folder? make samples SAMPLES=../shared/sam-samples (a folder of SAM applications)" >&2; exit 2; }
	@test -d "$(SAMPLES)" || { echo "make samples: SAMPLES=$(SAMPLES) is not a folder ($(abspath $(SAMPLES)) does not exist)" >&2; exit 2; }
	@test -n "$(wildcard $(SAMPLES)/*/template.yaml $(SAMPLES)/*/template.yml)" || { echo "make samples: no SAM application in SAMPLES=$(SAMPLES) (no */template.yaml)" >&2; exit 2; }

samples: samples-folder setup ## make samples SAMPLES=../shared/sam-samples [SAMPLE_ARGS="--region eu-west-1"]: each SAM app there deployed locally and run against its own integration tests
	python -m localcloud test-app $(SAMPLE_ARGS) $(sort $(dir $(wildcard $(SAMPLES)/*/template.yaml $(SAMPLES)/*/template.yml)))

deploy: build ## sam deploy to the default environment (fault modes on)
	sam deploy

deploy-prod: build ## sam deploy --config-env prod (fault modes off, deletion protection on)
	sam deploy --config-env prod

lock: ## regenerate requirements-dev.txt from requirements-dev.in
	rm -rf .venv-lock && $(PYTHON313) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet -r requirements-dev.in
	( echo "# Locked from requirements-dev.in with CPython 3.13 (make lock). Do not edit by hand."; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable ) > requirements-dev.txt
	rm -rf .venv-lock

clean: ## remove build output and caches (keeps .venv)
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
