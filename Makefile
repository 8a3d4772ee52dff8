# Two commands matter: `make demo` (grade a sample class end to end) and `make test`.
# Every target sets up the local virtual environment on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SUBMISSIONS ?= submitted
OUT ?= build/grading
ISOLATION ?= bwrap
export PATH := $(abspath $(BIN)):$(PATH)
export MPLBACKEND := Agg
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help setup lab check release check-release test lint demo grade export formgrader gradescope bench goldens clean

help:
	@echo "make demo     grade a sample class end to end (sets everything up)"
	@echo "make test     the whole test-suite (what CI runs)"
	@echo "make lab      students: JupyterLab on your own copy of lessons/ (my-work/, WORK=dir)"
	@echo "make check NB=lessons/<lesson>/<nb>.ipynb   students: can the grader grade it? (selfcheck)"
	@echo "make release [LESSON=id]  regenerate lessons/ (and each 评分表) from solutions/ with nbgrader"
	@echo "make grade SUBMISSIONS=dir [OUT=dir]   grade a real class (needs bubblewrap;"
	@echo "                         ISOLATION=none grades without a sandbox: see SECURITY.md)"
	@echo "make export [OUT=dir]    final CSV after review in formgrader"
	@echo "make formgrader [OUT=dir]  review written answers in nbgrader's formgrader"
	@echo "make gradescope [LESSON=id]  Gradescope autograder zips in dist/ (docs/SCALING.md)"
	@echo "make bench    speed figures (engine vs nbgrader autograde, pipelab); BEFORE=<tree>: also this tree vs an older checkout"

LABEXT := jupyter-config/labextension/autograder-selfcheck
$(STAMP): pyproject.toml jupyter-config/autograder.json $(LABEXT)/package.json $(LABEXT)/static/remoteEntry.selfcheck.js
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "Python >= 3.11 is required (found $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	# an editable install skips pyproject's data-files: enable the Validate → selfcheck server extension here
	install -D -m 644 jupyter-config/autograder.json $(VENV)/etc/jupyter/jupyter_server_config.d/autograder.json
	# ... and the lab extension that shows the self-check's verdict in nbgrader's Validate dialog
	install -D -m 644 $(LABEXT)/package.json $(VENV)/share/jupyter/labextensions/autograder-selfcheck/package.json
	install -D -m 644 $(LABEXT)/static/remoteEntry.selfcheck.js \
	  $(VENV)/share/jupyter/labextensions/autograder-selfcheck/static/remoteEntry.selfcheck.js
	touch $@

setup: $(STAMP)

LAB_ARGS ?=
WORK ?= my-work
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# students: a personal copy of lessons/ (gitignored; never overwritten), instructor menus and the news
# pop-up off for this launch only (jupyter-config/student; autograder/student/lab.py)
lab: $(STAMP)
	@$(PY) -m autograder.student.lab lessons "$(WORK)"
	JUPYTER_CONFIG_PATH="$(abspath jupyter-config/student)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  $(BIN)/jupyter lab --notebook-dir="$(WORK)" \
	  --ServerApp.ip=127.0.0.1 $(ROOT_FLAG) $(LAB_ARGS)

NB ?=
check: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make check NB=lessons/<lesson>/<notebook>.ipynb"; exit 2; }
	$(PY) -m autograder selfcheck "$(NB)"

# every lesson of the registry (autograder/lessons/*/rubric.yaml), or LESSON=<id> for one
LESSON ?=
release: $(STAMP)
	$(PY) -m autograder.authoring.release $(LESSON)

check-release: $(STAMP)
	$(PY) -m autograder.authoring.release --check $(LESSON)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) -m autograder demo --out build/demo

grade: $(STAMP)
	$(PY) -m autograder grade $(SUBMISSIONS) --out $(OUT) --isolation $(ISOLATION)

export: $(STAMP)
	$(PY) -m autograder export --out $(OUT)

formgrader: $(STAMP)
	$(PY) -m autograder formgrader --out $(OUT)

gradescope: $(STAMP)
	$(PY) -m autograder gradescope $(LESSON) --out dist

bench: $(STAMP)
	$(PY) -m bench
	$(if $(BEFORE),$(PY) -m bench.compare_trees $(BEFORE) $(or $(BENCH_CLASS),300))

goldens: $(STAMP)
	UPDATE_GOLDENS=1 $(PY) -m pytest -q tests/test_demo.py
	@echo "PyTorch schedule goldens need torch (not a dependency): see tools/make_goldens.py"


clean:
	rm -rf build dist .pytest_cache
