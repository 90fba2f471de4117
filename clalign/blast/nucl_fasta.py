"""A nucleotide query file's records found with numpy: the common layout (header lines, then
sequence lines of letters only) with no Python per line.

:func:`nucl_setup.read_queries` reads every file line by line as its statement (~2 us a line:
0.25-0.35 s for 50,000 reads, on the main thread before anything else, while numba's import
wants the interpreter lock too). :func:`split_records` does the same split at once and returns
None for anything else (sequence data before the first header,
an empty record, no header): the line-by-line reader then gives the answer or the error.
The caller checks the letters (one ``bytes.translate``).
"""
from __future__ import annotations

import numpy as np


def split_records(data: bytes):
    """(headers, letters, record starts) of ``data`` when every line is empty or a header (``>``
    first) or else a sequence line, with at least one header, no empty record and no sequence
    line before the first header: ``headers[k]`` is header line k without ``>`` and stripped,
    record k's sequence lines, joined, are ``letters[starts[k]:starts[k + 1]]`` (bytes as they
    are: the caller checks them; ``starts``: a list, one longer). None otherwise. Work per line
    and per byte is done by numpy and ``bytes``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    ls = np.r_[0, nl + 1]
    le = np.r_[nl, len(arr)]
    live = np.flatnonzero(le > ls)
    is_head = arr[ls[live]] == 62
    head, body = live[is_head], live[~is_head]
    if not len(head) or (len(body) and body[0] < head[0]):
        return None
    bs, be = ls[body], le[body]
    per = np.bincount(np.searchsorted(head, body) - 1, weights=be - bs, minlength=len(head))
    if not per.all():
        return None
    starts = np.zeros(len(head) + 1, dtype=np.int64)
    np.cumsum(per.astype(np.int64), out=starts[1:])
    letters = b"".join([data[a:b] for a, b in zip(bs.tolist(), be.tolist())])
    headers = [data[a + 1:b].strip() for a, b in zip(ls[head].tolist(), le[head].tolist())]
    return headers, letters, starts.tolist()
