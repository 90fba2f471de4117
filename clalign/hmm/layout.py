"""Database blocks of the S-lane kernels (CUDAMPF++ Algorithm 1): planned on the host, their
bytes written on the host (:func:`fill_host`) or the device (:mod:`clalign.hmm.layout_dev`).

Sequences are taken in length order, cut into consecutive chunks of ``C * spc`` (C = S *
WG_WAVES columns, ``spc`` sequences per column), dealt to the columns of a chunk in a snake
order (balanced column lengths), each followed by an END code and the column filled with PAD
to the block's row count (see :mod:`clalign.hmm.engine` for the whole story). The codes and
the profile table's row count are defined here once and passed to ``kernels/hmm_slane.mako``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError

#: Residue codes past the 28 protein letters: END closes a sequence in its column (the
#: kernel writes its result and resets the lane), PAD fills a column to the block's rows.
END, PAD = 28, 29
#: Rows of the device profile table (28 residue codes + END, PAD and two spare rows).
XROWS = 32


@dataclass
class Blocks:
    """Striped sequence blocks for one column count C (see the module docstring)."""

    C: int
    data: "np.ndarray | None"  # uint8, all blocks (None until filled, see ``slots``)
    off: np.ndarray        # uint32 byte offset per block
    rows: np.ndarray       # uint32 rows per block
    col_start: np.ndarray  # uint32, nblocks*C + 1
    ids: np.ndarray        # uint32, sequence index per column slot
    rg: int = 1            # residue group (template value RG): layout of rows inside a block
    pieces: "Pieces | None" = None   # SSV: long sequences cut into overlapping pieces
    size: int = 0          # bytes of all blocks (``data.size`` once filled)
    slots: "Slots | None" = None     # where each sequence goes, until ``data`` is filled

    @property
    def nblocks(self) -> int:
        return int(self.off.size)

    @property
    def cells(self) -> int:
        return int(self.size)


@dataclass
class Slots:
    """The fill of :func:`plan_blocks`' layout, one entry per column slot (``Blocks.ids``
    order): sequence ``seq`` (``length`` residues from ``src`` in the residue array), then
    END, from row ``row0`` of column ``col`` of block ``blk``; ``at`` is the byte of that first
    row (``off[blk] + (row0 // rg) * C * rg + col * rg + row0 % rg``)."""

    src: np.ndarray        # int64
    length: np.ndarray     # int64
    row0: np.ndarray       # int64
    blk: np.ndarray        # int64
    col: np.ndarray        # int64
    at: np.ndarray         # int64


def build_blocks(residues, offsets, lengths, order, C: int, spc: int, rg: int = 1,
                 cap: int | None = None) -> Blocks:
    """:func:`plan_blocks` with its bytes filled on the host (``data``; compiled, numba)."""
    blocks = plan_blocks(offsets, lengths, order, C, spc, rg, cap)
    fill_host(blocks, residues)
    return blocks


def fill_host(blocks: Blocks, residues) -> None:
    """Write ``blocks.data``: PAD, then every slot's residues and END (threads over slots)."""
    from .layout_nb import fill_slots

    data = np.full(blocks.size, PAD, dtype=np.uint8)
    sl = blocks.slots
    if sl is not None and sl.src.size:
        fill_slots(np.asarray(residues), sl.src, sl.length, sl.row0, sl.blk, sl.col,
                   blocks.off.astype(np.int64), blocks.C, blocks.rg, END, data)
    blocks.data, blocks.slots = data, None


def plan_blocks(offsets, lengths, order, C: int, spc: int, rg: int = 1, cap: int | None = None) -> Blocks:
    """Length-sorted, balanced blocks of C columns and up to ``spc`` sequences per column.

    Chunks are cut from the longest sequences down; with ``cap`` (rows) a chunk whose longest
    sequence has L residues takes ``max(1, min(spc, cap // (L + 1)))`` sequences per column, so
    that no block is much longer than ``max(cap, longest + 1)`` rows: a block is walked by one
    work-group row after row, and the longest block bounds the kernel time from below.
    Row r of column c lies at byte ``off + (r // rg) * C * rg + c * rg + r % rg`` of its block
    (``rg`` = template value RG; 1 is row-major); a block's bytes are padded with PAD to whole
    groups of ``rg`` rows and its offset is 16-byte aligned (vector loads).
    The bytes are not written here (``data`` None, ``slots`` says where everything goes): the
    host (:func:`fill_host`) or the device (:mod:`clalign.hmm.layout_dev`) fills them."""
    order = np.asarray(order, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    n = order.size
    if n == 0:
        z = np.zeros(0, np.uint32)
        return Blocks(C, np.zeros(0, np.uint8), z, z, np.zeros(1, np.uint32), z, rg)   # filled: nothing
    # chunk k (k = 0: the longest sequences, launched first) holds descending positions
    # [starts[k], starts[k + 1])
    desc = lengths[order[::-1]] + 1
    starts = [0]
    while starts[-1] < n:
        q0 = starts[-1]
        k_spc = spc if cap is None else max(1, min(spc, int(cap) // int(desc[q0])))
        starts.append(min(n, q0 + C * k_spc))
    starts = np.asarray(starts, dtype=np.int64)
    nb = starts.size - 1
    sizes_k = np.diff(starts)
    blk = np.repeat(np.arange(nb, dtype=np.int64), sizes_k)[::-1]     # by ascending position
    q = np.arange(n - 1, -1, -1, dtype=np.int64)                       # descending position
    # deal in descending length inside the chunk, snake order over the columns
    rank = q - starts[blk]
    rnd, p = rank // C, rank % C
    col = np.where(rnd % 2 == 0, p, C - 1 - p)
    seq = order
    L1 = lengths[seq] + 1
    # slot order in ids: by (block, column, round). A column holds R = size // C rounds, plus
    # one in the last, partial round of m = size % C sequences (round R: columns 0..m-1 when R
    # is even, C-m..C-1 when odd), so a sequence's slot is its block's start, the sequences of
    # the columns before its own, and its round (what np.lexsort((rnd, col, blk)) orders)
    R, m = sizes_k[blk] // C, sizes_k[blk] % C
    extra = np.where(R % 2 == 0, np.minimum(col, m), np.maximum(0, col - (C - m)))
    key = np.empty(n, dtype=np.int64)
    key[starts[blk] + col * R + extra + rnd] = np.arange(n, dtype=np.int64)
    seq_k, blk_k, col_k, L1_k = seq[key], blk[key], col[key], L1[key]
    gcol = blk_k * C + col_k
    counts = np.bincount(gcol, minlength=nb * C)
    col_start = np.zeros(nb * C + 1, dtype=np.int64)
    np.cumsum(counts, out=col_start[1:])
    col_len = np.bincount(gcol, weights=L1_k, minlength=nb * C).astype(np.int64)
    rows = col_len.reshape(nb, C).max(axis=1)
    sizes = -(-rows // rg) * rg * C
    sizes4 = (sizes + 15) // 16 * 16
    off = np.zeros(nb, dtype=np.int64)
    np.cumsum(sizes4[:-1], out=off[1:])
    total = int(off[-1] + sizes4[-1])
    if total >= 1 << 32:
        raise ParameterError("database too large for one launch (4 GiB of blocks); split it")
    # a sequence's first row is the END-inclusive length of those before it in its column
    ends = np.cumsum(L1_k)
    row0 = ends - L1_k - (ends - L1_k)[col_start[gcol]]
    at = off[blk_k] + (row0 // rg) * (C * rg) + col_k * rg + row0 % rg
    slots = Slots(offsets[seq_k], L1_k - 1, row0, blk_k, col_k, at)
    return Blocks(C, None, off.astype(np.uint32), rows.astype(np.uint32), col_start.astype(np.uint32),
                  seq_k.astype(np.uint32), rg, size=total, slots=slots)


@dataclass
class Pieces:
    """Long sequences cut into overlapping pieces (SSV only; see :func:`split_long`).

    Sequence ``i`` keeps index ``i`` for its first piece; its other pieces are pseudo
    sequences ``n, n + 1, ...`` whose result belongs to ``parent[k - n]``."""

    seg: int
    overlap: int
    offsets: np.ndarray    # int64 start of every (pseudo) sequence in the residue array
    lengths: np.ndarray    # int64 length of every (pseudo) sequence
    order: np.ndarray      # int64 (pseudo) sequences by ascending length
    parent: np.ndarray     # int64 original sequence of each pseudo sequence n, n + 1, ...

    @property
    def n_ext(self) -> int:
        return int(self.lengths.size)


def split_long(offsets, lengths, seg: int, overlap: int) -> Pieces:
    """Cut every sequence longer than ``seg`` into pieces of ``seg`` residues (the last one
    shorter) that overlap by ``overlap`` residues.

    Why it is exact for SSV (not for MSV, whose J state links a whole sequence): an SSV cell
    of state k at residue i is the saturating sum along one diagonal from state 1 at residue
    i - k + 1, entered at the fixed value -128; it depends on those k <= M residues only. With
    ``overlap = M - 1`` every such window lies whole inside some piece, which computes that
    cell exactly; cells of a piece that start at its cut are entered at -128, never above the
    whole sequence's value there (the recurrence is monotone). So the max over a sequence's
    pieces is the sequence's max, overflow included (kernels/hmm_slane.mako explains why the
    first cell past the overflow line is seen by the unsigned max)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)[:lengths.size]
    stride = int(seg) - int(overlap)
    if stride < 1:
        raise ParameterError(f"split_long: pieces of {seg} residues cannot overlap by {overlap}")
    long_ = np.flatnonzero(lengths > seg)
    extra = -(-(lengths[long_] - seg) // stride)            # pieces after the first
    parent = np.repeat(long_, extra)
    j = np.arange(parent.size, dtype=np.int64) - np.repeat(np.cumsum(extra) - extra, extra) + 1
    start = j * stride
    ext_len = np.concatenate((np.minimum(lengths, seg), np.minimum(lengths[parent] - start, seg)))
    ext_off = np.concatenate((offsets, offsets[parent] + start))
    order = np.argsort(ext_len, kind="stable").astype(np.int64)
    return Pieces(int(seg), int(overlap), ext_off, ext_len, order, parent)


def default_spc(n: int, C: int, caps) -> int:
    """Sequences per column: enough work-groups to fill the device several times over."""
    target = max(1, 8 * caps.compute_units)
    return int(min(64, max(1, n // max(1, C * target))))


def typical_rows(lengths, spc: int) -> int:
    """Rows of a typical block: ``spc`` sequences of mean length, each with its END row."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return int(math.ceil(spc * (float(lengths.mean()) + 1.0))) if lengths.size else 0


def default_cap(lengths, spc: int) -> int:
    """Rows a block may have (:func:`build_blocks`): the longest sequence, or ``spc`` average
    ones where that is more. Without it the ``spc`` longest sequences share a column and that
    block alone set the kernel time (H100, docs/perf/hmm.md run 5)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return 1
    return max(int(lengths.max()) + 1, typical_rows(lengths, spc))


def ssv_seg(lengths, spc: int, M: int) -> int:
    """Piece length for :func:`split_long` (SSV): the rows of a typical block less its END row,
    at least 4 model lengths so that the overlap stays a small share."""
    return int(max(typical_rows(lengths, spc) - 1, 4 * int(M), 256))
