"""BLASTP's compiled host stages against their plain forms (the spec).

- ``itree_nb`` against ``itree.IntervalTree``: the same containment answers after every add of
  random HSP sequences with many shared start/end points;
- ``stages_nb.purge_and_order`` against ``purge_common_endpoints`` + ``score_key``;
- ``build_lookup_fast`` against ``build_lookup``;
- a whole query (``engine.search_query``, one and several threads) against
  ``reference.search_query_reference`` on planted homologs with repeats (subjects with many
  HSPs, so containment, purging and the restricted-then-exact redo all take part).
"""
import numpy as np
import pytest

from clalign.blast import engine, itree_nb
from clalign.blast.engine import Subjects, search_query
from clalign.blast.hsp import HSP, purge_common_endpoints, score_key
from clalign.blast.itree import IntervalTree
from clalign.blast.lookup import build_lookup, build_lookup_fast
from clalign.blast.matrix import blast_matrix
from clalign.blast.options import blastp_options
from clalign.blast.reference import search_query_reference
from clalign.blast.stages_nb import purge_and_order
from clalign.data.alphabet import PROTEIN

AA = np.array([PROTEIN.letters.index(c) for c in "ARNDCQEGHILKMFPSTWYV"], dtype=np.uint8)


def _hsps(rng, n, qlen, slen):
    """Random HSPs drawn from few start/end points, so many share one."""
    pts_q, pts_s = rng.integers(0, qlen, 6), rng.integers(0, slen, 6)
    out = []
    for _ in range(n):
        i, j = rng.integers(0, 6, 2)
        q0, s0 = int(pts_q[i]), int(pts_s[i])
        if rng.random() < 0.5:
            q1, s1 = int(pts_q[j]), int(pts_s[j])
        else:
            q1, s1 = q0 + int(rng.integers(1, 80)), s0 + int(rng.integers(1, 80))
        q0, q1 = sorted((q0, q1))
        s0, s1 = sorted((s0, s1))
        out.append(HSP(int(rng.integers(20, 40)), q0, q1 + 1, s0, s1 + 1))
    return out


def _table(hsps):
    return np.array([[h.score, h.q_start, h.q_end, h.s_start, h.s_end, 0, 0] for h in hsps],
                    dtype=np.int64).reshape(-1, 7)


def test_tree_equals_reference():
    rng = np.random.default_rng(5)
    for trial in range(60):
        qlen, slen = int(rng.integers(20, 400)), int(rng.integers(20, 3000))
        hsps = _hsps(rng, int(rng.integers(1, 40)), qlen, slen)
        probes = _hsps(rng, 20, qlen, slen)
        H = _table(hsps + probes)
        ref = IntervalTree(qlen + 1, slen + 1)
        nodes, st = itree_nb.new_tree(qlen + 1, slen + 1, 8)
        for k, h in enumerate(hsps):
            ref.add(h)
            nodes = itree_nb.reserve(nodes, st)
            itree_nb.add(nodes, st, H, k)
            for p in probes[:5] + [h]:
                assert itree_nb.contains(nodes, H, p.score, p.q_start, p.q_end, p.s_start,
                                         p.s_end) == ref.contains(p), (trial, k)
        for p in probes:
            got = itree_nb.contains(nodes, H, p.score, p.q_start, p.q_end, p.s_start, p.s_end)
            assert got == ref.contains(p)


def test_purge_and_order_equals_reference():
    rng = np.random.default_rng(8)
    for trial in range(200):
        hsps = _hsps(rng, int(rng.integers(0, 30)), 100, 100)
        for i, h in enumerate(hsps):
            h.q_gapped_start = i   # identity through the sort
        want = [h.q_gapped_start for h in sorted(purge_common_endpoints(hsps), key=score_key)]
        assert purge_and_order(_table(hsps), len(hsps)).tolist() == want


@pytest.mark.parametrize("matrix,threshold", [("BLOSUM62", 11), ("BLOSUM62", 0), ("PAM30", 16),
                                              ("BLOSUM45", 14)])
