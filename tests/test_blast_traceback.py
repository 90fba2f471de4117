"""BLASTP traceback stage: ALIGN_EX against the score-only DP and against its own ops.

The traceback DP visits the same cells as the score-only DP, so with the same X-drop both give
the same score and ends; the ops must re-score to the reported score and span the extents.
"""
import numpy as np
import pytest

from clalign.blast.gapped import prot_gapped
from clalign.blast.matrix import blast_matrix
from clalign.blast.traceback import DEL, INS, SUB, gapped_traceback
from clalign.data.alphabet import PROTEIN

B62 = blast_matrix("BLOSUM62")
AA = np.array([PROTEIN.letters.index(c) for c in "ARNDCQEGHILKMFPSTWYV"], dtype=np.uint8)


def _homolog(rng, q, ident):
    out = []
    for c in q:
        r = rng.random()
        if r < 0.04:
            continue
        if r < 0.08:
            out.extend(rng.choice(AA, size=rng.integers(1, 6)))
        out.append(c if rng.random() < ident else rng.choice(AA))
    return np.array(out, dtype=np.uint8)


def _rescore(q, s, ext, ops, go, ge):
    i, j, score, prev = ext[0], ext[2], 0, SUB
    for op in ops:
        if op == SUB:
            score += B62[q[i], s[j]]
            i += 1
            j += 1
        else:
            score -= ge + (go if op != prev else 0)
            if op == DEL:
                j += 1
            else:
                i += 1
        prev = op
    return score, i, j


@pytest.mark.parametrize("seed", range(10))
def test_traceback_matches_score_only_and_rescored(seed):
    rng = np.random.default_rng(seed)
    q = rng.choice(AA, size=int(rng.integers(30, 400))).astype(np.uint8)
    s = np.concatenate([rng.choice(AA, size=40), _homolog(rng, q, 0.35 + 0.06 * seed),
                        rng.choice(AA, size=30)]).astype(np.uint8)
    q_off = len(q) // 2
    s_off = min(40 + q_off, len(s) - 1)
    for xd in (38, 64):
        e1 = np.zeros(4, dtype=np.int32)
        e2 = np.zeros(4, dtype=np.int32)
        s1 = prot_gapped(B62, q, s, 0, len(s), q_off, s_off, 11, 1, xd, False, e1)
        s2, ops = gapped_traceback(B62, q, s, 0, len(s), q_off, s_off, 11, 1, xd, e2)
        assert s1 == s2 and list(e1) == list(e2)
        py_score, py_ops = gapped_traceback.py_func(B62, q, s, 0, len(s), q_off, s_off, 11, 1, xd,
                                                    np.zeros(4, dtype=np.int32))
        assert py_score == s2 and list(py_ops) == list(ops)
        score, i, j = _rescore(q, s, e2, ops, 11, 1)
        assert score == s2 and (i, j) == (e2[1], e2[3])
