"""Tabular lines built column by column in one byte matrix, without a Python step per line.

Each column becomes a (rows, width) matrix of its UTF-8 bytes, padded with NUL bytes (numbers'
digits written by array operations, texts through fixed-width byte arrays); the columns go side
by side with a tab after each (a newline after the last), and dropping every NUL byte leaves the
lines. The result is the text ``str.format`` of the same fields gives; :func:`table_bytes`
answers None (the caller then formats line by line) where that could differ or cost too much: a
field holding a NUL character, or a matrix above ``MAX_CELLS`` bytes (one very long field
widens its column for every row).
"""
from __future__ import annotations

import numpy as np

#: the largest byte matrix (rows x widest line) built; above it the lines are formatted one by one
MAX_CELLS = 1 << 27


def table_bytes(values, pick, n, sizes=False):
    """(UTF-8 bytes of the lines, each line's byte count when ``sizes`` else None) of ``n`` rows
    whose fields are ``values[k]`` for k in ``pick`` (``values``: :func:`.tabular.column_values`
    answers), or None (see the module)."""
    cells = []
    for kind, v in values:
        c = _int_cells(v) if kind == "int" else _text_cells(*v) if kind == "coded" else \
            _text_cells(v, None)
        if c is None:
            return None
        cells.append(c)
    width = sum(cells[k].shape[1] + 1 for k in pick) or 1
    if n * width > MAX_CELLS:
        return None
    m = np.full((n, width), 9, dtype=np.uint8)     # '\t' after each field
    at = 0
    for k in pick:
        w = cells[k].shape[1]
        m[:, at:at + w] = cells[k]
        at += w + 1
    m[:, -1] = 10                                  # '\n' in place of the last tab
    data = m.tobytes().translate(None, b"\0")
    return data, np.count_nonzero(m, axis=1) if sizes else None


def _text_cells(texts, index):
    """The rows' texts (``texts[index[i]]``, or ``texts[i]`` without ``index``) as a byte matrix,
    or None when one holds a NUL character."""
    joined = "".join(texts)
    if "\0" in joined:
        return None
    if joined.isascii():
        b = np.array(texts, dtype=np.bytes_) if texts else np.zeros(0, dtype="S1")
    else:
        b = np.array([t.encode("utf-8") for t in texts], dtype=np.bytes_)
    if b.itemsize == 0:
        b = b.astype("S1")
    if index is not None:
        b = b[index]
    return b.view(np.uint8).reshape(len(b), b.itemsize)


_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)


def _int_cells(v):
    """Integers as ``str`` writes them, right-aligned in a byte matrix (NUL before); the digits
    by unsigned division (32-bit where the values allow: several times faster than int64's)."""
    v = np.asarray(v, dtype=np.int64)
    neg = v < 0
    lead = bool(neg.any())
    x = np.abs(v)
    top = int(x.max()) if len(x) else 0
    x = x.astype(np.uint32 if top < 1 << 32 else np.uint64)
    w = len(str(top)) + lead
    m = np.empty((w, len(v)), dtype=np.uint8)        # a digit place a row: whole rows written
    for k in range(w - 1, lead - 1, -1):
        q = x // 10
        d = (x - q * 10).astype(np.uint8)
        d += 48
        if k < w - 1:
            d *= x > 0                                 # no leading zeros
        m[k] = d
        x = q
    if lead:
        m[0] = 0
        rows = np.flatnonzero(neg)
        digits = np.searchsorted(_POWERS, np.abs(v[rows]), side="right") + 1
        m[w - 1 - digits, rows] = 45                   # '-'
    return m.T
