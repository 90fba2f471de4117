"""Greedy gapped extension and traceback (megablast) against blastn 2.12 and against the
plain-Python reference (``.py_func``) of the same rules."""
import numpy as np
import pytest

from clalign.blast import nucl_greedy as g
from clalign.blast import nucl_traceback as tb
from clalign.data.nucleotide import blastna_matrix
from test_blastn_gapped_driver import golden_mismatches, pack, plain_python

READS = [f"r{i}" for i in range(1, 237)]   # r221-r236: on the 120,000-base contig


@pytest.mark.parametrize("run,reads", [("megablast", READS[:80] + READS[160:190] + READS[220:228]),
                                       ("mb_2_3_0_0", READS[80:110] + READS[190:200] + READS[228:232]),
                                       ("mb_1_2_2_2", READS[110:140] + READS[200:210] + READS[232:234]),
                                       ("mb_2_3_5_2", READS[140:160] + READS[210:220] + READS[234:])])
def test_golden_megablast(run, reads):
    """outfmt 6 qstart qend sstart send gaps mismatch score btop identical to blastn."""
    bad, n = golden_mismatches(run, reads)
    assert n > 0.9 * len(reads)
    assert bad == []


def _case(rng, n, sub, indel, amb_q=0.0, amb_s=0.0):
    s = rng.integers(0, 4, n).astype(np.uint8)
    q = []
    i = 0
    while i < n:
        r = rng.random()
        if r < indel / 2:
            i += int(rng.integers(1, 4))
            continue
        if r < indel:
            q += list(rng.integers(0, 4, int(rng.integers(1, 4))))
        c = int(s[i])
        if rng.random() < sub:
            c = (c + int(rng.integers(1, 4))) % 4
        elif rng.random() < amb_q:
            c = int(rng.integers(4, 15))
        q.append(c)
        i += 1
    q = np.array(q, dtype=np.uint8)
    s_full = s.copy()
    amb = rng.random(n) < amb_s
    s_full[amb] = rng.integers(4, 15, int(amb.sum()))
    return q, s, s_full


COSTS = [(1, -2, 0, 0), (2, -3, 0, 0), (1, -2, 2, 2), (2, -3, 5, 2), (1, -3, 2, 1)]


def _script_score(q, s, q0, s0, ops, nums, reward, penalty, gap_open, gap_extend):
    """Score of a script with mismatch-only scoring (what the greedy aligner optimises), in
    doubled units for odd rewards and linear gap letters of reward/2 - penalty."""
    f = 2 if reward % 2 else 1
    r, p, go, ge = reward * f, penalty * f, gap_open * f, gap_extend * f
    if go == 0 and ge == 0:
        ge = r // 2 - p
    total, i, j = 0, q0, s0
    for op, n in zip(ops, nums):
        if op == g.SUB:
            for _ in range(n):
                total += r if (q[i] < 4 and q[i] == s[j]) else p
                i += 1
                j += 1
        else:
            total -= go + ge * n
            i += n if op == g.INS else 0
            j += n if op == g.DEL else 0
    return total, i, j


@pytest.mark.parametrize("costs", COSTS)
def test_reference_and_script(costs):
    """Compiled = reference (all outputs), on packed and restored subjects; the traceback script
    spans the reported box and scores what the aligner reports."""
    reward, penalty, go, ge = costs
    rng = np.random.default_rng(sum(costs) + 7)
    for k in range(6):
        q, s, s_full = _case(rng, int(rng.integers(40, 260)), [0, .02, .08][k % 3], [0, .02, .05][k % 3],
                             .02 if k % 2 else 0, .02 if k > 2 else 0)
        n = min(len(q), len(s))
        qo, so = int(rng.integers(0, n)), int(rng.integers(0, n))
        if k % 2:
            so = qo   # on the main diagonal
        for packed in (True, False):
            subj = pack(s) if packed else s_full
            for trace in ((False,) if packed else (False, True)):
                args = (q, len(q), subj, 0, len(s), qo, so, packed, trace, reward, penalty, go, ge, 40)
                fast = g.greedy_gapped(*args)
                with plain_python():
                    ref = g.greedy_gapped(*args)
                assert [int(x) for x in ref[:7]] == [int(x) for x in fast[:7]]
                assert ref[9] == fast[9]
                assert list(ref[7][:ref[9]]) == list(fast[7][:fast[9]])
                assert list(ref[8][:ref[9]]) == list(fast[8][:fast[9]])
                if trace:
                    sc, qe, se = _script_score(q, s_full, ref[1], ref[3], ref[7][:ref[9]], ref[8][:ref[9]],
                                               reward, penalty, go, ge)
                    assert (qe, se) == (ref[2], ref[4])
                    if go == 0 and ge == 0:
                        cols = tb.script_columns(ref[7][:ref[9]], ref[8][:ref[9]])
                        qi, si, dist = ref[1], ref[3], 0
                        for op in cols:
                            if op == g.SUB:
                                dist += not (q[qi] < 4 and q[qi] == s_full[si])
                            else:
                                dist += 1
                            qi += op != g.DEL
                            si += op != g.INS
                        ext = (qe - ref[1]) + (se - ref[3])
                        assert ref[0] == ext * reward // 2 - dist * (reward - penalty)
                    else:
                        f = 2 if reward % 2 else 1
                        assert sc == ref[0] * f


