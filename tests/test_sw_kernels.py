"""Every inter-task kernel variant PoCL can build against the numpy Gotoh reference.

Subjects and queries have lengths just around lane, strip (ROWS) and work-group multiples, plus
an overflow set whose scores need 16 bits (> 255) and 32 bits (> 32767) so that the device
rescoring passes (8 -> 16 -> 32 bits) run. Real sequences (bundled proteome, CUDASW++ queries)
are checked against parasail."""
import os

import numpy as np
import pytest

from clalign.data import PROTEIN, Database, get_matrix, read_fasta
from clalign.sw import SWEngine, sw_scores
from clalign.sw.params import SW_PARAMS
from clalign.sw.reference import sw_score
from conftest import variants

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
AA = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", dtype=np.uint8)
# These tests check the first-pass kernels: no subject goes to the intra-task kernel.
FIRST_PASS = 10 ** 9

# Template variants: pairwise coverage of the declared parameters (conftest.variants): every
# width x profile, row counts for vector loads of 1, 2 and 4 words, several words per work-item and
# work-group sizes. Register rows (ROWS x WORDS) at most 36 and four columns per iteration
# (UNROLL=4, the GPU choice) only with 4 rows: large unrolled bodies take PoCL tens of seconds to
# build. PROFILE means nothing at 32 bits (always plain).
VARIANTS = variants(SW_PARAMS, {"WIDTH": None, "PROFILE": None, "ROWS": (4, 12, 24), "WORDS": (1, 2, 3),
                                "SCHEDULE": None, "WG": (1, 3, 8), "UNROLL": (1, 4)},
                    valid=lambda v: not (v["WIDTH"] == 32 and v["PROFILE"] == "pairs")
                    and (v["UNROLL"] == 1 or v["ROWS"] == 4) and v["ROWS"] * v["WORDS"] <= 36)
# Two columns per iteration and the short-chain 32-bit cell: an 8-bit first pass whose overflow
# query is rescored at 16 and 32 bits with the same values (UNROLL=2 at every width, CHAIN=x at 32).
VARIANTS += [{"WIDTH": 8, "PROFILE": "plain", "ROWS": 4, "WORDS": 1, "SCHEDULE": "dynamic", "WG": 3, "UNROLL": 2,
              "CHAIN": "x"},
             {"WIDTH": 32, "PROFILE": "plain", "ROWS": 12, "WORDS": 1, "SCHEDULE": "static", "WG": 8, "UNROLL": 1,
              "CHAIN": "x"}]
pytestmark = pytest.mark.usefixtures("each_device")


def _variant(**want):
    """The first entry of VARIANTS with these values: the other tests run kernels that
    test_variant_matches_reference builds anyway (one build per kernel and process; each
    inter-task build takes PoCL seconds to tens of seconds)."""
    return dict(next(v for v in VARIANTS if all(v.get(k) == x for k, x in want.items())))


# The GPU-shaped tuned body (ROWS 32 x WORDS 2, WG 8), built once here at 32 bits: the real
# sequences and the 20,000-residue lengths run on it; 8 and 16 bits run on variant kernels.
TUNED32 = dict(WIDTH=32, ROWS=32, WG=8)


def _rand(rng, n):
    return AA[rng.integers(0, 20, n)].tobytes().decode()


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(11)
    lens = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 127, 128, 129, 255, 256, 257]
    lens += [int(x) for x in rng.integers(1, 400, 30)]
    subs = [_rand(rng, n) for n in lens]
    tail = _rand(rng, 40)
    subs += ["W" * 30, "W" * 400 + tail, "W" * 3100, tail + "W" * 3101, "C" * 60]
    qlens = [1, 3, 4, 5, 11, 12, 13, 16, 17, 31, 32, 33, 48, 49, 64, 65, 130]
    queries = [(f"q{n}", _rand(rng, n)) for n in qlens]
    queries.append(("ovf", "W" * 3100 + tail))
    db = Database.from_sequences(subs)
    m = get_matrix("BLOSUM62")
    ref = [np.array([sw_score(PROTEIN.encode(q), db.sequence(i), m.scores, 11, 1) for i in range(len(db))])
           for _, q in queries]
    assert ref[-1].max() > 32767 and ((ref[-1] > 255) & (ref[-1] < 32767)).any()
    return db, queries, ref


@pytest.mark.parametrize("ov", VARIANTS, ids=lambda v: "w{WIDTH}-{PROFILE}-r{ROWS}-x{WORDS}-{SCHEDULE}-wg{WG}-u{UNROLL}-{CHAIN}".format(
    **{"UNROLL": 1, "CHAIN": "h", **v}))
