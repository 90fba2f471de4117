"""The intra-task kernel (``kernels/sw_intratask.mako``), the kernel split, several devices and
32-bit overflow, against the numpy Gotoh (or closed-form scores of residue runs).

Lengths sit around tile (TW), work-item (TH), strip (WG x TH) and threshold boundaries; long
pairs go to 35,000 aa through the 8 -> 16 -> 32-bit rescoring of the first-pass kernels."""
import numpy as np
import pytest

from clalign.data import PROTEIN, Database, get_matrix
from clalign.data.matrices import Matrix
from clalign.sw import SWEngine, multi, sw_scores
from clalign.sw.intratask import intra_values
from clalign.sw.reference import sw_score
from clalign.sw.threshold import choose_threshold
from clalign.sw.worker import ScoreOverflowError

AA = PROTEIN.encode("ACDEFGHIKLMNPQRSTVWY")
B62 = get_matrix("BLOSUM62")

# (TH, TW, WG): one work-item (global border every strip), odd work-group sizes, tiles of 1..16;
# profile packing 8/16/32 bits, read from global or local memory, one step ahead or not.
INTRA = [dict(INTRA_TH=4, INTRA_TW=1, INTRA_WG=1, INTRA_PBITS=32), dict(INTRA_TH=8, INTRA_TW=4, INTRA_WG=3),
         dict(INTRA_TH=12, INTRA_TW=2, INTRA_WG=5, INTRA_PROF="local"),
         dict(INTRA_TH=16, INTRA_TW=8, INTRA_WG=8, INTRA_PBITS=16, INTRA_AHEAD=False),
         dict(INTRA_TH=4, INTRA_TW=16, INTRA_WG=2, INTRA_PROF="local", INTRA_AHEAD=False)]
INTRA = [dict(v, INTRA_KIND="tiles") for v in INTRA] + [dict(INTRA_KIND="striped")]
KINDS = [dict(INTRA_KIND="tiles", INTRA_TH=4, INTRA_TW=2, INTRA_WG=3), dict(INTRA_KIND="striped")]


def _rand(rng, n):
    return AA[rng.integers(0, 20, n)]


def _ref(q, db):
    return np.array([sw_score(q, db.sequence(i), B62.scores, 11, 1) for i in range(len(db))])


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(5)
    lens = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65, 95, 96, 97, 128, 129, 257, 400]
    subs = [_rand(rng, n) for n in lens]
    subs.append(np.concatenate([subs[-1][:200], _rand(rng, 30), subs[-1][150:390]]))   # gaps in both
    db = Database.from_sequences(subs)
    queries = [_rand(rng, n) for n in (1, 4, 5, 11, 12, 13, 24, 25, 40, 41, 96, 97)] + [subs[-2][50:350]]
    return db, queries, [_ref(q, db) for q in queries]


def _vid(v):
    if v["INTRA_KIND"] == "striped":
        return "striped"
    extra = "".join(f"-{k[6:].lower()}{v[k]}" for k in ("INTRA_PBITS", "INTRA_PROF", "INTRA_AHEAD") if k in v)
    return "th{INTRA_TH}-tw{INTRA_TW}-wg{INTRA_WG}".format(**v) + extra


@pytest.mark.parametrize("ov", INTRA, ids=_vid)
def test_intratask_matches_reference(case, ov):
    db, queries, ref = case
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=0, **ov)
    got, _ = eng.search([(f"q{i}", q) for i, q in enumerate(queries)], db, progress=False)
    assert eng.last_kernels == ["intratask"]
    for i, (g, r) in enumerate(zip(got, ref)):
        bad = np.flatnonzero(g != r)
        assert bad.size == 0, f"query {i}: subjects {bad[:8]} got {g[bad[:8]]} want {r[bad[:8]]}"


