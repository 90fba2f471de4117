"""Dynamic-programming gapped extension and traceback (-task blastn) against blastn 2.12, the
plain-Python reference (``.py_func``) and BLASTP's score-only DP on the unpacked subject."""
import numpy as np
import pytest

from clalign.blast import gapped, nucl_gapped as ng, nucl_traceback as tb
from clalign.data.nucleotide import blastna_matrix
from test_blastn_gapped_driver import golden_mismatches, pack, plain_python

READS = [f"r{i}" for i in range(1, 237)]   # r221-r236: on the 120,000-base contig
#: Reads whose best line the driver does not reproduce: bn_2_7_4_2 r24, same score, another
#: co-optimal path in its last 30 columns; no start point of the traceback (any X-drop) gives
#: blastn's path. Not explained. (With a smaller database, blastn's 1/-3 line for this read
#: also differed, and was reproduced by starting the traceback where blastn's seeds put it.)
KNOWN = {"bn_2_7_4_2": ["r24"]}


@pytest.mark.parametrize("run,reads", [("blastn", READS[:50] + READS[160:180] + READS[220:226]),
                                       ("bn_1_3_2_2", READS[:30] + READS[180:200] + READS[226:231]),
                                       ("bn_2_7_4_2", READS[20:30] + READS[70:100] + READS[200:220]
                                        + READS[231:])])
def test_golden_blastn(run, reads):
    """Best line per read (qstart qend sstart send gaps mismatch score btop) identical to blastn."""
    bad, n = golden_mismatches(run, reads)
    assert n == len(reads)
    assert bad == [r for r in KNOWN.get(run, []) if r in reads]


def _unpack(sp, n):
    return ((sp[:, None] >> np.array([6, 4, 2, 0], dtype=np.uint8)) & 3).reshape(-1)[:n].astype(np.uint8)


@pytest.mark.parametrize("costs", [(2, -3, 5, 2), (1, -3, 2, 2), (1, -2, 1, 2), (2, -7, 4, 2)])
def test_align_packed(costs):
    """s_BlastAlignPackedNucl = BLASTP's Blast_SemiGappedAlign on the unpacked subject (rows and
    cells swapped: the BLASTNA matrix is symmetric), both directions; reference = compiled."""
    reward, penalty, go, ge = costs
    m = blastna_matrix(reward, penalty).astype(np.int32)
    rng = np.random.default_rng(reward * 10 - penalty)
    for k in range(8):
        n = int(rng.integers(30, 200))
        s = rng.integers(0, 4, n).astype(np.uint8)
        q = s.copy()
        flip = rng.random(n) < [0.02, 0.1, 0.3][k % 3]
        q[flip] = (q[flip] + 1) % 4
        q = np.delete(q, rng.integers(0, n, int(rng.integers(0, 4))))
        amb = rng.random(len(q)) < 0.03
        q[amb] = rng.integers(4, 15, int(amb.sum()))
        sp = pack(s)
        x = int(rng.integers(10, 60))
        for rev in (False, True):
            q0 = int(rng.integers(1, len(q)))
            s0 = int(rng.integers(1, n))
            N = q0 if rev else len(q) - q0
            M = s0 if rev else n - s0
            out1 = np.zeros(2, dtype=np.int64)
            out2 = np.zeros(2, dtype=np.int64)
            out3 = np.zeros(2, dtype=np.int32)
            a = ng.align_packed(m, q, q0, N, sp, s0, M, rev, go, ge, x, out1)
            with plain_python():
                b = ng.align_packed(m, q, q0, N, sp, s0, M, rev, go, ge, x, out2)
            su = _unpack(sp, n)
            if rev:   # rows read su[s0 - a], cells q[q0 - 1 - b]
                c = gapped.semi_gapped(m, su, s0, -1, M, q, q0 - 1, -1, N, go, ge, x, out3)
            else:     # rows read su[s0 + a - 1], cells q[q0 + b]
                c = gapped.semi_gapped(m, su, s0 - 1, 1, M, q, q0, 1, N, go, ge, x, out3)
            assert a == b == c
            assert list(out1) == list(out2) == list(out3)


