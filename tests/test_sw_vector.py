"""The CPU vector kernel (``kernels/sw_vector.mako``, ``KERNEL="vector"``) against the numpy Gotoh.

Subjects have lengths just around the vector widths (8, 16) and column-block multiples (COLS 1,
2, 4), the database leaves lanes of the last group empty, queries cross strip boundaries (small
STRIP overrides), and an overflow set holds scores just below and above the 16-bit bound so that
the 32-bit inter-task rescoring pass runs (``engine.last_passes``). Real sequences (bundled
proteome, CUDASW++ queries) are checked against parasail."""
import os

import numpy as np
import pytest

from clalign.data import PROTEIN, Database, get_matrix, read_fasta
from clalign.errors import ParameterError
from clalign.runtime.tuning import lookup
from clalign.sw import SWEngine, sw_scores
from clalign.sw.params import FAMILY, SWV_PARAMS
from clalign.sw.reference import sw_score
from conftest import variants

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
AA = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", dtype=np.uint8)
# These tests check the first-pass kernels: no subject goes to the intra-task kernel.
FIRST_PASS = 10 ** 9

# Pairwise coverage of the declared parameters (conftest.variants): every lane type and vector
# width, every column block, strips of a few rows (the boundary path, odd strip lengths) and one
# strip for the whole query. VEC 32 (u8 only) needs Clang vector extensions (PoCL).
def _variants():
    from clalign.runtime import Runtime

    clang = Runtime.get().caps.clang_vectors
    return variants(SWV_PARAMS, {"LANE": None, "VEC": (8, 16, 32) if clang else (8, 16), "COLS": None,
                                 "STRIP": (17, 4096), "WG": (1, 3)},
                    valid=lambda v: v["VEC"] in ((16, 32) if v["LANE"] == "u8" else (8, 16)))


pytestmark = pytest.mark.usefixtures("each_device")


def _variant(**want):
    """The first variant of the pairwise list with these values: the other tests run kernels
    that test_variant_matches_reference builds anyway (one build per kernel and process)."""
    return dict(next(v for v in _variants() if all(v[k] == x for k, x in want.items())))


def _exact_passes(ov, ref, n):
    """The pass list the overflow query must produce: all subjects at the first width, then those
    at or above each width's bound (BLOSUM62 11/1: u8 bound 255 - 4 - 11, s16 bound 32767 - 11)."""
    passes = [(8, n)] if ov.get("LANE") == "u8" else []
    passes.append((16, int((ref >= 240).sum()) if passes else n))
    passes.append((32, int((ref >= 32756).sum())))
    return passes


def _rand(rng, n):
    return AA[rng.integers(0, 20, n)].tobytes().decode()


def _ref(queries, db, matrix="BLOSUM62", go=11, ge=1):
    m = get_matrix(matrix)
    return [np.array([sw_score(PROTEIN.encode(q), db.sequence(i), m.scores, go, ge) for i in range(len(db))])
            for _, q in queries]


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(23)
    lens = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300]
    lens += [int(x) for x in rng.integers(1, 300, 22)]
    subs = [_rand(rng, n) for n in lens]
    tail = _rand(rng, 30)
    # W-W scores 11 (BLOSUM62): 2977 W score 32747 (< 32767 - 11, exact at 16 bits), 2978 W
    # 32758 (flagged, rescored), the last two above 32767.
    subs += ["W" * 2977, "W" * 2978, tail + "W" * 3000, "W" * 3100]
    subs += ["C" * 40, _rand(rng, 7)]                    # 52 subjects: the last group has empty lanes
    qlens = [1, 2, 7, 8, 9, 16, 17, 31, 33, 64, 65, 130, 257]
    queries = [(f"q{n}", _rand(rng, n)) for n in qlens]
    queries.append(("ovf", "W" * 3050))
    db = Database.from_sequences(subs)
    ref = _ref(queries, db)
    assert ref[-1].max() > 32767 and (ref[-1] == 32747).any() and (ref[-1] == 32758).any()
    return db, queries, ref


@pytest.mark.parametrize("ov", _variants(), ids=lambda v: "{LANE}-vec{VEC}-cols{COLS}-strip{STRIP}-wg{WG}".format(**v))
def test_variant_matches_reference(case, ov):
    db, queries, ref = case
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=FIRST_PASS, KERNEL="vector", **ov)
    assert eng.kernel == "vector"
    got, _ = eng.search([(qid, PROTEIN.encode(q)) for qid, q in queries], db, progress=False)
    for (qid, _), g, r in zip(queries, got, ref):
        bad = np.flatnonzero(g != r)
        assert bad.size == 0, f"{qid}: subjects {bad[:8]} got {g[bad[:8]]} want {r[bad[:8]]}"
    # the overflow query: all subjects at the first width, then exactly the ones at or above each bound
    want = _exact_passes(ov, ref[-1], len(db))
    assert eng.last_passes == want
    assert eng.last_kernels == ["vector"] * (len(want) - 1) + ["intertask"]


def test_no_rescoring_without_overflow(case):
    db, queries, ref = case
    for lane in ("s16", "u8"):
        eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=FIRST_PASS, KERNEL="vector", LANE=lane, VEC=16,
                       COLS=4, STRIP=4096, WG=1)
        got, _ = eng.search([("q", PROTEIN.encode(queries[5][1]))], db, progress=False)
        assert np.array_equal(got[0], ref[5])
        assert ref[5].max() < 240 and eng.last_passes == [(8 if lane == "u8" else 16, len(db))]


