"""BLASTN subject scan: the lookup table as one flat structure and the scan over 2-bit subjects.

Every BLAST+ 2.12 scan subroutine (``blast_nascan.c``: small, standard and megablast tables,
aligned or not) visits subject offsets ``0, step, 2 step, ...`` up to ``length - width``
(``step = word_size - width + 1``), reads the ``width`` bases there as a word code and emits
the word's query offsets in the table's order: ascending for the small and standard tables
(insertion order), descending for the megablast table (its ``next_pos`` chains start at the
latest offset). A megablast presence-vector bit that covers only empty cells emits nothing, so
all tables reduce to one compressed-row table :class:`FlatLookup` (``cell_start``, ``q_offs``).

:func:`scan_subject` is the unit a device kernel replaces: ``(table, packed subject,
first/last offset) -> (q_off, s_off)`` pairs in BLAST+'s order. :func:`scan_subject_ref` is
its plain Python statement.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.jit import njit
import numpy as np

from .nucl_lookup import MEGABLAST, SMALL, STANDARD, SmallTable, StandardTable


@dataclass
class FlatLookup:
    """Query offsets of every width-``width`` word code: ``q_offs[cell_start[c]:cell_start[c+1]]``."""
    kind: str
    width: int
    word_size: int
    scan_step: int
    cell_start: np.ndarray   # int32 (4^width + 1,)
    q_offs: np.ndarray       # int32
    max_cell: int = 0        # largest number of offsets of one code
    present: np.ndarray = None   # uint32 words, bit c & 31 of word c >> 5: cell c not empty


@njit(cache=True, nogil=True)
def _indexed_words_nb(seq, seg_left, seg_right, width, word_size):
    """(codes, offsets) the tables index, in insertion order (``nucl_lookup.indexed_words``)."""
    n = 0
    for k in range(seg_left.size):
        n += max(0, seg_right[k] - seg_left[k] + 1)
    codes = np.empty(n, dtype=np.int64)
    offs = np.empty(n, dtype=np.int32)
    m = 0
    mask = (1 << (2 * width)) - 1
    for k in range(seg_left.size):
        left, right = seg_left[k], seg_right[k]
        if word_size > right - left + 1:
            continue
        code = 0
        run = 0
        for pos in range(left, right + 1):
            b = seq[pos]
            if b > 3:
                run = 0
                code = 0
                continue
            code = ((code << 2) | b) & mask
            run += 1
            if run >= width:
                codes[m] = code
                offs[m] = pos - width + 1
                m += 1
    return codes[:m], offs[:m]


def flat_lookup(batch, table, word_size: int) -> FlatLookup:
    """The table BLAST+ built for ``batch`` (a :mod:`nucl_lookup` table object) as a FlatLookup."""
    kind = (SMALL if isinstance(table, SmallTable) else STANDARD if isinstance(table, StandardTable)
            else MEGABLAST)
    return build_flat(batch, kind, table.width, word_size)


def build_flat(batch, kind: str, width: int, word_size: int, threads: int = 1) -> FlatLookup:
    """The FlatLookup of table kind ``kind`` and ``width`` for ``batch``, straight from the
    query batch by the partitioned counting sort (``nucl_flat_nb``, ``threads`` threads; equal
    to :func:`build_flat_ref`); a small table whose overflow would need 32768 cells or more
    becomes a standard table, as in ``BlastChooseNaLookupTable``."""
    from .nucl_flat_nb import flat_cells_parts

    seg = batch.seg_array
    if seg is None:
        seg = np.array(batch.segments, dtype=np.int64).reshape(-1, 2)
    q_offs, start, present, max_cell, overflow = flat_cells_parts(
        batch.seq, seg[:, 0], seg[:, 1], width, word_size, kind == MEGABLAST, threads)
    if kind == SMALL and 2 + overflow >= 32768:
        kind = STANDARD
    return FlatLookup(kind, width, word_size, word_size - width + 1, start, q_offs, max_cell, present)


def build_flat_ref(batch, kind: str, width: int, word_size: int) -> FlatLookup:
    """:func:`build_flat`'s reference: every indexed word listed (code, offset), then one
    counting sort over all cells."""
    seg = np.array(batch.segments, dtype=np.int64).reshape(-1, 2)
    codes, offs = _indexed_words_nb(np.asarray(batch.seq, dtype=np.uint8), seg[:, 0].copy(),
                                    seg[:, 1].copy(), width, word_size)
    from .nucl_flat_nb import presence_words

    q_offs, start, max_cell, overflow = _flat_cells(codes, offs, 1 << (2 * width), kind == MEGABLAST)
    if kind == SMALL and 2 + overflow >= 32768:
        kind = STANDARD
    bits = np.packbits(start[1:] != start[:-1], bitorder="little")
    present = np.zeros(presence_words(len(start) - 1) * 4, dtype=np.uint8)
    present[:bits.size] = bits
    return FlatLookup(kind, width, word_size, word_size - width + 1, start.astype(np.int32), q_offs,
                      max_cell, present.view(np.uint32))


@njit(cache=True, nogil=True)
def _flat_cells(codes, offs, cells, latest_first):
    """Counting sort of the indexed words into cells: (q_offs, cell_start, largest cell, cells
    a small table's overflow array would take: sum of count + 1 over codes of 2 or more
    offsets). Within a cell the offsets keep insertion order, or the reverse with
    ``latest_first`` (the megablast table's chains)."""
    start = np.zeros(cells + 2, dtype=np.int64)   # counts at code + 2, fill pointers at code + 1
    for i in range(codes.size):
        start[codes[i] + 2] += 1
    largest = 0
    overflow = 0
    for c in range(cells):
        k = start[c + 2]
        if k > largest:
            largest = k
        if k > 1:
            overflow += k + 1
        start[c + 2] += start[c + 1]
    q_offs = np.empty(codes.size, dtype=np.int32)
    n = codes.size
    for j in range(n):
        i = n - 1 - j if latest_first else j
        c = codes[i] + 1
        q_offs[start[c]] = offs[i]
        start[c] += 1
    start = start[:cells + 1]
    return q_offs, start, largest, overflow


@njit(cache=True, nogil=True)
def _code_at(s, pos, width):
    code = 0
    for i in range(pos, pos + width):
        code = (code << 2) | ((s[i >> 2] >> (6 - 2 * (i & 3))) & 3)
    return code


@njit(cache=True, nogil=True)
def scan_subject(cell_start, q_offs, width, step, s, s_len, first, out_q, out_s):
    """Scan offsets ``first, first + step, ...`` up to ``s_len - width``; write hits into
    ``out_q``/``out_s`` until they are full. Returns (hits written, next offset to scan)."""
    n = 0
    cap = out_q.size
    last = s_len - width
    off = first
    while off <= last:
        code = _code_at(s, off, width)
        a, b = cell_start[code], cell_start[code + 1]
        if b > a:
            if n + (b - a) > cap:
                if n == 0:   # one cell larger than the buffer: never happens with cap >= query
                    raise ValueError("scan buffer smaller than one lookup cell")
                return n, off
            for k in range(a, b):
                out_q[n] = q_offs[k]
                out_s[n] = off
                n += 1
        off += step
    return n, off


def scan_subject_ref(flat: FlatLookup, s, s_len: int):
    """Plain statement of the scan: every (q_off, s_off) pair in order."""
    from .nucl_extend import subject_base

    out = []
    for off in range(0, s_len - flat.width + 1, flat.scan_step):
        code = 0
        for i in range(off, off + flat.width):
            code = (code << 2) | subject_base(s, i)
        for k in range(int(flat.cell_start[code]), int(flat.cell_start[code + 1])):
            out.append((int(flat.q_offs[k]), off))
    return out
