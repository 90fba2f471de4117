"""BLASTN query side: concatenated query batch, lookup segments and the three lookup tables.

Rules as BLAST+ 2.12 (``blast_nalookup.c``, ``blast_filter.c``, ``lookup_util.c``):

- **Batch layout.** Each query gives two contexts, plus strand then minus strand (reverse
  complement); contexts are concatenated with one sentinel between them, context k starting at
  ``offset[k] = offset[k-1] + length[k-1] + 1``. ``-strand plus|minus`` keeps one context.
- **Lookup segments** (``BLAST_ComplementMaskLocations``): per context the complement of its
  masks (DUST, lower case), masks on the minus strand reflected; a context without masks is
  one segment ``[offset, offset + length - 1]``.
- **Table choice** (``BlastChooseNaLookupTable``): ``entries = sum(right - left)`` over the
  segments and ``max_off`` = the largest right end decide small / standard / megablast table
  and the table width; a small table becomes standard when ``entries >= 32767`` or
  ``max_off >= 32768`` (15-bit offsets), or when its overflow would reach 32768 cells. The
  subject is scanned with stride ``word_size - width + 1``.
- **Indexing.** Small and standard tables index every width-``w`` word of a segment without an
  ambiguous base (code > 3), segments shorter than ``word_size`` skipped, in segment order; the
  megablast table does the same into a hash table of 1-based offsets with ``next_pos`` chains
  (latest offset first) and a presence vector (PV) whose bit may cover several words.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.nucleotide import BLASTNA_SENTINEL

SMALL, STANDARD, MEGABLAST = "small", "standard", "megablast"
NA_HITS_PER_CELL = 3          # standard table: offsets kept in the backbone cell
PV_BTS = 5                    # 32-bit presence-vector words
PV_TARGET_SIZE = 131072       # megablast PV target size in bytes (kTargetPVSize)
SMALL_QUERY_CUTOFF = 15000
LARGE_QUERY_CUTOFF = 800000
#: Complement of BLASTNA codes (A C G T R Y M K W S B D H V N -): bases and ambiguity sets
#: complemented as BLAST+ does (it reverse-complements NCBI4NA, then converts).
_COMPLEMENT = np.array([3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 13, 12, 11, 10, 14, 15], dtype=np.uint8)


def choose_na_lookup(word_size: int, entries: int, max_off: int):
    """(table type, width) as ``BlastChooseNaLookupTable`` (contiguous words)."""
    if word_size < 4:
        raise ValueError(f"word size must be at least 4, got {word_size}")
    e = entries
    if word_size <= 6:
        kind, width = SMALL, word_size
    elif word_size == 7:
        kind, width = SMALL, 6 if e < 250 else 7
    elif word_size == 8:
        kind, width = SMALL, 7 if e < 8500 else 8
    elif word_size == 9:
        kind, width = (SMALL, 7) if e < 1250 else (SMALL, 8) if e < 21000 else (MEGABLAST, 9)
    elif word_size == 10:
        kind, width = ((SMALL, 7) if e < 1250 else (SMALL, 8) if e < 8500 else
                       (MEGABLAST, 9) if e < 18000 else (MEGABLAST, 10))
    elif word_size == 11:
        kind, width = (SMALL, 8) if e < 12000 else (MEGABLAST, 10) if e < 180000 else (MEGABLAST, 11)
    elif word_size == 12:
        kind, width = ((SMALL, 8) if e < 8500 else (MEGABLAST, 9) if e < 18000 else
                       (MEGABLAST, 10) if e < 60000 else (MEGABLAST, 11) if e < 900000 else
                       (MEGABLAST, 12))
    else:
        kind, width = (SMALL, 8) if e < 8500 else (MEGABLAST, 11) if e < 300000 else (MEGABLAST, 12)
    if kind == SMALL and (e >= 32767 or max_off >= 32768):
        kind = STANDARD
    return kind, width


@dataclass
class QueryBatch:
    """Queries (NCBI2na codes, >= 4 ambiguous) concatenated as BLAST+ lays out contexts."""
    seq: np.ndarray        # uint8, sentinel 15 between contexts
    offsets: np.ndarray    # int64 start of each context
    lengths: np.ndarray    # int64 length of each context
    query_of: np.ndarray   # query index of each context
    minus: np.ndarray      # bool: context is the minus strand
    segments: list         # [(left, right)] in concatenated coordinates, context order
    seg_array: np.ndarray = None   # the segments as (n, 2) int64, when the builder made it

    @classmethod
    def build(cls, queries, masks=None, strand="both"):
        """``queries``: list of uint8 code arrays; ``masks``: per query [(first, last)] (plus strand)."""
        if strand not in ("both", "plus", "minus"):
            raise ValueError(f"strand must be both, plus or minus, got {strand!r}")
        parts, offsets, lengths, query_of, minus, segments = [], [], [], [], [], []
        pos = 0
        for qi, q in enumerate(queries):
            q = np.asarray(q, dtype=np.uint8)
            m = sorted(masks[qi]) if masks is not None else []
            for is_minus in (False, True):
                if (strand == "plus" and is_minus) or (strand == "minus" and not is_minus):
                    continue
                ctx = _COMPLEMENT[q[::-1]] if is_minus else q
                if parts:
                    parts.append(np.array([BLASTNA_SENTINEL], dtype=np.uint8))
                    pos += 1
                offsets.append(pos)
                lengths.append(len(q))
                query_of.append(qi)
                minus.append(is_minus)
                parts.append(ctx)
                segments += context_segments(pos, len(q), m, is_minus)
                pos += len(q)
        seq = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
        return cls(seq, np.array(offsets, dtype=np.int64), np.array(lengths, dtype=np.int64),
                   np.array(query_of, dtype=np.int64), np.array(minus, dtype=bool), segments)

    def estimate_entries(self):
        """(entries, max_off) as ``EstimateNumTableEntries``."""
        if self.seg_array is not None:
            seg = self.seg_array
            return (int((seg[:, 1] - seg[:, 0]).sum()), int(seg[:, 1].max()) if seg.size else 0)
        entries = sum(r - l for l, r in self.segments)
        max_off = max((r for _, r in self.segments), default=0)
        return entries, max_off


def context_segments(start: int, length: int, masks, minus: bool):
    """Unmasked segments of one context (``BLAST_ComplementMaskLocations``)."""
    end = start + length - 1
    if length <= 0:
        return []
    if not masks:
        return [(start, end)]
    if minus:
        ivs = [(end - b, end - a) for a, b in reversed(masks)]
    else:
        ivs = [(start + a, start + b) for a, b in masks]
    out = []
    first, is_open, left = True, True, 0
    for fs, fe in ivs:
        if first:
            first = False
            if fs > start:
                left = start
            else:
                left = fe + 1
                continue
        out.append((left, fs - 1))
        if fe >= end:
            is_open = False
            break
        left = fe + 1
    if is_open:
        out.append((left, end))
    return out


def indexed_words(seq, segments, width: int, word_size: int):
    """[(word code, offset)] that small/standard tables index, in BLAST+'s insertion order."""
    out = []
    for left, right in segments:
        if word_size > right - left + 1:
            continue
        code = 0
        run = 0
        for pos in range(left, right + 1):
            b = int(seq[pos])
            if b > 3:
                run, code = 0, 0
                continue
            code = ((code << 2) | b) & ((1 << (2 * width)) - 1)
            run += 1
            if run >= width:
                out.append((code, pos - width + 1))
    return out


