"""clalign.output.tabular_bytes: the lines put together in one byte matrix are the lines
``str.format`` makes; fields it declines (NUL characters, too wide a matrix) go line by line."""
import io

import numpy as np
import pytest

from clalign.output import Alignment, QueryHits, write_tabular
from clalign.output import tabular_bytes
from clalign.output.tabular import FIELDS, STD_FIELDS

from test_output import golden_results, reference_tabular  # noqa: F401 (fixture)


def test_int_cells_are_str():
    rng = np.random.default_rng(2)
    edges = [0, 1, 9, 10, 99, 100, -1, -9, -10, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 10 ** 18, -(10 ** 17)]
    for v in (edges, rng.integers(-10 ** 6, 10 ** 6, 500), rng.integers(0, 10, 40), [], [0], [-1], [7]):
        v = np.asarray(v, dtype=np.int64)
        m = tabular_bytes._int_cells(v)
        assert [bytes(r).replace(b"\0", b"").decode() for r in m] == [str(x) for x in v.tolist()]


def _odd_results():
    """Records with ids a byte matrix must carry (non-ASCII, empty-ish, a NUL character)."""
    out = []
    for qid, sid in (("q\u00e9", "s\u4e2d1"), ("q2", "s2"), ("q\0x", "s3"), ("q4", "")):
        out.append(QueryHits(qid, 30, [Alignment(qid, sid, 30, 40, 12, 22.5, 1e-5, 1, 3, 10, 1, "ACGTA-GT",
                                                 "ACGTAAGT", 7, 7, 1, 1, subject_index=len(out))]))
    return out


@pytest.mark.parametrize("comments", [False, True])
def test_bytes_and_line_by_line_equal_the_getters(golden_results, monkeypatch, comments):  # noqa: F811
    for results in (golden_results, _odd_results(), _odd_results()[:2] + [QueryHits("none", 5, [])]):
        for cols in (STD_FIELDS, tuple(FIELDS), ("qseqid", "qseqid", "score")):
            want = reference_tabular(results, cols, comments, database="d")
            for cells in (tabular_bytes.MAX_CELLS, 0):        # 0: every table line by line
                monkeypatch.setattr(tabular_bytes, "MAX_CELLS", cells)
                fh = io.StringIO()
                write_tabular(fh, results, cols, comments=comments, database="d")
                assert fh.getvalue() == want


def test_declines_nul_and_too_wide(monkeypatch):
    assert tabular_bytes.table_bytes([("text", ["a\0", "b"])], [0], 2) is None
    made = tabular_bytes.table_bytes([("text", ["ab", "c"]), ("int", np.array([5, -12]))], [0, 1, 0], 2, sizes=True)
    assert made[0] == b"ab\t5\tab\nc\t-12\tc\n" and made[1].tolist() == [8, 8]
    monkeypatch.setattr(tabular_bytes, "MAX_CELLS", 100)
    assert tabular_bytes.table_bytes([("text", ["x" * 99])], [0], 1) is not None
    assert tabular_bytes.table_bytes([("text", ["x" * 100])], [0], 1) is None