@pytest.mark.parametrize("ov", KINDS, ids=_vid)
def test_kernels_agree_around_threshold(case, ov):
    """Subjects of the threshold's length stay in the first pass, one longer goes intra-task."""
    db, queries, ref = case
    for thr in (32, 33, 96):
        eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=thr, **ov)
        got, _ = eng.search([("q", queries[-1])], db, progress=False)
        assert np.array_equal(got[0], ref[-1])
        n_long = int((np.asarray(db.lengths) > thr).sum())
        assert eng.last_passes[-1] == (32, n_long) and eng.last_kernels[-1] == "intratask"


@pytest.mark.parametrize("batch", [None, 3000])
def test_two_queries_in_flight(case, batch):
    """pipeline=2 (a GPU's default): each query's first pass on its own queue and buffers while the
    previous one finishes, with 8 -> 16 -> 32-bit rescoring and the intra-task split; one batch
    and several. Scores identical to the reference for every query."""
    db, queries, ref = case
    kw = {} if batch is None else {"batch_residues": batch}
    eng = SWEngine("BLOSUM62", 11, 1, None, KERNEL="intertask", WIDTH=8, long_threshold=96, pipeline=2, **kw)
    assert eng.workers[0].pipeline_depth() == 2
    order = list(range(len(queries)))[::-1]       # the high-scoring query first: its rescoring overlaps
    got, secs = eng.search([(f"q{i}", queries[i]) for i in order], db, progress=False)
    for g, i in zip(got, order):
        bad = np.flatnonzero(g != ref[i])
        assert bad.size == 0, f"query {i}: subjects {bad[:8]} got {g[bad[:8]]} want {ref[i][bad[:8]]}"
    assert len(secs) == len(order) and all(s >= 0 for s in secs)


@pytest.mark.parametrize("ov", KINDS, ids=_vid)
def test_long_pairs_to_35000_through_every_width(ov):
    """A 35,000-aa query against long subjects: closed-form scores of W runs (W/W = 11) above 8
    and 16 bits, plus random ones against the reference; first-pass kernels and intra-task agree."""
    rng = np.random.default_rng(9)
    W = PROTEIN.encode("W")[0]
    rnd = _rand(rng, 700)
    q = np.concatenate([np.full(33000, W, np.uint8), rnd, _rand(rng, 1300)])
    assert len(q) == 35000
    subs = [np.full(20, W, np.uint8), np.full(1100, W, np.uint8), np.full(3100, W, np.uint8),
            np.concatenate([_rand(rng, 100), rnd[:650], _rand(rng, 90)]), _rand(rng, 2047)]
    db = Database.from_sequences(subs)
    want = np.array([220, 12100, 34100, sw_score(q[33000:], subs[3], B62.scores, 11, 1),
                     sw_score(q, subs[4], B62.scores, 11, 1)])
    first = SWEngine("BLOSUM62", 11, 1, None, long_threshold=10 ** 9)
    got, _ = first.search([("long", q)], db, progress=False)
    assert np.array_equal(got[0], want), (got[0], want)
    assert [w for w, _ in first.last_passes] == first.widths()     # every width of the plan ran
    intra = SWEngine("BLOSUM62", 11, 1, None, long_threshold=0, **ov)
    got2, _ = intra.search([("long", q)], db, progress=False)
    assert np.array_equal(got2[0], want)     # 34,100 needs the s32 rescoring of the striped kernel


def test_several_devices_identical(case, capsys):
    """The same device listed twice splits the database between two workers: same scores."""
    db, queries, ref = case
    rng = np.random.default_rng(2)
    big = Database.from_sequences([_rand(rng, int(n)) for n in rng.integers(1, 300, 400)] + list(
        db.sequence(i) for i in range(len(db))))
    one = sw_scores(queries[-1], big, long_threshold=64)
    eng = SWEngine("BLOSUM62", 11, 1, "0:0,0:0", long_threshold=64)
    assert len(eng.workers) == 2
    lines = []
    got, _ = eng.search([("q", queries[-1])], big, progress=False, report=lines.append)
    assert np.array_equal(got[0], one)
    assert np.array_equal(got[0][-len(db):], ref[-1])
    rep = eng.device_report
    assert len(rep) == 2 and sum(r[1] for r in rep) == len(big) and all(r[1] > 0 for r in rep)
    assert {r[2] for r in rep} == {"subjects"}          # one query: the database is split
    assert sum("sw: device [" in x for x in lines) == 2