@dataclass
class SmallTable:
    """``BlastSmallNaLookupTable``: int16 backbone (-1 empty, offset, or -cursor) + overflow."""
    width: int
    scan_step: int
    backbone: np.ndarray
    overflow: np.ndarray


@dataclass
class StandardTable:
    """``BlastNaLookupTable``: per cell count + up to 3 offsets or an overflow cursor; PV."""
    width: int
    scan_step: int
    num_used: np.ndarray
    entries: np.ndarray     # (cells, 3) int32
    cursor: np.ndarray      # overflow start of cells with more than 3 offsets
    overflow: np.ndarray
    pv: np.ndarray          # uint32, one bit per cell


@dataclass
class MegablastTable:
    """``BlastMBLookupTable`` (contiguous): hashtable/next_pos of 1-based offsets, PV."""
    width: int
    scan_step: int
    hashtable: np.ndarray
    next_pos: np.ndarray
    pv: np.ndarray
    pv_bts: int


def _chains(words):
    chains = {}
    for code, off in words:
        chains.setdefault(code, []).append(off)
    return chains


def build_small(words, width, word_size):
    """Small table, or None when its overflow would need 32768 cells or more (BLAST+ then
    builds the standard table)."""
    chains = _chains(words)
    need = 2 + sum(len(c) + 1 for c in chains.values() if len(c) > 1)
    if need >= 32768:
        return None
    backbone = np.full(1 << (2 * width), -1, dtype=np.int16)
    overflow = [0, 0]
    for code in sorted(chains):
        c = chains[code]
        if len(c) == 1:
            backbone[code] = c[0]
        else:
            backbone[code] = -len(overflow)
            overflow += c + [-1]
    return SmallTable(width, word_size - width + 1, backbone, np.array(overflow, dtype=np.int16))