def test_variant_matches_reference(case, ov):
    db, queries, ref = case
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=FIRST_PASS, **ov)
    qs = [(qid, PROTEIN.encode(q)) for qid, q in queries]
    got, _ = eng.search(qs, db, progress=False)
    for (qid, _), g, r in zip(queries, got, ref):
        bad = np.flatnonzero(g != r)
        assert bad.size == 0, f"{qid}: subjects {bad[:8]} got {g[bad[:8]]} want {r[bad[:8]]}"
    # the overflow query went through every wider pass after the first
    widths = [w for w, _ in eng.last_passes]
    assert widths == [w for w in (8, 16, 32) if w >= ov["WIDTH"]]


@pytest.mark.parametrize("want", [dict(WIDTH=16, SCHEDULE="dynamic", ROWS=12), dict(WIDTH=8, SCHEDULE="static", ROWS=24)])
def test_forced_multi_batch(case, want):
    db, queries, ref = case
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=FIRST_PASS, batch_residues=700, **_variant(**want))
    assert len(eng.plan_batches(db)) > 5
    pick = [0, 7, 16, len(queries) - 1]
    got, _ = eng.search([(queries[i][0], PROTEIN.encode(queries[i][1])) for i in pick], db, progress=False)
    for i, g in zip(pick, got):
        assert np.array_equal(g, ref[i]), queries[i][0]


@pytest.mark.parametrize("matrix,go,ge", [("BLOSUM50", 13, 2), ("PAM30", 9, 1), ("BLOSUM62", 300, 40),
                                          ("BLOSUM90", 0, 0)])
def test_matrices_and_gaps(case, matrix, go, ge):
    db, queries, _ = case
    m = get_matrix(matrix)
    for qid, q in (queries[10], queries[-1]):
        want = np.array([sw_score(PROTEIN.encode(q), db.sequence(i), m.scores, go, ge) for i in range(len(db))])
        for width in (8, 16):
            got = sw_scores(q, db, long_threshold=FIRST_PASS, matrix=matrix, gap_open=go, gap_extend=ge,
                            **_variant(WIDTH=width, PROFILE="plain", UNROLL=1))
            assert np.array_equal(got, want), (matrix, go, ge, width, qid)


def test_real_sequences_against_parasail(cudasw_fasta):
    parasail = pytest.importorskip("parasail", reason="parasail (test extra) is not installed")
    full = Database.from_fasta(os.path.join(DATA, "proteome.faa.gz"))
    db = full.subset(np.arange(0, len(full), 7))              # 300 real proteins
    queries = [r.sequence for r in read_fasta(cudasw_fasta)]
    kernels = {8: _variant(WIDTH=8, PROFILE="plain", UNROLL=1), 16: _variant(WIDTH=16, PROFILE="pairs"), 32: TUNED32}
    for q, widths in ((queries[0], (8, 16, 32)), (queries[3], (8, 16, 32)), (queries[11], (32,))):  # 144, 375, 2005 aa
        want = np.array([parasail.sw_striped_32(q, db.sequence_str(i), 12, 1, parasail.blosum62).score
                         for i in range(len(db))])
        for width in widths:                                  # packed 8/16-bit lanes are slow on CPUs
            got = sw_scores(q, db, long_threshold=FIRST_PASS, **kernels[width])
            assert np.array_equal(got, want), (len(q), width)
    # the CUDASW++ queries as a database (lengths 144..5478)
    cdb = Database.from_fasta(cudasw_fasta)
    q = queries[6]
    want = np.array([parasail.sw_striped_32(q, cdb.sequence_str(i), 12, 1, parasail.blosum62).score
                     for i in range(len(cdb))])
    assert np.array_equal(sw_scores(q, cdb, long_threshold=FIRST_PASS, **kernels[8]), want)


def test_schedule_and_profile_rules():
    eng = SWEngine("BLOSUM62", 11, 1, None)
    assert eng.schedule(np.full(1000, 300)) == "static"
    assert eng.schedule(np.arange(1, 1000)) == "dynamic"
    assert SWEngine("BLOSUM62", 11, 1, None, SCHEDULE="static").schedule(np.arange(1, 1000)) == "static"
    assert eng.profile_layout(32, 100) == "plain"
    small, huge = eng.profile_layout(16, 1), eng.profile_layout(16, 10 ** 7)
    assert huge == "plain" and small in ("plain", "pairs")
    assert SWEngine("BLOSUM62", 11, 1, None, PROFILE="pairs").profile_layout(16, 10 ** 7) == "pairs"
    # 8-bit lanes cannot hold gap costs above 255: the first pass starts at 16 bits
    assert SWEngine("BLOSUM62", 300, 1, None, WIDTH=8).widths() == [16, 32]


