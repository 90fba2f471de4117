"""Issue 12: exact alignments of reported SW hits, blastp statistics, BLAST tabular output.

The golden comparison uses tests/data/blastp/sw_golden.tsv (blastp 2.12, see its README)."""
import io
import os

import numpy as np
import pytest
from click.testing import CliRunner

from clalign.cli import main
from clalign.data import PROTEIN, as_database, get_matrix, read_fasta
from clalign.output import format_bitscore, format_evalue
from clalign.sw import align_pair, sw_scores, sw_search
from clalign.sw.align import LANES, find_end, find_ends_lanes, ops_strings, rescore
from clalign.sw.reference import sw_score, sw_score_slow

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
GOLD = os.path.join(HERE, "data", "blastp", "sw_golden.tsv")
M = np.ascontiguousarray(get_matrix("BLOSUM62").scores, dtype=np.int64)
L = PROTEIN.letters


def _check(q, s, go, ge, budget):
    sc = sw_score(q, s, M, go, ge)
    i0, j0, ops = align_pair(q, s, M, go, ge, sc, budget=budget)
    if sc == 0:
        assert len(ops) == 0
        return
    qs, ss = ops_strings(q, s, i0, j0, ops, L)
    assert rescore(qs, ss, M, L, go, ge) == sc
    qres, sres = qs.replace("-", ""), ss.replace("-", "")
    assert qres == "".join(L[c] for c in q[i0 - 1:i0 - 1 + len(qres)])
    assert sres == "".join(L[c] for c in s[j0 - 1:j0 - 1 + len(sres)])
    assert qs[0] != "-" and ss[0] != "-" and qs[-1] != "-" and ss[-1] != "-"


@pytest.mark.parametrize("go,ge", [(11, 1), (10, 2), (0, 1), (3, 3), (0, 0), (40, 1)])
def test_alignments_rescore_to_the_score(go, ge):
    """Random pairs, some with a planted shared segment; tiny traceback blocks exercise the
    checkpointed path (budget = cells per block)."""
    rng = np.random.default_rng(go * 31 + ge)
    for it in range(40):
        m, n = rng.integers(1, 40, 2)
        q = rng.integers(1, 26, m).astype(np.uint8)
        s = rng.integers(1, 26, n).astype(np.uint8)
        if it % 2:
            s = np.concatenate([s, q[rng.integers(0, m):], s])
        _check(q, s, go, ge, int(rng.integers(1, 300)))
    assert sw_score(q, s, M, go, ge) == sw_score_slow(q, s, M, go, ge)


def test_tie_rule_is_documented_one():
    """Two equal best segments: the end with the smallest subject position wins; the path
    prefers a substitution, then a gap in the query."""
    q = PROTEIN.encode("WWWW")
    s = PROTEIN.encode("AAWWWWAAWWWWAA")
    i0, j0, ops = align_pair(q, s, M, 11, 1, sw_score(q, s, M, 11, 1))
    assert (i0, j0, ops.tolist()) == (1, 3, [0, 0, 0, 0])
    assert find_end(q, s, M, 12, 1, 44) == (4, 6)


def test_lane_kernel_equals_scalar_ends():
    rng = np.random.default_rng(7)
    out = np.zeros((LANES, 2), np.int64)
    M32 = M.astype(np.int32)
    for _ in range(5):
        q = rng.integers(1, 21, int(rng.integers(1, 50))).astype(np.uint8)
        lens = rng.integers(0, 60, LANES)
        subs = np.zeros((LANES, 60), np.uint8)
        for k in range(LANES):
            subs[k, :lens[k]] = rng.integers(1, 21, lens[k])
        tg = np.array([sw_score(q, subs[k, :lens[k]], M, 11, 1) for k in range(LANES)], np.int32)
        find_ends_lanes(q, subs, lens, M32, 12, 1, tg, out)
        for k in range(LANES):
            if tg[k] > 0:
                assert tuple(out[k]) == find_end(q, subs[k, :lens[k]], M, 12, 1, int(tg[k]))


@pytest.fixture(scope="module")
def proteome_results():
    db = as_database(os.path.join(DATA, "proteome.faa.gz"))
    return db, sw_search(os.path.join(DATA, "queries.faa"), db, evalue=10.0, top=500)


