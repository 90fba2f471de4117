"""Shared, generic fixtures (no OpenCL here; engines keep their own fixtures in their tests)."""
import gzip as _gzip
import os
import shutil
import tempfile

import pytest

# Hermetic runs: what clalign remembers per machine (program binaries, the SW kernels' measured
# rates, the hmmsearch engine choice) goes to a folder of this test session, so that the code
# paths taken do not depend on what earlier runs left in the user's cache. An explicit
# CLALIGN_CACHE_DIR is respected (and kept).
_SESSION_CACHE = None
if not os.environ.get("CLALIGN_CACHE_DIR"):
    _SESSION_CACHE = tempfile.mkdtemp(prefix="clalign-test-cache-")
    os.environ["CLALIGN_CACHE_DIR"] = _SESSION_CACHE


def _no_binaries_in_session_cache():
    """Program binaries are not written to this session's cache folder: on PoCL (CI) fetching a
    program's binary (CL_PROGRAM_BINARIES) compiles every kernel of it once more for a generic
    work-group size, which took about half of the kernel tests' build time (docs/perf/ci.md),
    and the session folder is thrown away at the end. PoCL's own cache still shares builds
    between the test processes. Caches the tests configure elsewhere (test_cache.py) store as
    usual; probes and measured rates still go to the session folder."""
    try:
        from clalign.runtime import cache
    except ImportError:          # no pyopencl: nothing is built
        return
    original = cache.ProgramCache.store

    def store(self, device, key, prg, meta):
        if _SESSION_CACHE and os.path.realpath(self.root) == os.path.realpath(_SESSION_CACHE):
            return False
        return original(self, device, key, prg, meta)

    cache.ProgramCache.store = store


_no_binaries_in_session_cache()


# --- balance of the two CI test processes (Makefile: -n 2 --dist loadfile) ---------------------
#: Seconds the slowest files took in a clean-clone two-process run on the loaded team VM (their
#: slowest tests summed, docs/perf/ci.md). Whole files go to a
#: test process in collection order; starting with the longest ones (largest first) keeps one
#: long file from starting last while the other process idles. Files not listed follow in
#: their usual order; a stale figure only costs balance, never a test.
FILE_SECONDS = {"test_sw_kernels.py": 600, "test_hmm_kernels.py": 420, "test_sw_vector.py": 400,
                "test_blastp_seg_fast.py": 300, "test_blastn_search.py": 120, "test_blast_traceback.py": 90,
                "test_tune.py": 60, "test_blast_device.py": 50}


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):   # xdist's own order: most tests first
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session, config, items):
    def weight(item):
        return -FILE_SECONDS.get(os.path.basename(str(item.fspath)), 0)

    items.sort(key=weight)         # stable: tests keep their order inside a file


def pytest_sessionfinish(session, exitstatus):
    if _SESSION_CACHE:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "data")
#: The 20 CUDASW++ benchmark queries (144-5478 aa), bundled with their provenance (data/cudasw/README.md).
CUDASW = os.path.join(REPO, "tests", "data", "cudasw", "cudasw_queries.fasta")


@pytest.fixture
def write_file(tmp_path):
    """write_file(name, text_or_bytes, gzip=False) -> path of a new file under tmp_path."""

    def _write(name, content, gzip=False):
        raw = content.encode("utf-8") if isinstance(content, str) else content
        path = tmp_path / name
        if gzip:
            raw = _gzip.compress(raw)
        path.write_bytes(raw)
        return str(path)

    return _write


@pytest.fixture
def data_dir():
    """The repository's bundled data folder (data/)."""
    return DATA


@pytest.fixture
def cudasw_fasta():
    """Path of the 20 CUDASW++ benchmark queries (bundled: tests/data/cudasw/)."""
    return CUDASW


# --- devices: the same kernel tests on every OpenCL device (pyopencl's style) -----------------
def test_devices():
    """'P:D' of the devices the kernel tests run on: ``CLALIGN_TEST_DEVICES`` (comma-separated
    P:D as `clalign devices` prints them), default every device found. Read at collection."""
    try:
        from clalign.runtime.device import all_devices, parse_spec
    except ImportError:          # no pyopencl: the kernel test modules skip themselves
        return ["default"]
    spec = os.environ.get("CLALIGN_TEST_DEVICES", "").strip()
    try:
        table = all_devices()
    except Exception:            # no platform: the device tests report the runtime's own error
        return ["default"]
    if spec and spec.lower() != "all":
        chosen = parse_spec(spec, "CLALIGN_TEST_DEVICES")      # a bad spec fails loudly
        return [f"{p}:{d}" for p, d, dev in table if any(dev == c for c in chosen)]
    return [f"{p}:{d}" for p, d, _ in table] or ["default"]


test_devices.__test__ = False    # a helper, not a test


@pytest.fixture(scope="module", params=test_devices())
def each_device(request):
    """Runs the requesting test module once per test device: sets ``CLALIGN_DEVICE`` (which
    every engine call without an explicit device= reads) for the module's tests, so kernel
    tests need no per-call edits. Module fixtures that build on a device must request it."""
    spec = request.param
    with pytest.MonkeyPatch.context() as mp:
        if spec != "default":
            mp.setenv("CLALIGN_DEVICE", spec)
        _forget_engines()
        yield spec
    _forget_engines()


def _forget_engines():
    """Engines cached for device=None belong to the previous test device."""
    import sys

    eng = sys.modules.get("clalign.sw.engine")
    if eng is not None:
        eng._ENGINES.clear()


# --- kernel variants derived from the ParamSets (pairwise coverage) -----------------------------
def pairwise(levels, valid=None, seed=0, tries=30):
    """A short list of dicts in which every pair of values of every two parameters occurs at
    least once (pairwise / 2-way coverage), each dict accepted by ``valid`` (pairs no valid dict
    can hold are dropped). ``levels``: {name: [values]}. Greedy, seeded: the same list each run."""
    import itertools
    import random

    rng = random.Random(seed)
    names = list(levels)
    ok = valid or (lambda v: True)

    def pairs_of(v):
        return {((a, repr(v[a])), (b, repr(v[b]))) for a, b in itertools.combinations(names, 2)}

    every = [dict(zip(names, combo)) for combo in itertools.product(*(levels[n] for n in names))]
    every = [v for v in every if ok(v)]
    uncovered = set().union(*(pairs_of(v) for v in every)) if every else set()
    out = []
    while uncovered:
        target = min(uncovered)          # sorted choices: the same list in every process
        holders = [v for v in every if target in pairs_of(v)]
        cands = holders[:tries] + rng.sample(holders, min(len(holders), tries))
        best = max(cands, key=lambda v: len(pairs_of(v) & uncovered))
        out.append(best)
        uncovered -= pairs_of(best)
    return out


def variants(paramset, picks, valid=None, seed=0):
    """Pairwise-covering template values for ``paramset``: ``picks`` {name: values or None};
    None takes every value the parameter declares (choices, int value sets), explicit values
    must pass the parameter's own range check (so the list follows the declaration)."""
    params = {p.name: p for p in paramset.all()}
    levels = {}
    for name, vals in picks.items():
        p = params[name]
        if vals is None:
            if not p.values and p.kind != "bool":
                raise ValueError(f"{paramset.family}.{name} is a range: pick values")
            vals = p.values if p.values else (False, True)
        levels[name] = [p.check(v, paramset.family) for v in vals]
    return pairwise(levels, valid, seed)