@pytest.mark.parametrize("ov", [dict(), dict(KERNEL="vector", LANE="s16", VEC=8),
                                _variant(WIDTH=8, PROFILE="plain", UNROLL=1),
                                _variant(WIDTH=16, PROFILE="pairs"), TUNED32],
                         ids=["tuned", "vector-s16", "w8", "w16", "w32"])
def test_lengths_up_to_20000(ov):
    """Queries and subjects of 1 to 20,000 residues, with scores past 8 and 16 bits at that length
    (a 20,000-residue query against a mutated copy of itself), against parasail's 32-bit SW."""
    parasail = pytest.importorskip("parasail", reason="parasail (test extra) is not installed")
    rng = np.random.default_rng(20000)
    query = _rand(rng, 20000)
    copy = np.frombuffer(query.encode(), dtype=np.uint8).copy()
    hit = rng.integers(0, copy.size, 2000)
    copy[hit] = AA[rng.integers(0, 20, hit.size)]
    subs = ["M", _rand(rng, 2), _rand(rng, 300), copy[1:].tobytes().decode(), _rand(rng, 20000),
            query[5000:5600], "W" * 20]
    queries = (query, "W", query[:257])
    if ov.get("WIDTH") in (8, 16):
        # packed SWAR lanes are slow on a CPU, and a rescored subject runs on one work-item: the
        # 20,000-residue subject overflows 16 bits against a 3,100-residue query instead
        subs = ["M", _rand(rng, 2), _rand(rng, 300), _rand(rng, 16900) + "W" * 3100, "W" * 20]
        queries = ("W" * 3100, "W", query[:257])
    db = Database.from_sequences(subs)
    best = 0
    for q in queries:
        got = sw_scores(q, db, long_threshold=FIRST_PASS, **ov)
        want = np.array([parasail.sw_striped_32(q, s, 12, 1, parasail.blosum62).score for s in subs])
        np.testing.assert_array_equal(got, want)
        best = max(best, int(got.max()))
    assert best > 32767 and max(map(len, subs)) == 20000


@pytest.mark.parametrize("chain", ["h", "x"])
def test_ptx_cell_against_reference(chain):
    """CELL=ptx (NVIDIA only, PoCL cannot build inline PTX): the rendered cell's instructions,
    interpreted here, give the Gotoh recurrence's H, E, F and running max for random inputs."""
    import random
    import re

    from clalign.runtime import render

    vals = SW_PARAMS.validate({"SIMD": "ptx", "PTX_S16X2": True, "PTX_SHFL": True, "WIDTH": 32, "WORDS": 1,
                               "ROWS": 4, "PROFILE": "plain", "SCHEDULE": "dynamic", "WG": 32, "UNROLL": 4,
                               "KERNEL": "intertask", "CHAIN": chain, "CELL": "ptx"})
    src = render("sw_intertask.mako", vals)
    cells = re.findall(r'asm\("(\{.*?\})"\s*:\s*"=r"', src, re.S)
    assert len(cells) == 4 * 4
    text = re.sub(r'"\s*\n\s*"', "", cells[0]).replace("\\n", "").replace("\\t", "")
    ins = [x.strip() for x in text.strip("{}").split(";") if x.strip() and not x.strip().startswith(".reg")]
    ops = {"add.s32": lambda a: a[0] + a[1], "sub.s32": lambda a: a[0] - a[1], "max.s32": max, "mov.s32": lambda a: a[0]}
    rng = random.Random(5)
    for _ in range(20000):
        dg, e, f, mx = (rng.randint(-60, 300) for _ in range(4))
        p, ext = rng.randint(-4, 11), rng.randint(0, 5)
        goe = ext + rng.randint(0, 12)
        reg = {"%1": e, "%2": f, "%3": mx, "%4": dg, "%5": p, "%6": goe, "%7": ext}
        for i in ins:
            op, args = i.split(None, 1)
            d, *a = [x.strip() for x in args.split(",")]
            reg[d] = ops[op]([reg[x] if x in reg else int(x) for x in a])
        h = max(dg + p, e, f, 0)
        assert (reg["%0"], reg["%1"], reg["%2"], reg["%3"]) == (h, max(e - ext, h - goe), max(f - ext, h - goe),
                                                                 max(mx, h)), (chain, dg, p, e, f, mx, goe, ext)


def test_ptx_cell_needs_ptx():
    from clalign.errors import ParameterError

    with pytest.raises(ParameterError, match="CELL=ptx"):
        SWEngine("BLOSUM62", 11, 1, None, CELL="ptx", SIMD="swar")