def test_runs_at_ends():
    """Exact runs to either end of either sequence stop the extension there (early exit)."""
    m = blastna_matrix(1, -2).astype(np.int32)
    s = np.array([0, 1, 2, 3] * 30, dtype=np.uint8)
    q = s[10:70].copy()
    r = g.greedy_gapped(q, len(q), s, 0, len(s), 20, 30, False, True, 1, -2, 0, 0, 20)
    assert [int(x) for x in r[:5]] == [60, 0, 60, 10, 70]
    assert list(r[7][:r[9]]) == [g.SUB] and list(r[8][:r[9]]) == [60]
    found, score, q0, q1, s0, s1, qg, sg, ops, nums = tb.greedy_traceback(m, q, s, len(s), 0, 60, 10, 70, 20, 30,
                                                                           1, -2, 0, 0, 54)
    assert found and (score, q0, q1, s0, s1) == (60, 0, 60, 10, 70)


def test_reduce_gaps_keeps_box():
    """s_ReduceGaps moves gaps but keeps the letters each side consumes; reference = compiled."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        q, s, s_full = _case(rng, 200, .03, .04)
        r = g.greedy_gapped(q, len(q), s_full, 0, len(s), min(len(q), len(s)) // 2, min(len(q), len(s)) // 2,
                            False, True, 1, -2, 0, 0, 60)
        for f in (tb.reduce_gaps, tb.reduce_gaps.py_func):   # (no numba callees)
            ops, nums = r[7][:r[9]].copy(), r[8][:r[9]].copy()
            size = f(ops, nums, r[9], q, s_full, r[1], r[3], r[2], r[4])
            qn = sum(int(n) for o, n in zip(ops[:size], nums[:size]) if o != g.DEL)
            sn = sum(int(n) for o, n in zip(ops[:size], nums[:size]) if o != g.INS)
            assert (qn, sn) == (r[2] - r[1], r[4] - r[3])
            assert all(n > 0 for n in nums[:size])
            assert all(ops[i] != ops[i + 1] for i in range(size - 1))


def test_prelim_batch():
    """greedy_prelim_all on a two-query batch = greedy_prelim per row on each context."""
    rng = np.random.default_rng(2)
    s = rng.integers(0, 4, 3000).astype(np.uint8)
    sp = pack(s)
    ctx = [s[100:700].copy(), s[1500:2400][::-1].copy(), s[2000:2300].copy()]
    ctx[0][::37] = (ctx[0][::37] + 1) % 4
    offsets = np.array([0, 601, 1502], dtype=np.int64)
    lengths = np.array([600, 900, 300], dtype=np.int64)
    qcat = np.full(1802, 15, dtype=np.uint8)
    for o, c in zip(offsets, ctx):
        qcat[o:o + len(c)] = c
    rows = np.array([[0, 10, 110, 30], [0, 300, 400, 28], [2, 0, 2000, 300], [1, 5, 1800, 40]], dtype=np.int64)
    out = g.greedy_prelim_all(qcat, offsets, lengths, sp, len(s), rows, 1, -2, 0, 0, 13)
    for k, (c, qs, ss, n) in enumerate(rows):
        one = g.greedy_prelim(ctx[c], len(ctx[c]), sp, len(s), qs, ss, n, 1, -2, 0, 0, 13)
        assert [int(x) for x in one] == list(out[k])
    assert out[2, 0] == 300 and list(out[2, 1:5]) == [0, 300, 2000, 2300]