def build_standard(words, width, word_size):
    cells = 1 << (2 * width)
    chains = _chains(words)
    num_used = np.zeros(cells, dtype=np.int32)
    entries = np.zeros((cells, NA_HITS_PER_CELL), dtype=np.int32)
    cursor = np.zeros(cells, dtype=np.int32)
    pv = np.zeros((cells >> PV_BTS) + 1, dtype=np.uint32)
    overflow = []
    for code in sorted(chains):
        c = chains[code]
        num_used[code] = len(c)
        pv[code >> PV_BTS] |= np.uint32(1 << (code & 31))
        if len(c) <= NA_HITS_PER_CELL:
            entries[code, :len(c)] = c
        else:
            cursor[code] = len(overflow)
            overflow += c
    return StandardTable(width, word_size - width + 1, num_used, entries, cursor,
                         np.array(overflow, dtype=np.int32), pv)


def megablast_pv_bts(width: int, entries: int) -> int:
    """PV compression of a megablast table (bits of hash index per PV word)."""
    hashsize = 1 << (2 * width)
    if width <= 12:
        pv_size = hashsize >> PV_BTS if hashsize <= 8 * PV_TARGET_SIZE else PV_TARGET_SIZE // 4
    else:
        pv_size = PV_TARGET_SIZE * 64 // 4
    if entries <= SMALL_QUERY_CUTOFF or entries >= LARGE_QUERY_CUTOFF:
        pv_size //= 2
    return (hashsize // pv_size).bit_length() - 1


def build_megablast(seq, segments, width, word_size, entries):
    """Megablast table filled as ``s_FillContigMBTable`` (no database word-count filter)."""
    hashsize = 1 << (2 * width)
    bts = megablast_pv_bts(width, entries)
    hashtable = np.zeros(hashsize, dtype=np.int32)
    next_pos = np.zeros(len(seq) + 1, dtype=np.int32)
    pv = np.zeros(max(1, hashsize >> bts), dtype=np.uint32)
    for code, off in indexed_words(seq, segments, width, word_size):
        if hashtable[code] == 0:
            pv[code >> bts] |= np.uint32(1 << (code & 31))
        next_pos[off + 1] = hashtable[code]
        hashtable[code] = off + 1
    return MegablastTable(width, word_size - width + 1, hashtable, next_pos, pv, bts)


def build_lookup(batch: QueryBatch, word_size: int):
    """The table BLAST+ builds for this batch (plain reference, numpy arrays)."""
    entries, max_off = batch.estimate_entries()
    kind, width = choose_na_lookup(word_size, entries, max_off)
    if kind == MEGABLAST:
        return build_megablast(batch.seq, batch.segments, width, word_size, entries)
    words = indexed_words(batch.seq, batch.segments, width, word_size)
    if kind == SMALL:
        table = build_small(words, width, word_size)
        if table is not None:
            return table
    return build_standard(words, width, word_size)


def table_offsets(table, code: int):
    """Query offsets of word ``code`` in any table (ascending order for small/standard)."""
    if isinstance(table, SmallTable):
        v = int(table.backbone[code])
        if v == -1:
            return []
        if v >= 0:
            return [v]
        out, k = [], -v
        while table.overflow[k] != -1:
            out.append(int(table.overflow[k]))
            k += 1
        return out
    if isinstance(table, StandardTable):
        n = int(table.num_used[code])
        if n <= NA_HITS_PER_CELL:
            return [int(x) for x in table.entries[code, :n]]
        c = int(table.cursor[code])
        return [int(x) for x in table.overflow[c:c + n]]
    out, k = [], int(table.hashtable[code])
    while k:
        out.append(k - 1)
        k = int(table.next_pos[k])
    return out


def pv_test(table, code: int) -> bool:
    """Presence-vector test of the scan (standard and megablast tables)."""
    bts = PV_BTS if isinstance(table, StandardTable) else table.pv_bts
    return bool(table.pv[code >> bts] >> np.uint32(code & 31) & np.uint32(1))
