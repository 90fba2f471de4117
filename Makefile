# Two commands for a fresh Debian/Ubuntu machine (see README.md):
#   make run   -- set up, then run the main job on the bundled data
#   make test  -- set up, then run the test suite
# Set-up: a virtualenv in .venv with clalign installed (a normal, non-editable install, so the
# kernels are found as package data), and Debian's PoCL CPU driver when no OpenCL platform exists.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get
SOURCES := $(shell find clalign kernels -name '*.py' -o -name '*.mako') setup.cfg pyproject.toml
OUTDIR ?= run-output
# test processes (pytest-xdist; whole files per process, so module fixtures build once): one
# per core of the 2-core CI machine, so one works while the other waits in a compiler or numba
TEST_WORKERS ?= 2

.PHONY: run test setup opencl clean

$(VENV)/.installed: $(SOURCES)
	@$(PYTHON) -m venv $(VENV) >/dev/null 2>&1 && $(PY) -m pip --version >/dev/null 2>&1 || { \
	  echo "make: installing python3-venv (Debian)"; rm -rf $(VENV); \
	  $(APT) update -qq && $(APT) install -y -qq python3-venv python3-pip >/dev/null && \
	  $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q '.[test]'
	@touch $@

setup: opencl

opencl: $(VENV)/.installed
	@$(PY) -c "import pyopencl as cl; assert cl.get_platforms()" >/dev/null 2>&1 || { \
	  echo "make: no OpenCL platform found, installing Debian's pocl-opencl-icd (CPU driver)"; \
	  $(APT) update -qq && $(APT) install -y -qq pocl-opencl-icd >/dev/null; }
	@$(PY) -c "import pyopencl as cl; assert cl.get_platforms()" || { echo "make: still no OpenCL platform"; exit 1; }

run: opencl
	$(VENV)/bin/clalign devices
	@mkdir -p $(OUTDIR)
	$(VENV)/bin/clalign makedb --force data/proteome.faa.gz $(OUTDIR)/proteome
	$(VENV)/bin/clalign sw --force -query data/queries.faa -db $(OUTDIR)/proteome -max_target_seqs 5 -out $(OUTDIR)/sw_hits.tsv
	@cat $(OUTDIR)/sw_hits.tsv
	$(VENV)/bin/clalign hmmsearch --force --tblout $(OUTDIR)/hmmsearch.tbl -o $(OUTDIR)/hmmsearch.out data/hmms.hmm data/proteome.faa.gz
	@grep -v '^#' $(OUTDIR)/hmmsearch.tbl | head -20

test: opencl
	cd tests && ../$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile .

clean:
	rm -rf $(VENV) $(OUTDIR) build *.egg-info
