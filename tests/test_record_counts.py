"""Alignment.make's compiled column counts equal the letter-by-letter statement."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from clalign.data.alphabet import PROTEIN
from clalign.output.record import Alignment


def _counts_ref(qseq, sseq, scores=None, letters=None):
    lut = None if scores is None else {ch: i for i, ch in enumerate(letters)}
    nident = positive = gaps = opens = 0
    prev_q = prev_s = False
    for a, b in zip(qseq, sseq):
        gq, gs = a == "-", b == "-"
        if gq or gs:
            gaps += 1
            opens += (gq and not prev_q) or (gs and not prev_s)
        elif a == b:
            nident += 1
            positive += 1 if lut is None else int(scores[lut[a], lut[b]] > 0)
        elif lut is not None and scores[lut[a], lut[b]] > 0:
            positive += 1
        prev_q, prev_s = gq, gs
    return nident, positive, gaps, opens


_ALPHA = "ACDEFGHIKLMN-"
_MATRIX = np.random.default_rng(1).integers(-4, 5, (len(PROTEIN.letters),) * 2)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ALPHA), st.sampled_from(_ALPHA)), max_size=60),
       st.booleans())
def test_counts_equal_statement(cols, with_matrix):
    q = "".join(a for a, _ in cols)
    s = "".join(b for _, b in cols)
    kw = dict(scores=_MATRIX, letters=PROTEIN.letters) if with_matrix else {}
    a = Alignment.make("q", "s", 100, 100, 1, 1.0, 1.0, 1, 1, q, s, **kw)
    assert (a.nident, a.positive, a.gaps, a.gapopen) == _counts_ref(q, s, **kw)
    assert a.qend == len(q) - q.count("-") and a.send == len(s) - s.count("-")


def test_unscored_letter_is_a_key_error():
    with pytest.raises(KeyError):
        Alignment.make("q", "s", 3, 3, 1, 1.0, 1.0, 1, 1, "AB#", "ABC", scores=_MATRIX,
                       letters=PROTEIN.letters)