def test_several_devices_split_queries(case, capsys):
    """Several queries on two workers (the same device twice): dealt whole, each against the whole
    database; the scores of every query equal one device's, and each reaches ``on_query`` once."""
    db, queries, ref = case
    rng = np.random.default_rng(3)
    big = Database.from_sequences([_rand(rng, int(n)) for n in rng.integers(1, 300, 300)] + list(
        db.sequence(i) for i in range(len(db))))
    qs = [(f"q{i}", q) for i, q in enumerate(queries)] + [("r", _rand(rng, 250)), ("s", _rand(rng, 240))]
    one = SWEngine("BLOSUM62", 11, 1, None, long_threshold=64)
    want, _ = one.search(qs, big, progress=False)
    eng = SWEngine("BLOSUM62", 11, 1, "0:0,0:0", long_threshold=64)
    seen = []
    lines = []
    got, secs = eng.search(qs, big, progress=False, report=lines.append,
                           on_query=lambda qi, sc: seen.append((qi, sc.copy())))
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert sorted(qi for qi, _ in seen) == list(range(len(qs)))
    assert all(np.array_equal(sc, want[qi]) for qi, sc in seen)
    rep = eng.device_report
    assert [r[2] for r in rep] == ["queries", "queries"] and sum(r[1] for r in rep) == len(qs)
    assert all(r[1] > 0 for r in rep) and len(secs) == len(qs)
    assert sum(" queries, " in x and "sw: device [" in x for x in lines) == 2


def test_plan_queries_longest_first_by_rate():
    """Queries go whole, longest first, to the device that finishes each first at its rate."""
    plan, excess = multi.plan_queries([100, 500, 400, 300, 200], [1.0, 1.0])
    assert plan == [[0, 1, 4], [2, 3]] and abs(excess - 800 / 750) < 1e-9
    plan, excess = multi.plan_queries([1000, 10], [1.0, 1.0])       # one long query: no even split
    assert excess > 1 + multi.QUERY_SLACK
    plan, excess = multi.plan_queries([100] * 12, [3.0, 1.0])        # a device 3x faster takes 3x
    assert [len(p) for p in plan] == [9, 3] and excess <= 1.01


def test_threshold_from_rates():
    """The cost model sends the longest subjects to the intra-task kernel when one lane is slow."""
    lengths = np.array([300] * 10000 + [5000] * 10 + [30000])
    assert choose_threshold(lengths, {"inter": 1000.0, "lane": 0.1, "intra": 500.0}) == 300
    assert choose_threshold(lengths, {"inter": 1000.0, "lane": 1e6, "intra": 500.0}) == 30000
    # padding to blocks of 32 lanes makes the tail costly in the first pass even with fast lanes
    assert choose_threshold(lengths, {"inter": 25.0, "lane": 1e6, "intra": 4.8}, group=32) == 5000
    assert choose_threshold([5, 3], {"inter": 1.0, "lane": 1.0, "intra": 1.0}, group=4) == 0


def test_verbose_reports_decision():
    lines = []
    db = Database.from_sequences(["MKTAYIAKQR" * 5, "ACDEFGHIKL" * 30])
    SWEngine("BLOSUM62", 11, 1, None, long_threshold=100).search([("q", PROTEIN.encode("MKTAYIAKQR"))], db,
                                                                  progress=False, verbose=lines.append)
    assert any("1 subject(s) longer than 100 aa" in x and "intra-task" in x for x in lines)


def _big_matrix():
    m = np.full((28, 28), -4, dtype=np.int32)
    m[np.arange(28), np.arange(28)] = 1_000_000
    return Matrix("BIG", m, -4, 1_000_000)