def test_evalue_bitscore_identical_to_blastp(proteome_results):
    """Every (query, subject) pair that blastp 2.12 and clalign both report with the same raw score
    has the same evalue and bitscore strings (data/queries.faa x data/proteome.faa.gz)."""
    db, res = proteome_results
    ours = {(r.query_id, a.subject_id): a for r in res for a in r.hits}
    best = {}
    with open(GOLD) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            best.setdefault((f[0], f[1]), f)      # blastp's first row of a subject = its best HSP
    same = [(k, f) for k, f in best.items() if k in ours and ours[k].score == int(f[4])]
    assert len(same) >= 30
    for k, f in same:
        a = ours[k]
        assert (format_evalue(a.evalue), format_bitscore(a.bitscore)) == (f[2], f[3]), k
    # SW finds at least blastp's best score for every subject both report (it is exact)
    both = [k for k in best if k in ours]
    assert all(ours[k].score >= int(best[k][4]) for k in both)


def test_hits_are_exact_and_consistent(proteome_results):
    db, res = proteome_results
    for r in res:
        q = PROTEIN.encode(next(x.sequence for x in read_fasta(os.path.join(DATA, "queries.faa"))
                                if x.id == r.query_id))
        scores = sw_scores(q, db)
        evs = [a.evalue for a in r.hits]
        assert all(e <= 10.0 for e in evs) and evs == sorted(evs)
        for a in r.hits:
            assert a.score == scores[a.subject_index]
            assert rescore(a.qseq, a.sseq, M, L, 11, 1) == a.score
            assert a.qseq.replace("-", "") == PROTEIN.decode(q[a.qstart - 1:a.qend])
            assert a.sseq.replace("-", "") == db.sequence_str(a.subject_index)[a.sstart - 1:a.send]
            cols = list(zip(a.qseq, a.sseq))
            assert a.nident == sum(x == y for x, y in cols)
            assert a.gaps == sum("-" in c for c in cols) and a.length == len(cols)
            assert a.mismatch == sum(x != y and "-" not in (x, y) for x, y in cols)


def test_evalue_filter_and_max_target_seqs(proteome_results):
    db, res = proteome_results
    strict = sw_search(os.path.join(DATA, "queries.faa"), db, evalue=1e-5, top=3)
    for r, full in zip(strict, res):
        want = [a.subject_id for a in full.hits if a.evalue <= 1e-5][:3]
        assert [a.subject_id for a in r.hits] == want


def test_cli_outfmt_6_7_parsed_by_biopython(tmp_path):
    SearchIO = pytest.importorskip("Bio.SearchIO")
    q = os.path.join(DATA, "queries.faa")
    db = os.path.join(DATA, "proteome.faa.gz")
    for fmt in ("6", "7"):
        out = tmp_path / f"o{fmt}.tsv"
        r = CliRunner().invoke(main, ["sw", "-query", q, "-db", db, "-outfmt", fmt, "-evalue", "1e-3",
                                      "-out", str(out)])
        assert r.exit_code == 0, r.output
        kw = {"comments": True} if fmt == "7" else {}
        qrs = list(SearchIO.parse(str(out), "blast-tab", **kw))
        assert len(qrs) >= 1 and all(h.evalue <= 1e-3 for qr in qrs for h in qr.hsps)
    text = (tmp_path / "o7.tsv").read_text()
    assert text.startswith("# CLALIGN-SW ") and "# Query: 938293.PRJEB85.HG003685_328" in text
    assert text.rstrip().endswith("# BLAST processed 4 queries")
    out = tmp_path / "c.tsv"
    r = CliRunner().invoke(main, ["sw", "-query", q, "-db", db, "-outfmt", "6 qseqid sseqid score qseq sseq",
                                  "-max_target_seqs", "1", "-out", str(out)])
    rows = [x.split("\t") for x in out.read_text().splitlines()]
    assert r.exit_code == 0 and len(rows) == 4 and all(len(x) == 5 for x in rows)
    assert rows[3][0] == rows[3][1] == "938293.PRJEB85.HG003685_328" and rows[3][3] == rows[3][4]