def test_lookup_fast_equals_reference(matrix, threshold):
    rng = np.random.default_rng(3)
    m = blast_matrix(matrix)
    for n in (2, 3, 4, 37, 400):
        q = rng.integers(0, 28, n).astype(np.uint8)
        a, b = build_lookup(q, m, threshold), build_lookup_fast(q, m, threshold)
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.qoffs, b.qoffs)
        assert np.array_equal(a.present, b.present)


def _mutate(rng, seq, ident):
    out = []
    for c in seq:
        r = rng.random()
        if r < 0.03:
            continue
        if r < 0.06:
            out.extend(rng.choice(AA, size=int(rng.integers(1, 5))))
        out.append(c if rng.random() < ident else rng.choice(AA))
    return np.array(out, dtype=np.uint8)


def _planted(seed):
    rng = np.random.default_rng(seed)
    motif = rng.choice(AA, 60)
    query = np.concatenate([rng.choice(AA, 40), motif, rng.choice(AA, 30), motif,
                            rng.choice(AA, 200), _mutate(rng, motif, 0.8), rng.choice(AA, 20)])
    seqs = []
    for k in range(120):
        parts = [rng.choice(AA, int(rng.integers(5, 300)))]
        for _ in range(int(rng.integers(0, 5))):
            piece = query[int(rng.integers(0, 200)):][:int(rng.integers(30, 300))]
            parts += [_mutate(rng, piece, float(rng.uniform(0.3, 0.95))),
                      rng.choice(AA, int(rng.integers(0, 200)))]
        seqs.append(np.concatenate(parts))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    return query, Subjects(np.concatenate(seqs), offsets, [f"s{k}" for k in range(len(seqs))])


def _flat(result):
    return [(oid, h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.evalue, h.bit_score,
             bytes(np.asarray(h.ops))) for oid, hsps in result for h in hsps]


@pytest.mark.parametrize("seed,opts", [(1, {}), (2, dict(evalue=1e-3, max_target_seqs=7)),
                                       (3, dict(max_hsps=2, max_target_seqs=30)),
                                       (4, dict(searchsp=10 ** 9)),
                                       (5, dict(dbsize=10 ** 10))])   # restricted DP and redo
def test_search_query_equals_reference(seed, opts, monkeypatch):
    query, subjects = _planted(seed)
    o = blastp_options(**opts)
    want = _flat(search_query_reference(query, subjects, o))
    assert len(want) > 10
    assert _flat(search_query(query, subjects, o)) == want
    monkeypatch.setattr(engine, "ROWS_PER_CHUNK", 50)   # several preliminary chunks too
    assert _flat(search_query(query, subjects, o, threads=3)) == want


def test_offsets_for_gapped_equals_reference():
    """The start point used when a preliminary HSP has none saved (both offsets 0)."""
    from clalign.blast.reference import _offsets_for_gapped
    from clalign.blast.stages_nb import offsets_for_gapped

    rng = np.random.default_rng(13)
    m = blast_matrix("BLOSUM62")
    out = np.zeros(2, dtype=np.int64)
    seen = set()
    for _ in range(300):
        q = rng.choice(AA, int(rng.integers(12, 120)))
        s = rng.choice(AA, int(rng.integers(12, 120)))
        if rng.random() < 0.5:   # a shared stretch, so some windows score above 0
            n = int(rng.integers(5, min(len(q), len(s))))
            s[:n] = q[:n]
        qs, ss = int(rng.integers(0, len(q) - 11)), int(rng.integers(0, len(s) - 11))
        qe, se = int(rng.integers(qs + 1, len(q) + 1)), int(rng.integers(ss + 11, len(s) + 1))
        qe = max(qe, qs + 11) if rng.random() < 0.8 else qe
        base = int(rng.integers(0, 5))
        padded = np.concatenate([rng.choice(AA, base), s])
        want = _offsets_for_gapped(m, q, s, HSP(0, qs, min(qe, len(q)), ss, se))
        ok = offsets_for_gapped(m, q, padded, base, qs, min(qe, len(q)), ss, se, out)
        assert (tuple(out.tolist()) if ok else None) == want
        seen.add(want is None)
    assert seen == {True, False}