@pytest.mark.parametrize("thr,kind", [(0, "tiles"), (0, "striped"), (10 ** 9, "tiles")],
                         ids=["intratask", "striped", "intertask"])
def test_scores_above_2_31_are_reported(thr, kind):
    """Scores up to INT32_MAX - smax are exact; beyond, an error names the subject (issue 9)."""
    W = PROTEIN.encode("W")[0]
    db = Database.from_sequences([np.full(2000, W, np.uint8), np.full(10, W, np.uint8)], ids=["w2000", "w10"])
    got = sw_scores(np.full(2100, W, np.uint8), db, matrix=_big_matrix(), long_threshold=thr, INTRA_KIND=kind)
    assert list(got) == [2_000_000_000, 10_000_000]
    db2 = Database.from_sequences([np.full(10, W, np.uint8), np.full(2200, W, np.uint8)], ids=["w10", "w2200"])
    with pytest.raises(ScoreOverflowError, match="w2200"):
        sw_scores(np.full(2200, W, np.uint8), db2, matrix=_big_matrix(), long_threshold=thr, INTRA_KIND=kind)


def test_intra_profile_packing_and_limits():
    """PBITS is the narrowest lane the matrix fits (8 for BLOSUM62, 32 for scores of 10^6); a narrower
    override is refused; PROF=local falls back to global where the slices exceed local memory."""
    from clalign.errors import ParameterError
    from clalign.sw.params import intra_local_bytes
    from clalign.sw.scoring import Scoring, build_row_profile

    assert SWEngine("BLOSUM62", 11, 1, None).workers[0].plan.ivalues["PBITS"] == 8
    eng = SWEngine(_big_matrix(), 11, 1, None, INTRA_PROF="local", INTRA_TH=4, INTRA_WG=1)
    assert eng.workers[0].plan.ivalues["PBITS"] == 32
    with pytest.raises(ParameterError, match="PBITS"):
        SWEngine(_big_matrix(), 11, 1, None, INTRA_PBITS=16)
    caps = SWEngine("BLOSUM62", 11, 1, None).workers[0].caps
    big = dict(INTRA_TH=32, INTRA_TW=16, INTRA_WG=min(1024, caps.max_work_group), INTRA_PBITS=32)
    plan = SWEngine("BLOSUM62", 11, 1, None, **big).workers[0].plan
    if intra_local_bytes({**plan.ivalues, "PROF": "local"}) > caps.local_mem:
        with pytest.raises(ParameterError, match="local memory"):
            SWEngine("BLOSUM62", 11, 1, None, INTRA_PROF="local", **big)
    # packed words: row r of code a is byte r % 4 of word r // 4 (little-endian), sentinel rows after the query
    sc = Scoring.make("BLOSUM62", 11, 1)
    q = _rand(np.random.default_rng(1), 10)
    p8 = build_row_profile(q, sc, 8, 8)
    assert p8.shape == (32, 16) and p8.dtype == np.int8
    words = p8.view(np.int32)
    a = int(q[5])
    assert np.int8((words[a, 1] >> 8) & 0xFF) == sc.scores[q[5], a]
    assert (p8[:, 10:] == sc.smin).all()
    assert np.array_equal(build_row_profile(q, sc, 8, 16).astype(np.int32), p8.astype(np.int32))


def test_intra_work_group_fits_short_queries():
    v = {"TH": 8, "TW": 4, "WG": 128}
    assert intra_values(v, 144, 32)["WG"] == 64          # 512 rows instead of 1,024 for 144
    assert intra_values(v, 512, 32)["WG"] == 64
    assert intra_values(v, 513, 32)["WG"] == 128
    assert intra_values(v, 2000, 32)["WG"] == 128        # 2 strips of 1,024
    assert intra_values(v, 1100, 32)["WG"] == 128        # two sizes only (each one a build)
    assert intra_values(v, 2100, 32)["WG"] == 128        # 3 strips: 1,536 rows of 64 would not cover it
    assert intra_values({**v, "WG": 8}, 5, 8)["WG"] == 8     # CPUs: the tuned size (granule = WG)
    assert intra_values({**v, "WG": 96}, 5, 32)["WG"] == 64  # half of 96 rounded up to the warp