def test_cli_errors_are_one_line(tmp_path):
    q = os.path.join(DATA, "queries.faa")
    db = os.path.join(DATA, "proteome.faa.gz")
    for args, text in ((["-gapopen", "5"], "not supported for BLOSUM62"),
                       (["-outfmt", "6 nosuch"], "unknown column 'nosuch'"),
                       (["-evalue", "0"], "-evalue must be > 0")):
        r = CliRunner().invoke(main, ["sw", "-query", q, "-db", db] + args)
        assert r.exit_code != 0
        lines = [x for x in r.output.splitlines() if x.startswith("clalign: error:")]
        assert len(lines) == 1 and text in lines[0], r.output


def test_select_hits_blast_order_with_ties():
    from clalign.sw.report import select_hits
    scores = np.array([50, 60, 50, 40, 50, 0, 70])
    ev = np.array([1e-3, 1e-5, 1e-3, 1e-3, 1e-3, 20.0, 1e-200])
    ev[6] = 1e-190                          # below 1e-180: ties with nothing else here
    assert select_hits(scores, ev, 10, 10.0).tolist() == [6, 1, 4, 2, 0, 3]
    assert select_hits(scores, ev, 3, 10.0).tolist() == [6, 1, 4]
    assert select_hits(scores, ev, 10, 1e-4).tolist() == [6, 1]


def test_group_kernels_16_and_32_bit():
    """One compiled group call: 16-bit lanes (every score fits) and the 32-bit fallback (a score
    above NARROW_MAX: 3,100 W against W) give the alignments of align_pair."""
    from clalign.sw.lanes import GROUP, NARROW_MAX, find_ends_lanes16, trace_group
    from clalign.sw.align import CELL_BUDGET
    rng = np.random.default_rng(11)
    lc = np.frombuffer(L.encode() + b"-", np.uint8)
    q = rng.integers(1, 21, 60).astype(np.uint8)
    lens = rng.integers(0, 80, GROUP)
    subs = np.zeros((GROUP, 80), np.uint8)
    for k in range(GROUP):
        subs[k, :lens[k]] = rng.integers(1, 21, lens[k])
        if k % 3 == 0 and lens[k] > 30:
            subs[k, 5:25] = q[10:30]
    tg = np.array([sw_score(q, subs[k, :lens[k]], M, 11, 1) for k in range(GROUP)], np.int32)
    ends = np.zeros((GROUP, 2), np.int64)
    find_ends_lanes16(q, subs, lens, M.astype(np.int16), 12, 1, tg, ends)
    for wide in (False, True):
        info, qt, st, off = trace_group(q, subs, lens, tg, M.astype(np.int16), M.astype(np.int32), M, 12, 1,
                                        CELL_BUDGET, lc, not wide)
        for k in range(GROUP):
            assert info[k, 8] == 1
            if tg[k] > 0:
                assert tuple(ends[k]) == find_end(q, subs[k, :lens[k]], M, 12, 1, int(tg[k]))
                i0, j0, ops = align_pair(q, subs[k, :lens[k]], M, 11, 1, int(tg[k]))
                qs, ss = ops_strings(q, subs[k, :lens[k]], i0, j0, ops, L)
                assert (qt[off[k]:off[k + 1]].tobytes().decode(), st[off[k]:off[k + 1]].tobytes().decode()) == (qs, ss)
                assert (info[k, 0], info[k, 2]) == (i0, j0)
    w = np.full(3100, L.index("W"), np.uint8)
    subs = np.zeros((GROUP, 3100), np.uint8)
    subs[0] = w
    lens = np.zeros(GROUP, np.int64)
    lens[0] = 3100
    tg = np.zeros(GROUP, np.int32)
    tg[0] = 3100 * int(M[L.index("W"), L.index("W")])
    assert tg[0] > NARROW_MAX
    info, qt, st, off = trace_group(w, subs, lens, tg, M.astype(np.int16), M.astype(np.int32), M, 12, 1,
                                    CELL_BUDGET, lc, True)
    assert info[0].tolist() == [1, 3100, 1, 3100, 3100, 3100, 0, 0, 1]


