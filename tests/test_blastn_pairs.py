"""nucl_pairs (hit lists as arrays) against the per-HSP Python it replaced in blastn._search:
the same traceback units (subjects, queries, rows, in order) and the same output per query; and
nucl_search's row forms of the preliminary stage against its HSP forms."""
import os

import numpy as np
import pytest

from clalign.blast.hsp import hitlist_key
from clalign.blast.nucl_hsp import add_subject_hits
from clalign.blast.nucl_pairs import FinalHits, PrelimHits
from clalign.blast.nucl_search import (hsps_of_rows, prelim_combine, prelim_combine_rows, prelim_piece,
                                       prelim_piece_rows, rows_of_hsps, subject_array)
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.blast.nucl_words import DiagState
from clalign.data.nucleotide import open_nucleotide

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def _subjects(rng, nsub, nctx):
    """Random preliminary lists: (oid, rows, E-values), E-values with ties and values < 1e-180."""
    evals = np.array([0.0, 1e-200, 1e-190, 1e-50, 1e-50, 2e-10, 0.5, 3.0])
    for oid in range(nsub):
        n = int(rng.integers(0, 12))
        rows = rng.integers(0, 500, size=(n, 8))
        rows[:, 0] = rng.integers(20, 40, size=n)
        rows[:, 5] = rng.integers(0, nctx, size=n)
        yield oid, rows.astype(np.int64), evals[rng.integers(0, len(evals), size=n)]