def test_rates_measured_once_then_stored(tmp_path, monkeypatch):
    """Rates absent from the tuning table are measured at first use and stored beside the
    program cache: a later process (simulated by forgetting the in-process copy) reads them."""
    from clalign.runtime import cache
    from clalign.sw import threshold

    cache.configure(root=tmp_path)
    try:
        eng = SWEngine("BLOSUM62", 11, 1, None, INTRA_WG=2)
        monkeypatch.setattr(threshold, "_MEASURED", {})
        first = threshold.device_rates(eng.workers[0])
        assert set(first) == {"inter", "lane", "intra"} and all(v > 0 for v in first.values())
        assert len(list((tmp_path / "sw_rates").glob("*.json"))) == 1
        monkeypatch.setattr(threshold, "_MEASURED", {})
        monkeypatch.setattr(threshold, "measure_rates", lambda w: pytest.fail("measured again"))
        assert threshold.device_rates(eng.workers[0]) == first
    finally:
        cache.configure()


def test_slow_device_left_out(monkeypatch):
    """A device far slower than the fastest is not given a share (never slower than without it)."""
    from clalign.sw import engine as eng_mod

    eng = SWEngine("BLOSUM62", 11, 1, "0:0,0:0", long_threshold=64)
    rates = {id(eng.workers[0]): 100.0, id(eng.workers[1]): 5.0}
    monkeypatch.setattr(eng_mod, "device_rates", lambda w, report=None: {"inter": rates[id(w)]})
    lines = []
    assert eng.active_workers(lines.append) == [eng.workers[0]]
    assert any("left out" in x for x in lines)
    rates[id(eng.workers[1])] = 50.0
    assert eng.active_workers() == eng.workers


def test_cli_verbose_and_two_devices(write_file, tmp_path):
    """`clalign sw --verbose` reports the kernel split; `--device 0:0,0:0` writes the same hits."""
    from click.testing import CliRunner

    from clalign.cli import main

    rng = np.random.default_rng(8)
    seqs = [PROTEIN.decode(_rand(rng, int(n))) for n in rng.integers(20, 400, 60)]
    seqs.append(PROTEIN.decode(_rand(rng, 900)))
    db = write_file("db.fa", "".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)))
    q = write_file("q.fa", f">q\n{seqs[-1][100:400]}\n")
    outs = []
    for dev in ("0:0", "0:0,0:0"):
        out = str(tmp_path / f"hits{len(outs)}.tsv")
        res = CliRunner().invoke(main, ["sw", "-query", q, "-db", db, "-out", out, "--device", dev, "--verbose"])
        assert res.exit_code == 0, res.stderr
        assert "-> intra-task kernel" in res.stderr
        outs.append(open(out).read())
    assert outs[0] == outs[1] and "\ts60\t" in outs[0]


def _diag_runs(*parts):
    """A sequence from (residue, count) runs and its identity score under BLOSUM62."""
    seq = np.concatenate([np.full(n, PROTEIN.encode(r)[0], np.uint8) for r, n in parts])
    return seq, int(sum(B62.scores[PROTEIN.encode(r)[0], PROTEIN.encode(r)[0]] * n for r, n in parts))


