"""BLASTN ungapped extension (na_ungapped.c rules) against an independent X-drop formulation."""
import numpy as np

from clalign.blast.nucl_ungapped import nucl_score_table, ungapped_approx, ungapped_exact
from clalign.data.nucleotide import blastna_matrix


def _pack(b):
    b = np.concatenate([b, np.zeros((-len(b)) % 4, dtype=np.uint8)])
    return (b[0::4] << 6 | b[1::4] << 4 | b[2::4] << 2 | b[3::4]).astype(np.uint8)


def _xdrop(pairs, X, before=None):
    """(bases kept, score) of a one-sided X-drop walk over pair scores: the end moves to every
    strictly better prefix; stop when the prefix falls below best + X. ``before``: the score
    already gathered on the other side; then, once a prefix improved, the walk also stops when
    it falls more than the whole score so far below the best (BLAST+'s right-side rule)."""
    best, cur, keep, x = 0, 0, 0, X
    for k, v in enumerate(pairs):
        cur += v
        if cur > best:
            best, keep = cur, k + 1
            if before is not None:
                x = max(-(before + best), X)
        elif cur - best < x:
            break
    return keep, best


def test_exact_extension_matches_xdrop_definition():
    rng = np.random.default_rng(8)
    m = blastna_matrix(1, -2)
    for _ in range(400):
        q1 = rng.integers(0, 4, int(rng.integers(30, 120))).astype(np.uint8)
        q = np.concatenate([q1, [15], rng.integers(0, 4, 50).astype(np.uint8)]).astype(np.uint8)
        q[rng.random(len(q)) < 0.02] = 14
        q[len(q1)] = 15
        sb = rng.integers(0, 4, int(rng.integers(40, 160))).astype(np.uint8)
        qo = int(rng.integers(0, len(q)))
        so = int(rng.integers(0, len(sb)))
        n = min(len(q) - qo, len(sb) - so)
        k = int(rng.integers(0, n + 1))
        sb[so:so + k] = np.where(q[qo:qo + k] < 4, q[qo:qo + k], sb[so:so + k])
        X = -int(rng.integers(5, 25))
        got = ungapped_exact(q, _pack(sb), len(sb), m, qo, so, X)
        qq = lambda i: int(q[i]) if 0 <= i < len(q) else 15
        lk, ls = _xdrop([m[qq(qo - j), sb[so - j]] for j in range(1, min(qo, so) + 1)], X)
        rk, rs = _xdrop([m[qq(qo + j), sb[so + j]] for j in range(n)], X, before=ls)
        assert got == (qo - lk, so - lk, lk + rk, ls + rs)


def test_score_table_and_approx_fallback():
    t = nucl_score_table(1, -2)
    assert t[0] == 4 and t[0b01000000] == 1 and t[0xFF] == -8
    from clalign.blast.nucl_ungapped import reduced_cutoff
    assert reduced_cutoff(27) == 21 and reduced_cutoff(10) == 8
    rng = np.random.default_rng(2)
    m = blastna_matrix(1, -2)
    for _ in range(300):
        q = rng.integers(0, 4, 200).astype(np.uint8)
        sb = q.copy()
        flip = rng.random(200) < 0.08
        sb[flip] = (sb[flip] + 1) % 4
        s = _pack(sb)
        qo = int(rng.integers(20, 170))
        so = qo
        ex = ungapped_exact(q, s, 200, m, qo, so, -20)
        assert ungapped_approx(q, s, 200, m, t, qo, so + 11, so, -20, 0) == ex
        ap = ungapped_approx(q, s, 200, m, t, qo, so + 11, so, -20, 10 ** 9)
        q_start, s_start, length, score = ap
        pad = (4 - so % 4) % 4
        qe = qo + pad
        assert q_start - s_start == qo - so and (q_start - qe) % 4 == 0
        assert s_start + length >= so + 11
        byte = lambda i: int(q[i] << 6 | q[i + 1] << 4 | q[i + 2] << 2 | q[i + 3])
        lk, ls = _xdrop([t[byte(qe - 4 * j) ^ s[qe // 4 - j]] for j in range(1, qe // 4 + 1)], -20)
        rk, rs = _xdrop([t[byte(qe + 4 * j) ^ s[qe // 4 + j]] for j in range((200 - qe) // 4)], -20)
        assert score == ls + rs and q_start == qe - 4 * lk
        assert length == max(so + 11 - s_start, (qe + 4 * rk - 1 if rk else qe) - q_start + 1)