def test_report_benchmark_and_golden_tools_run(cudasw_fasta, tmp_path, capsys):
    """tools/bench_sw_report.py on a tiny database; tools/sw_vs_blastp.py on the bundled queries."""
    import sys
    root = os.path.dirname(HERE)
    if root not in sys.path:                 # the tools are modules of the package ``tools``
        sys.path.insert(0, root)
    from tools import bench_sw_report, sw_vs_blastp

    assert bench_sw_report.main(["-n", "300", "--max-queries", "2", "--top", "20", "--repeat", "1",
                                 "--out", str(tmp_path)]) == 0
    assert (tmp_path / "sw_report_bench.json").exists()
    assert sw_vs_blastp.main(["--query", os.path.join(DATA, "queries.faa"), "--db",
                              os.path.join(DATA, "proteome.faa.gz"), "--blastp", GOLD]) == 0
    assert '"mismatches": 0' in capsys.readouterr().out


@pytest.mark.parametrize("go,ge", [(11, 1), (10, 2), (3, 0)])
def test_striped_end_equals_scalar_end(go, ge):
    """The striped end finder (one long pair, the query across 16 lanes) gives find_end's cell:
    query lengths around the lane count and its multiples, planted and repeated segments (ties),
    a zero gap extension (the lazy-F loop's bound)."""
    from clalign.sw.striped_end import V, find_end_striped

    rng = np.random.default_rng(21)
    M32 = M.astype(np.int32)
    for m in (1, 2, V - 1, V, V + 1, 2 * V, 3 * V + 5, 97, 160):
        for t in range(6):
            n = int(rng.integers(1, 180))
            q = rng.integers(1, 21, m).astype(np.uint8)
            s = rng.integers(1, 21, n).astype(np.uint8)
            if t % 2 and m > 12 and n > 20:
                a, b = int(rng.integers(0, m - 10)), int(rng.integers(0, n - 10))
                s[b:b + 10] = q[a:a + 10]
            if t == 4:
                q[:] = q[0]
                s[:n // 2] = q[0]
            sc = sw_score(q, s, M, go, ge)
            if sc > 0:
                assert find_end_striped(q, s, M32, go + ge, ge, sc) == find_end(q, s, M, go + ge, ge, sc)
    # an asymmetric matrix: M[query code, subject code], as find_end reads it
    A = M.copy()
    A[1:21, 1:21] += np.triu(np.full((20, 20), 3, dtype=np.int64), 1)
    for t in range(20):
        q = rng.integers(1, 21, int(rng.integers(5, 70))).astype(np.uint8)
        s = rng.integers(1, 21, int(rng.integers(5, 90))).astype(np.uint8)
        sc = sw_score(q, s, A, go, ge)
        if sc > 0:
            assert find_end_striped(q, s, A.astype(np.int32), go + ge, ge, sc) == find_end(q, s, A, go + ge, ge, sc)


def test_group_with_long_subjects_equals_pairwise():
    """trace_group with subjects above LONG_END (their ends from the striped pass, the others in
    the lanes) gives align_pair's alignment for every subject."""
    from clalign.sw.align import CELL_BUDGET
    from clalign.sw.lanes import GROUP, trace_group
    from clalign.sw.striped_end import LONG_END

    rng = np.random.default_rng(12)
    lc = np.frombuffer(L.encode() + b"-", np.uint8)
    q = rng.integers(1, 21, 90).astype(np.uint8)
    lens = np.zeros(GROUP, np.int64)
    lens[:6] = [LONG_END + 1, LONG_END + 700, 40, 75, LONG_END, 0]
    subs = np.zeros((GROUP, int(lens.max())), np.uint8)
    for k in range(6):
        subs[k, :lens[k]] = rng.integers(1, 21, lens[k])
        if lens[k] > 60:
            at = int(lens[k]) - 50 if k == 1 else 7
            subs[k, at:at + 30] = q[30:60]
    tg = np.array([sw_score(q, subs[k, :lens[k]], M, 11, 1) for k in range(GROUP)], np.int32)
    info, qt, st, off = trace_group(q, subs, lens, tg, M.astype(np.int16), M.astype(np.int32), M, 12, 1,
                                    CELL_BUDGET, lc, True)
    for k in range(GROUP):
        assert info[k, 8] == 1
        if tg[k] > 0:
            i0, j0, ops = align_pair(q, subs[k, :lens[k]], M, 11, 1, int(tg[k]))
            qs, ss = ops_strings(q, subs[k, :lens[k]], i0, j0, ops, L)
            assert (qt[off[k]:off[k + 1]].tobytes().decode(), st[off[k]:off[k + 1]].tobytes().decode()) == (qs, ss)
            assert (info[k, 0], info[k, 2]) == (i0, j0)