def _units_ref(subjects, query_of, nq, hitlist_size, threads):
    """blastn._search's Python before nucl_pairs (add_subject_hits, per-query sort, jobs)."""
    per_query = [[] for _ in range(nq)]
    for oid, rows, e in subjects:
        hsps = hsps_of_rows(rows)
        for h, ev in zip(hsps, e.tolist()):
            h.evalue = ev
        if hsps:
            add_subject_hits(per_query, query_of, oid, hsps)
    jobs = {}
    for qi in range(nq):
        for _, oid, hs in sorted(per_query[qi], key=lambda t: t[0])[:hitlist_size]:
            jobs.setdefault(oid, []).append((qi, hs))
    units = []
    step = max(1, -(-sum(len(p) for p in jobs.values()) // (4 * threads)))
    for oid in sorted(jobs):
        pairs = jobs[oid]
        units += [(oid, pairs[i:i + step]) for i in range(0, len(pairs), step)]
    return units


@pytest.mark.parametrize("seed,hitlist_size,threads", [(1, 10, 1), (2, 2, 2), (3, 1, 16), (4, 3, 4)])
def test_units_equal_python(seed, hitlist_size, threads):
    rng = np.random.default_rng(seed)
    nq, nctx = 7, 14
    query_of = np.repeat(np.arange(nq), 2)
    subjects = list(_subjects(rng, 30, nctx))
    hits = PrelimHits(query_of)
    for oid, rows, e in subjects:
        hits.add(oid, rows, e)
    got = hits.units(hitlist_size, threads)
    want = _units_ref(subjects, query_of, nq, hitlist_size, threads)
    assert len(got) == len(want) > 0
    for (oid, qis, P, first), (woid, pairs) in zip(got, want):
        assert oid == woid
        assert qis.tolist() == [qi for qi, _ in pairs]
        assert first.tolist() == np.cumsum([0] + [len(hs) for _, hs in pairs]).tolist()
        assert np.array_equal(P, rows_of_hsps([h for _, hs in pairs for h in hs]))


@pytest.mark.parametrize("seed,max_target_seqs,max_hsps", [(1, 500, 0), (2, 2, 1), (3, 1, 0), (4, 3, 2)])
def test_final_hits_equal_python(seed, max_target_seqs, max_hsps):
    rng = np.random.default_rng(seed)
    nq = 9
    evals = np.array([0.0, 1e-200, 1e-190, 1e-30, 1e-30, 0.1])
    final, want_final, records = FinalHits(), [[] for _ in range(nq)], {}
    for oid in range(25):
        qs = np.flatnonzero(rng.random(nq) < 0.5)
        be = evals[rng.integers(0, len(evals), size=len(qs))]
        bs = rng.integers(20, 24, size=len(qs))
        recs = [[(oid, int(q), k) for k in range(int(rng.integers(1, 4)))] for q in qs]
        final.add(oid, qs, be, bs, recs)
        for q, e, s, r in zip(qs.tolist(), be.tolist(), bs.tolist(), recs):
            want_final[q].append((hitlist_key(e, s, oid), oid))
            records[q, oid] = r
    got = final.hits(nq, max_target_seqs, max_hsps)
    for q in range(nq):
        want = []
        for _, oid in sorted(want_final[q])[:max_target_seqs]:
            r = records[q, oid]
            want += r[:max_hsps] if max_hsps > 0 else r
        assert got[q] == want


@pytest.mark.parametrize("seed,max_target_seqs,max_hsps", [(1, 500, 0), (2, 2, 1), (3, 1, 0), (4, 3, 2)])
def test_final_hit_rows_equal_hits(seed, max_target_seqs, max_hsps):
    """FinalHits.hit_rows (records as column blocks) selects the rows ``hits`` selects of lists."""
    from clalign.output.columns import NUMERIC, RecordColumns

    rng = np.random.default_rng(seed)
    nq = 9
    evals = np.array([0.0, 1e-200, 1e-190, 1e-30, 1e-30, 0.1])
    lists, blocks, ident = FinalHits(), FinalHits(), 0
    for oid in range(25):
        qs = np.flatnonzero(rng.random(nq) < 0.5)
        be = evals[rng.integers(0, len(evals), size=len(qs))]
        bs = rng.integers(20, 24, size=len(qs))
        counts = rng.integers(1, 4, size=len(qs))
        recs = [list(range(ident + a, ident + a + c))
                for a, c in zip(np.r_[0, np.cumsum(counts)[:-1]].tolist(), counts.tolist())]
        ident += int(counts.sum())
        lists.add(oid, qs, be, bs, recs)
        n = sum(len(r) for r in recs)
        ids = np.array([x for r in recs for x in r], dtype=np.int64)
        num = {k: ids if k == "score" else np.zeros(n, dtype=np.int64) for k in NUMERIC}
        block = RecordColumns(num, np.zeros(n), [("q", "")], np.zeros(n), [("s", "")], np.zeros(n, bool),
                              np.zeros(n), np.zeros(0, np.uint8), np.zeros(0, np.uint8), None)
        blocks.add_block(oid, qs, be, bs, block if n else None, np.r_[0, np.cumsum([len(r) for r in recs])])
    want = lists.hits(nq, max_target_seqs, max_hsps)
    table, rows = blocks.hit_rows(nq, max_target_seqs, max_hsps)
    assert [table.num["score"][r].tolist() for r in rows] == want


def test_empty():
    assert PrelimHits([0, 0]).units(10, 2) == []
    assert FinalHits().hits(3, 5, 0) == [[], [], []]
    table, rows = FinalHits().hit_rows(3, 5, 0)
    assert table is None and [len(r) for r in rows] == [0, 0, 0]


@pytest.mark.parametrize("task", ["megablast", "blastn"])
def test_prelim_rows_equal_hsps(task):
    """prelim_piece_rows / prelim_combine_rows = prelim_piece / prelim_combine, also for a
    subject cut into overlapping pieces (merged by merge_subject_chunks)."""
    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task), nt.total_bases, len(nt))
    seen = 0
    for oid in range(len(nt)):
        s, n = subject_array(nt.packed(oid)), int(nt.lengths[oid])
        cut = (n // 2) - (n // 2) % 4
        for pieces in ([(0, n)], [(0, cut + 100), (cut, n - cut)]):
            rows = [(off, prelim_piece_rows(st, DiagState(len(st.batch.seq)), s, off, m)) for off, m in pieces]
            hsps = [(off, prelim_piece(st, DiagState(len(st.batch.seq)), s, off, m)) for off, m in pieces]
            for (_, r), (_, h) in zip(rows, hsps):
                assert np.array_equal(r, rows_of_hsps(h))
            got, e, bits = prelim_combine_rows(st, rows)
            want = prelim_combine(st, hsps)
            assert np.array_equal(got, rows_of_hsps(want))
            assert e.tolist() == [h.evalue for h in want]
            assert bits.tolist() == [h.bit_score for h in want]
            seen += len(want)
    assert seen > 20