def _affine_score(m, q, s, q0, s0, ops, nums, go, ge):
    total, i, j = 0, q0, s0
    for op, n in zip(ops, nums):
        if op == tb.SUB:
            for _ in range(n):
                total += int(m[q[i], s[j]])
                i += 1
                j += 1
        else:
            total -= go + ge * int(n)
            i += int(n) if op == tb.INS else 0
            j += int(n) if op == tb.DEL else 0
    return total, i, j


def test_prelim_and_traceback():
    """dp_prelim and dp_traceback: compiled = reference; the traceback script spans its box and
    scores its score with the BLASTNA matrix (ambiguity codes on both sides)."""
    m = blastna_matrix(2, -3).astype(np.int32)
    rng = np.random.default_rng(3)
    for k in range(10):
        n = int(rng.integers(60, 300))
        s = rng.integers(0, 4, n).astype(np.uint8)
        lo = int(rng.integers(0, n // 3))
        q = s[lo:].copy()
        flip = rng.random(len(q)) < 0.05
        q[flip] = (q[flip] + 2) % 4
        q = np.insert(q, int(rng.integers(10, len(q))), rng.integers(0, 4, int(rng.integers(1, 4))).astype(np.uint8))
        amb = rng.random(len(q)) < 0.02
        q[amb] = rng.integers(4, 15, int(amb.sum()))
        s_full = s.copy()
        amb = rng.random(n) < 0.02
        s_full[amb] = rng.integers(4, 15, int(amb.sum()))
        sp = pack(s)
        qo = int(rng.integers(0, min(20, len(q) - 1)))
        so = qo + lo
        args = (m, q, len(q), sp, n, qo, so, so + 20, 30, 5, 2, 33)
        r1 = ng.dp_prelim(*args)
        with plain_python():
            r2 = ng.dp_prelim(*args)
        assert [int(x) for x in r1] == [int(x) for x in r2]
        s_pad = np.append(s_full, np.uint8(15))
        args = (m, q, s_pad, n, r1[1], r1[2], r1[3], r1[4], r1[5], r1[6], 5, 2, 110)
        t1 = tb.dp_traceback(*args)
        with plain_python():
            t2 = tb.dp_traceback(*args)
        assert [int(x) for x in t1[:8]] == [int(x) for x in t2[:8]]
        assert list(t1[8]) == list(t2[8]) and list(t1[9]) == list(t2[9])
        if t1[0]:
            sc, qe, se = _affine_score(m, q, s_full, t1[2], t1[4], t1[8], t1[9], 5, 2)
            assert (sc, qe, se) == (t1[1], t1[3], t1[5])


def test_start_for_gapped_nucl():
    """BlastGetStartForGappedAlignmentNucl on planted runs: a start inside > 10 identities stays;
    otherwise the middle of the first run longer than 15, else of the longest run."""
    f = tb.start_for_gapped_nucl.py_func   # (no numba callees but _eq: same code either way)
    q = np.array([0, 1, 2, 3] * 25, dtype=np.uint8)
    s = q.copy()
    assert f(q, s, 0, 100, 0, 100, 40, 40) == (40, 40)
    s = q.copy()
    s[::5] = (s[::5] + 1) % 4                         # runs of 4: none long enough
    s[50:70] = q[50:70]                               # one run of 20 identities (q 50..69 + s 50)
    s[70] = (q[70] + 1) % 4
    assert tb.start_for_gapped_nucl(q, s, 0, 100, 0, 100, 12, 12) == f(q, s, 0, 100, 0, 100, 12, 12)
    a, b = f(q, s, 0, 100, 0, 100, 12, 12)
    assert a == b and 50 <= a < 70
    s2 = q.copy()
    s2[::5] = (s2[::5] + 1) % 4
    s2[30:43] = q[30:43]                              # longest run 13 (< 16): its middle
    a, b = f(q, s2, 0, 100, 0, 100, 3, 3)
    assert (a, b) == tuple(int(x) for x in tb.start_for_gapped_nucl(q, s2, 0, 100, 0, 100, 3, 3))
    assert 30 <= a < 45


def test_reevaluate_matches_rescoring():
    """reevaluate_gapped: compiled = reference; the kept script re-scores to the kept score
    (matrix columns, affine gaps) and spans the kept box."""
    m = blastna_matrix(1, -2).astype(np.int32)
    rng = np.random.default_rng(8)
    for k in range(12):
        n = 200
        s = rng.integers(0, 4, n).astype(np.uint8)
        q = s.copy()
        bad = rng.random(n) < 0.06
        q[bad] = rng.integers(4, 15, int(bad.sum()))   # ambiguity codes: the matrix decides
        ops = np.array([tb.SUB], dtype=np.int8)
        nums = np.array([n - 20], dtype=np.int64)
        args = (m, q, s, n, 10, 10, ops, nums, 1, -2, 0, 0, 15)
        r1 = tb.reevaluate_gapped(*args)
        with plain_python():
            r2 = tb.reevaluate_gapped(*args)
        assert [int(x) for x in r1[:6]] == [int(x) for x in r2[:6]]
        if r1[0]:
            sc, qe, se = _affine_score(m, q, s, r1[2], r1[4], r1[6], r1[7], 0, 5)
            assert (qe, se) == (r1[3], r1[5])
            assert sc == r1[1]


def test_prelim_batch():
    """dp_prelim_all on a query batch = dp_prelim per row on each context."""
    m = blastna_matrix(2, -3).astype(np.int32)
    rng = np.random.default_rng(4)
    s = rng.integers(0, 4, 2000).astype(np.uint8)
    sp = pack(s)
    c0, c1 = s[200:800].copy(), s[1000:1300].copy()
    c0[::29] = (c0[::29] + 1) % 4
    qcat = np.concatenate([c0, [15], c1]).astype(np.uint8)
    offsets = np.array([0, 601], dtype=np.int64)
    lengths = np.array([600, 300], dtype=np.int64)
    rows = np.array([[0, 40, 240, 270, 40], [1, 7, 1007, 1040, 60], [0, 400, 600, 650, 80]], dtype=np.int64)
    out = ng.dp_prelim_all(m, qcat, offsets, lengths, sp, len(s), rows, 5, 2, 33)
    for k, (c, qo, so, se, sc) in enumerate(rows):
        qc = (c0, c1)[c]
        one = ng.dp_prelim(m, qc, len(qc), sp, len(s), qo, so, se, sc, 5, 2, 33)
        assert [int(x) for x in one] == list(out[k])


def test_offsets_for_gapped():
    """A preliminary start of (0, 0) takes BlastGetOffsetsForGappedAlignment: the end of the
    best 11-column window, else the end window if it scores above 0, else the HSP is dropped."""
    m = blastna_matrix(1, -2).astype(np.int32)
    q = np.array([0, 1, 2, 3] * 10, dtype=np.uint8)
    s = q.copy()
    s[:30] = (s[:30] + 1) % 4                         # only the last 10 columns match
    f = tb.offsets_for_gapped
    assert f(m, q, q, 0, 40, 0, 40) == f.py_func(m, q, q, 0, 40, 0, 40) == (True, 10, 10)
    assert f(m, q, s, 0, 40, 0, 40) == (True, 39, 39)  # best window ends at the last column
    short = f(m, q, s, 0, 9, 0, 9)
    assert short == (True, 4, 4)                       # up to 11 columns: the middle
    s2 = (q + 1) % 4
    s2[-11:] = q[-11:]
    s2[-6] = (q[-6] + 1) % 4                           # best window scores 10 - 2 = 8 > 0
    assert f(m, q, s2, 0, 40, 0, 40)[0]
    bad = (q + 1) % 4
    assert f(m, q, bad, 0, 40, 0, 40)[0] is False
    r = tb.final_start(m, q, bad, 0, 40, 0, 40, 0, 0)
    assert r[0] is False
    r = tb.dp_traceback(m, q, np.append(bad, np.uint8(15)), 40, 0, 40, 0, 40, 0, 0, 5, 2, 50)
    assert r[0] is False