@pytest.mark.parametrize("matrix,go,ge", [("BLOSUM50", 13, 2), ("PAM30", 9, 1), ("BLOSUM62", 300, 40),
                                          ("BLOSUM90", 0, 0)])
def test_matrices_and_gaps(case, matrix, go, ge):
    db, queries, _ = case
    picks = [queries[9], queries[-1]]
    want = _ref(picks, db, matrix, go, ge)
    for lane, vec in (("s16", 8), ("u8", 16)):
        ov = _variant(LANE=lane, VEC=vec)          # s16: strips of 17 rows; u8: one strip
        for (qid, q), w in zip(picks, want):
            got = sw_scores(q, db, long_threshold=FIRST_PASS, matrix=matrix, gap_open=go, gap_extend=ge,
                            KERNEL="vector", **ov)
            assert np.array_equal(got, w), (matrix, go, ge, lane, vec, qid)


def test_forced_multi_batch(case):
    db, queries, ref = case
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=FIRST_PASS, KERNEL="vector", batch_residues=700,
                   **_variant(LANE="u8", STRIP=17))
    assert len(eng.plan_batches(db)) > 5
    pick = [0, 7, 12, len(queries) - 1]
    got, _ = eng.search([(queries[i][0], PROTEIN.encode(queries[i][1])) for i in pick], db, progress=False)
    for i, g in zip(pick, got):
        assert np.array_equal(g, ref[i]), queries[i][0]


def test_kernel_choice():
    eng = SWEngine("BLOSUM62", 11, 1, None)
    if eng.caps.is_cpu:
        assert eng.kernel == "vector" and eng.widths()[-2:] == [16, 32]
    # an inter-task-only parameter without KERNEL asks for the inter-task kernel
    assert SWEngine("BLOSUM62", 11, 1, None, WIDTH=8).kernel == "intertask"
    assert SWEngine("BLOSUM62", 11, 1, None, KERNEL="intertask").kernel == "intertask"
    assert SWEngine("BLOSUM62", 11, 1, None, KERNEL="vector", WIDTH=8).kernel == "vector"
    # u8 lanes: gap costs above 255 start at s16; LANE alone resets VEC to 16
    eng = SWEngine("BLOSUM62", 300, 1, None, KERNEL="vector", LANE="u8", VEC=16)
    assert eng.widths() == [16, 32]
    assert SWEngine("BLOSUM62", 11, 1, None, KERNEL="vector", LANE="s16").plan.vvalues["VEC"] == 16
    with pytest.raises(ParameterError):
        SWEngine("BLOSUM62", 11, 1, None, KERNEL="vector", LANE="s16", VEC=32)

    class Caps:     # what lookup() reads of a probed device
        is_cpu, is_gpu, is_nvidia, compute_capability, name = False, True, True, (9, 0), "NVIDIA H100"

    assert lookup(FAMILY, Caps()).get("KERNEL", "intertask") == "intertask"


def test_real_sequences_against_parasail(cudasw_fasta):
    parasail = pytest.importorskip("parasail", reason="parasail (test extra) is not installed")
    full = Database.from_fasta(os.path.join(DATA, "proteome.faa.gz"))
    db = full.subset(np.arange(3, len(full), 7))              # ~300 real proteins
    queries = [r.sequence for r in read_fasta(cudasw_fasta)]
    for q in (queries[0], queries[3], queries[11]):          # 144, 375, 2005 aa
        want = np.array([parasail.sw_striped_32(q, db.sequence_str(i), 12, 1, parasail.blosum62).score
                         for i in range(len(db))])
        for ov in (_variant(LANE="s16", VEC=8), dict(LANE="s16", VEC=16), dict(LANE="u8", VEC=16)):
            got = sw_scores(q, db, long_threshold=FIRST_PASS, KERNEL="vector", **ov)
            assert np.array_equal(got, want), (len(q), ov)
        assert np.array_equal(sw_scores(q, db), want)            # the device's tuned choice
    # the CUDASW++ queries as a database (lengths 144..5478), a query longer than one strip
    cdb = Database.from_fasta(cudasw_fasta)
    q = queries[6]
    want = np.array([parasail.sw_striped_32(q, cdb.sequence_str(i), 12, 1, parasail.blosum62).score
                     for i in range(len(cdb))])
    assert np.array_equal(sw_scores(q, cdb, long_threshold=FIRST_PASS, KERNEL="vector", **_variant(STRIP=17)), want)


def test_empty_query_and_subjects():
    db = Database.from_sequences(["ACDE", "", "W" * 5])
    eng = SWEngine("BLOSUM62", 11, 1, None, KERNEL="vector", LANE="u8", VEC=16)
    got, _ = eng.search([("e", np.zeros(0, dtype=np.uint8)), ("ac", PROTEIN.encode("AC"))], db, progress=False)
    assert got[0].tolist() == [0, 0, 0]
    assert got[1].tolist() == [13, 0, 0]


def test_vec32_needs_clang_vectors(monkeypatch):
    """The 32-lane u8 form is a Clang extension: refused unless the probe found it builds."""
    import dataclasses

    from clalign.errors import ParameterError
    from clalign.runtime import Runtime
    from clalign.sw.engine import SWEngine

    rt = Runtime.get()
    monkeypatch.setattr(rt, "caps", dataclasses.replace(rt.caps, clang_vectors=False))
    with pytest.raises(ParameterError, match="clang_vectors"):
        SWEngine(KERNEL="vector", LANE="u8", VEC=32)
    eng = SWEngine(KERNEL="vector")            # the tuning table then keeps portable vectors
    assert eng.plan.vvalues["VEC"] != 32