@pytest.mark.parametrize("u8vec", [None, 16, 32, 64], ids=["u8-device-default", "u8-uchar16", "u8-x32", "u8-x64"])
def test_striped_lane_boundaries(u8vec, monkeypatch):
    """Identity scores just below, at and above the u8 (255 - 4 - 11 = 240) and s16 (32767 - 11) bounds
    of the striped kernel: each pass flags what it cannot hold and the next lane type rescores it
    (u8 in the device's Clang-vector lanes where they build, 32 and 64 of them, and in portable uchar16)."""
    from clalign.sw import intratask

    if u8vec in (32, 64) and not SWEngine(long_threshold=0).caps.clang_vectors:
        pytest.skip("32 and 64 u8 lanes are a Clang vector extension that this OpenCL compiler does not "
                    "build; the uchar16 case of this test runs here instead")
    if u8vec:
        orig = intratask.striped_vec
        monkeypatch.setattr(intratask, "striped_vec", lambda lane, caps: u8vec if lane == "u8" else orig(lane, caps))
    runs = [[("W", 21), ("H", 1)], [("W", 21), ("C", 1)], [("W", 21), ("R", 2)],
            [("W", 2977), ("H", 1)], [("W", 2977), ("C", 1)], [("W", 2977), ("R", 2)]]
    seqs, want = zip(*(_diag_runs(*r) for r in runs))
    assert list(want) == [239, 240, 241, 32755, 32756, 32757]
    db = Database.from_sequences(list(seqs))
    eng = SWEngine("BLOSUM62", 11, 1, None, long_threshold=0, INTRA_KIND="striped")
    got, _ = eng.search([(f"q{i}", s) for i, s in enumerate(seqs)], db, progress=False)
    assert [int(got[i][i]) for i in range(len(seqs))] == list(want)
    # off the diagonal the W runs align: min of the two runs x 11
    assert int(got[0][4]) == 231 and int(got[4][0]) == 231 and int(got[3][5]) == 2977 * 11


def test_striped_35000_x_35000():
    """The largest pair the issue asks for, on the CPU kernel: 385,000 through u8 -> s16 -> s32, and a
    random 35,000-aa subject against the same W run (the reference with 2,000 W: a local alignment
    against W with a query span above 2,000 would need a subject stretch scoring far above random)."""
    rng = np.random.default_rng(35)
    W = PROTEIN.encode("W")[0]
    q = np.full(35000, W, np.uint8)
    rnd = _rand(rng, 35000)
    db = Database.from_sequences([np.full(35000, W, np.uint8), rnd])
    got = sw_scores(q, db, long_threshold=0, INTRA_KIND="striped")
    best = sw_score(np.full(2000, W, np.uint8), rnd, B62.scores, 11, 1)
    assert int(got[0]) == 385000 and int(got[1]) == best


@pytest.mark.parametrize("lo,hi,bits", [(-128, 127, 8), (-129, 127, 16), (-128, 128, 16), (-32768, 32767, 16),
                                        (-32769, 40000, 32)])
def test_profile_lanes_at_their_range_ends(lo, hi, bits):
    """Packed profile scores are sign-extended exactly at the ends of their lane (an asymmetric matrix
    with both extremes), the tile kernel equal to the reference; the striped kernel too."""
    rng = np.random.default_rng(abs(lo))
    m = rng.integers(-3, 4, (28, 28)).astype(np.int32)
    m[np.arange(28), np.arange(28)] = hi // 2
    m[3, 5], m[5, 3], m[7, 7], m[8, 2] = lo, hi, hi, lo
    mat = Matrix("EDGE", m, int(m.min()), int(m.max()))
    subs = [_rand(rng, n) for n in (3, 17, 40)]
    subs.append(np.concatenate([subs[2][:20], PROTEIN.encode("DEHHDFG"), subs[1]]))
    db = Database.from_sequences(subs)
    q = np.concatenate([_rand(rng, 9), PROTEIN.encode("DHEHDGF"), subs[1][:12]])
    want = np.array([sw_score(q, s, m, 11, 1) for s in subs])
    eng = SWEngine(mat, 11, 1, None, long_threshold=0, INTRA_KIND="tiles", INTRA_TH=8, INTRA_TW=2, INTRA_WG=2)
    assert eng.workers[0].plan.ivalues["PBITS"] == bits
    got, _ = eng.search([("q", q)], db, progress=False)
    assert np.array_equal(got[0], want), (got[0], want)
    assert np.array_equal(sw_scores(q, db, matrix=mat, long_threshold=0, INTRA_KIND="striped"), want)
