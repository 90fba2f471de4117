"""BLASTN search setup as BLAST+ 2.12 does it: options per task, queries, masks, contexts, lookup
table, Karlin-Altschul blocks, effective lengths and cutoffs.

Tasks (``CBlastNucleotideOptionsHandle`` and ``CBlastOptionsFactory::CreateTask``):

======== ==== ====== ======= ======= ====== ========= ============ ======
task     word reward penalty gapopen extend gap X-drop final X-drop diag sep
======== ==== ====== ======= ======= ====== ========= ============ ======
megablast  28    1     -2      0      0      25 (greedy)   100        6
blastn     11    2     -3      5      2      30 (DP)       100       50
blastn-short 7   1     -3      5      2      30 (DP)       100       50
======== ==== ====== ======= ======= ====== ========= ============ ======

plus ungapped X-drop 20 bits, gap trigger 27 bits, DUST on, E-value 10 for every task (the
``blastn`` application's own defaults win over the blastn-short task's E-value 1000 and filter
clearing: checked against blastn 2.12).
Per context (``BlastInitialWordParametersNew`` / ``BlastHitSavingParametersUpdate``):
ungapped block from the context's base composition against uniform bases; gapped block from
the reward/penalty tables (:mod:`clalign.stats.nucl`); gapped cutoff = score of E = ``-evalue``
on the context's effective search space; ungapped cutoff = ``min(gap trigger, gapped cutoff)``
with gap trigger ``(27 ln2 + ln K) / Lambda`` (ungapped block); ungapped X-drop ``ceil(20 ln2 /
Lambda)``; gapped X-drops ``bits ln2 / Lambda_gapped`` (final at least the preliminary one).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..runtime.jit import njit
import numpy as np

from ..data.nucleotide import BLASTNA_SENTINEL, blastna_matrix
from ..errors import ParameterError
from ..stats.evalue import LN2 as BIT_LN2
from ..stats.karlin import KarlinParams, ungapped_params
from ..stats.nucl import nucl_evalue_bits, nucl_gapped_params
from .nucl_dust import query_mask_arrays
from .nucl_fasta import Queries, Query, flat_queries, read_queries  # noqa: F401 (imported from here)
from .nucl_lookup import QueryBatch, choose_na_lookup
from .nucl_scan import build_flat
from .groups import row_groups

LN2 = math.log(2.0)
TASKS = ("megablast", "blastn", "blastn-short")
#: task -> (word, reward, penalty, gap open, gap extend, gap X-drop bits, greedy, diag sep)
TASK_DEFAULTS = {"megablast": (28, 1, -2, 0, 0, 25.0, True, 6),
                 "blastn": (11, 2, -3, 5, 2, 30.0, False, 50),
                 "blastn-short": (7, 1, -3, 5, 2, 30.0, False, 50)}
#: task -> ungapped X-drop in bits. BLAST+ 2.12's megablast defaults set none (its options
#: start at 0), so ``BlastInitialWordParametersUpdate`` takes the context's ungapped cutoff as
#: the X-drop instead (:func:`clalign.blast.nucl_context_stats.ungapped_xdrop`).
TASK_UNGAPPED_XDROP_BITS = {"megablast": 0.0, "blastn": 20.0, "blastn-short": 20.0}
GAP_XDROP_FINAL_BITS = 100.0
GAP_TRIGGER_BITS = 27.0


@dataclass
class BlastnOptions:
    """A blastn search's settings, BLAST+ option names in comments."""
    task: str = "megablast"            # -task
    word_size: int = 0                 # -word_size (0: the task's)
    reward: int = 0                    # -reward
    penalty: int = 0                   # -penalty
    gap_open: int = -1                 # -gapopen (-1: the task's)
    gap_extend: int = -1               # -gapextend
    evalue: float = 10.0               # -evalue
    dust: bool = True                  # -dust yes|no
    lcase_masking: bool = False        # -lcase_masking
    strand: str = "both"               # -strand
    max_target_seqs: int = 500         # -max_target_seqs
    max_hsps: int = 0                  # -max_hsps (0: all)
    dbsize: int = 0                    # -dbsize
    searchsp: int = 0                  # -searchsp
    perc_identity: float = 0.0         # -perc_identity
    ungapped: bool = False             # -ungapped
    greedy: bool = field(default=True, init=False)
    xdrop_gap_bits: float = field(default=25.0, init=False)
    min_diag_separation: int = field(default=6, init=False)

    def __post_init__(self):
        if self.task == "dc-megablast":
            raise ParameterError("-task dc-megablast is not implemented (tasks: megablast, blastn, blastn-short)")
        if self.task not in TASKS:
            raise ParameterError(f"-task {self.task!r}: one of {', '.join(TASKS)}")
        w, r, p, go, ge, xb, greedy, sep = TASK_DEFAULTS[self.task]
        self.word_size = self.word_size or w
        self.reward = self.reward or r
        self.penalty = self.penalty or p
        if self.gap_open < 0:
            self.gap_open = go
        if self.gap_extend < 0:
            self.gap_extend = ge
        self.greedy, self.xdrop_gap_bits, self.min_diag_separation = greedy, xb, sep
        if self.word_size < 4:
            raise ParameterError(f"-word_size must be at least 4, got {self.word_size}")
        if self.reward <= 0 or self.penalty >= 0:
            raise ParameterError("-reward must be > 0 and -penalty < 0")
        if self.strand not in ("both", "plus", "minus"):
            raise ParameterError(f"-strand: both, plus or minus, not {self.strand!r}")
        if not 0.0 <= self.perc_identity <= 100.0:
            raise ParameterError("-perc_identity must be between 0 and 100")
        if not self.evalue > 0 or math.isinf(self.evalue):
            raise ParameterError("-evalue must be a positive number")
        try:   # BLAST+'s check of the scoring system (any ungapped block stands in here)
            nucl_gapped_params(self.reward, self.penalty, self.gap_open, self.gap_extend,
                               KarlinParams(1.0, 1.0, 1.0))
        except ValueError as exc:
            raise ParameterError(str(exc)) from None


@njit(cache=True, nogil=True)
def _fill_contexts(seq, allq, qstart, offsets, lengths, query_of, minus, complement, c0, c1):
    """Contexts ``c0:c1``'s codes into ``seq`` (sentinels already there): the query, or its
    reverse complement."""
    for c in range(c0, c1):
        a, n, o = qstart[query_of[c]], lengths[c], offsets[c]
        if minus[c]:
            for i in range(n):
                seq[o + i] = complement[allq[a + n - 1 - i]]
        else:
            for i in range(n):
                seq[o + i] = allq[a + i]


def on_threads(fn, weights, threads: int):
    """``fn(lo, hi)`` over consecutive ranges of items of about equal ``weights`` sums (an int
    n: n items of weight 1), on ``threads`` threads (compiled functions without the GIL that
    write disjoint places)."""
    from .nucl_flat_nb import MIN_THREADED, _groups, _run

    if isinstance(weights, int):
        parts = max(1, threads) if weights >= MIN_THREADED else 1
        cuts = sorted(set(np.linspace(0, weights, parts + 1).astype(np.int64).tolist()))
    else:
        cuts = _groups(np.asarray(weights, dtype=np.int64), threads)
    _run(fn, [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a], threads)


def build_batch(queries, masks=None, strand="both", threads: int = 1):
    """:meth:`QueryBatch.build` (the spec) with the sequence filled in one compiled pass and
    the per-context arrays made at once (:func:`batch_layout`, then :func:`set_segments`)."""
    batch = batch_layout(queries, strand, threads)
    set_segments(batch, masks)
    return batch


def batch_layout(queries, strand="both", threads: int = 1, flat=None):
    """A :class:`QueryBatch` of ``queries`` (code arrays) without its segments (they need the
    masks: :func:`set_segments`): the contexts' codes filled in one compiled pass, the
    per-context arrays made at once. ``flat``: (codes, starts) of all queries contiguous
    (:func:`flat_queries`), used instead of ``queries``."""
    from .nucl_lookup import _COMPLEMENT

    if strand not in ("both", "plus", "minus"):
        raise ValueError(f"strand must be both, plus or minus, got {strand!r}")
    sides = {"both": [False, True], "plus": [False], "minus": [True]}[strand]
    if flat is not None:
        allq, starts = np.asarray(flat[0], dtype=np.uint8), np.asarray(flat[1], dtype=np.int64)
        allq, qlen = allq[starts[0]:starts[-1]], np.diff(starts)
    else:
        qs = [np.asarray(q, dtype=np.uint8) for q in queries]
        qlen = np.array([q.size for q in qs], dtype=np.int64)
        allq = np.concatenate(qs) if qs else np.zeros(0, dtype=np.uint8)
    ns, nq = len(sides), qlen.size
    lengths = np.repeat(qlen, ns)
    query_of = np.repeat(np.arange(nq, dtype=np.int64), ns)
    minus = np.tile(np.array(sides, dtype=bool), nq)
    offsets = np.zeros(lengths.size, dtype=np.int64)
    if lengths.size > 1:
        np.cumsum(lengths[:-1] + 1, out=offsets[1:])
    total = int(offsets[-1] + lengths[-1]) if lengths.size else 0
    seq = np.full(total, BLASTNA_SENTINEL, dtype=np.uint8)
    qstart = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(qlen, out=qstart[1:])
    on_threads(lambda c0, c1: _fill_contexts(seq, allq, qstart, offsets, lengths, query_of, minus,
                                             _COMPLEMENT, c0, c1), lengths + 1, threads)
    return QueryBatch(seq, offsets, lengths, query_of, minus, None)


def set_segments(batch, masks=None):
    """``batch``'s segments from the queries' ``masks`` (per query [(first, last)], or
    :class:`~clalign.blast.nucl_dust.MaskArrays`): one per context without masks (made at
    once; ~2 s for 100,000 reads in a per-query loop before), ``context_segments`` for the
    others (:func:`_masked_segments` at once for mask arrays that it takes); also as an
    ``(n, 2)`` int64 array (``seg_array``)."""
    from .nucl_dust import MaskArrays
    from .nucl_lookup import context_segments

    offsets, lengths, query_of, minus = batch.offsets, batch.lengths, batch.query_of, batch.minus
    nctx = lengths.size
    masked = np.zeros(nctx, dtype=bool)
    arrays = isinstance(masks, MaskArrays)
    if arrays and nctx:
        masked = (masks.counts > 0)[query_of]
    elif masks is not None and nctx:
        masked = np.fromiter((bool(m) for m in masks), dtype=bool, count=len(masks))[query_of]
    nseg = (~masked & (lengths > 0)).astype(np.int64)
    special, ctx, rows = {}, np.flatnonzero(masked), None
    if arrays and ctx.size and _masks_inside(masks, query_of, lengths):
        rows, nseg[ctx] = _masked_segments(ctx, offsets, lengths, query_of, minus, masks)
    else:
        for c in ctx.tolist():
            special[c] = context_segments(int(offsets[c]), int(lengths[c]), sorted(masks[int(query_of[c])]),
                                          bool(minus[c]))
            nseg[c] = len(special[c])
    first = np.zeros(nctx + 1, dtype=np.int64)
    np.cumsum(nseg, out=first[1:])
    seg = np.empty((int(first[-1]), 2), dtype=np.int64)
    plain = np.flatnonzero(~masked & (lengths > 0))
    seg[first[plain], 0] = offsets[plain]
    seg[first[plain], 1] = offsets[plain] + lengths[plain] - 1
    if rows is not None:
        n = nseg[ctx]
        seg[np.repeat(first[ctx] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))] = rows
    for c, ss in special.items():
        if ss:
            seg[first[c]:first[c + 1]] = ss
    batch.segments = list(zip(seg[:, 0].tolist(), seg[:, 1].tolist()))
    batch.seg_array = seg


def _masks_inside(masks, query_of, lengths) -> bool:
    """Whether every query's intervals in ``masks`` (MaskArrays) lie inside the query and in
    order, a base apart at least (what :func:`_masked_segments` assumes)."""
    qlen = np.zeros(len(masks), dtype=np.int64)
    qlen[query_of] = lengths
    a, b = masks.intervals[:, 0], masks.intervals[:, 1]
    owner = np.repeat(np.arange(len(masks)), masks.counts)
    if len(owner) != len(a) or not ((a >= 0) & (a <= b) & (b < qlen[owner])).all():
        return False
    return bool(((owner[1:] != owner[:-1]) | (a[1:] > b[:-1] + 1)).all())


def _masked_segments(ctx, offsets, lengths, query_of, minus, masks):
    """``context_segments`` of the contexts ``ctx`` (ascending, each with an interval) at once:
    (segments ``(n, 2)`` in context order, count per context), for intervals as
    :func:`_masks_inside` checks them. Its walk then gives a segment before the first interval
    when that starts after the context's start, one between consecutive intervals, one after
    the last unless the last reaches the context's end, except that a first interval at the
    context's start is not checked against the end (one interval covering the whole context
    leaves ``(end + 1, end)``, as ``BLAST_ComplementMaskLocations``)."""
    q = query_of[ctx]
    m = masks.counts[q]
    k = np.repeat(np.arange(ctx.size), m)                  # each row's context (index in ctx)
    j = np.arange(k.size) - np.repeat(np.cumsum(m) - m, m)   # the row's place in its context
    mn = minus[ctx][k]
    src = masks.first[q][k] + np.where(mn, m[k] - 1 - j, j)   # the minus strand: reflected
    a, b = masks.intervals[src, 0], masks.intervals[src, 1]
    start = offsets[ctx][k]
    end = start + lengths[ctx][k] - 1
    fs, fe = np.where(mn, end - b, start + a), np.where(mn, end - a, start + b)
    head, last = j == 0, j == m[k] - 1
    after_end = np.where(last, end, np.r_[fs[1:], 0] - 1)  # to the next interval, or the end
    keep = np.stack([head & (fs > start), ~last | (fe < end) | (head & (fs <= start))], axis=1)
    rows = np.stack([np.stack([start, fs - 1], axis=1), np.stack([fe + 1, after_end], axis=1)],
                    axis=1)   # per row: the segment before it (first rows), the one after it
    keep = keep.reshape(-1)
    return rows.reshape(-1, 2)[keep], np.bincount(np.repeat(k, 2)[keep], minlength=ctx.size)


def ungapped_block(codes, matrix):
    """A context's ungapped Karlin block as ``Blast_ScoreBlkKbpUngappedCalc``: the context's
    letter frequencies (every BLASTNA code but N counted) against BLAST's uniform A/C/G/T,
    scored with the BLASTNA matrix (sentinel row and column left out). None when BLAST+ finds
    no valid block (e.g. a context of N only)."""
    comp = np.bincount(np.asarray(codes, dtype=np.int64), minlength=16)[:15].astype(np.float64)
    comp[14] = 0.0
    if comp.sum() == 0:
        return None
    p_std = np.zeros(15)
    p_std[:4] = 0.25
    return ungapped_params(np.asarray(matrix)[:15, :15], comp / comp.sum(), p_std)


@njit(cache=True, nogil=True)
def _context_counts(seq, offsets, lengths, out, c0, c1):
    """Letter counts (codes 0..15) of contexts ``c0:c1`` of a query batch into ``out``."""
    for c in range(c0, c1):
        for i in range(offsets[c], offsets[c] + lengths[c]):
            out[c, seq[i]] += 1
    return out


def ungapped_blocks(batch, matrix):
    """:func:`ungapped_block` of every context of ``batch`` (one object per group of
    :func:`ungapped_groups`)."""
    blocks, group = ungapped_groups(batch, matrix)
    return [blocks[g] if g >= 0 else None for g in group.tolist()]


def ungapped_groups(batch, matrix, threads: int = 1):
    """(blocks, group per context, -1 where the context has no block): :func:`ungapped_block`
    computed once per distinct score distribution. The block depends on a context only through
    the score probabilities that ``score_frequencies`` accumulates from its letter frequencies,
    and reads of A/C/G/T share a few bit patterns of those (8 among 800 contexts of 400 reads).
    The probabilities are accumulated here for all contexts at once, term by term in the same
    order as ``np.add.at`` does per context (the same additions, so the same bits); each group's
    block is then computed by :func:`ungapped_block` on the group's first context. Letter
    counts are whole numbers, so their sums are exact in any order."""
    M = np.asarray(matrix)[:15, :15].astype(np.int64)
    nctx = len(batch.offsets)
    offsets = np.asarray(batch.offsets, dtype=np.int64)
    lengths = np.asarray(batch.lengths, dtype=np.int64)
    counts = np.zeros((nctx, 16), dtype=np.int64)
    on_threads(lambda c0, c1: _context_counts(batch.seq, offsets, lengths, counts, c0, c1),
               lengths + 1, threads)
    comp = counts[:, :15].astype(np.float64)
    comp[:, 14] = 0.0
    sums = comp.sum(axis=1)
    group = np.full(nctx, -1, dtype=np.int64)
    live = np.flatnonzero(sums != 0)
    if not live.size:
        return [], group
    freq = np.ascontiguousarray((comp[live] / sums[live, None]).T)   # a letter's row: contiguous
    lo = int(M.min())
    probs = np.zeros((int(M.max()) - lo + 1, live.size))            # a score's row
    p_std = 0.25
    for i in range(15):          # np.add.at order: i major, j minor; p_std is 0 past A/C/G/T
        for j in range(4):
            probs[M[i, j] - lo] += freq[i] * p_std
    # contexts compared by their probabilities' bytes (sums of non-negative terms: no -0.0, no
    # NaN, so equal bytes = equal values), grouped as np.unique groups them, first context each
    first, inv = row_groups(list(probs))
    blocks = []
    for k in first.tolist():
        c = int(live[k])
        a, n = int(batch.offsets[c]), int(batch.lengths[c])
        blocks.append(ungapped_block(batch.seq[a:a + n], matrix))
    group[live] = np.asarray(inv).reshape(-1)
    return blocks, group


@dataclass
class Setup:
    opts: BlastnOptions
    queries: list
    batch: QueryBatch
    flat: object                     # FlatLookup (None: every context masked whole)
    extender: str
    matrix: np.ndarray
    score_table: np.ndarray
    gapped: list                     # NuclGappedParams per context (None: invalid context)
    ctx_valid: np.ndarray
    searchsp: np.ndarray             # per context
    cutoff_gapped: np.ndarray
    cutoff_ungapped: np.ndarray
    xdrop_ungapped: np.ndarray
    reduced_cutoff: np.ndarray
    xdrop_gap: int
    xdrop_final: int
    masks: object                    # MaskArrays: per query [(first, last)] (masks[k])
    compressed_query: np.ndarray = None
    strand_off: list = None
    stat_key: list = None            # per context: contexts with equal keys share gapped block and search space
    _evalues: dict = field(default_factory=dict, repr=False)
    _keys: tuple = field(default=None, repr=False)     # evalues_bits' arrays per statistics key
    _exps: np.ndarray = field(default=None, repr=False)  # evalues_bits' exp values per (key, score), NaN: not yet
    _oriented: tuple = field(default=None, repr=False)

    def oriented_query(self):
        """The batch as ``nucl_gapped.oriented_batch`` gives it, for ``-task blastn``'s
        preliminary DP (made on first use, once per search; megablast gets two 1-letter stand-ins,
        unread). Threads racing here make equal arrays, any one of which will do."""
        if self._oriented is None:
            from .nucl_gapped import oriented_batch
            self._oriented = (oriented_batch(self.batch.seq) if not self.opts.greedy
                              else (np.full(1, BLASTNA_SENTINEL, np.uint8), np.full(1, BLASTNA_SENTINEL, np.uint8)))
        return self._oriented

    def evalue_bits(self, score: int, context: int):
        """``nucl_evalue_bits`` of a raw score in a context, remembered per (score, statistics
        key): a pure function of the score, the gapped block and the search space."""
        key = (score, self.stat_key[context])
        r = self._evalues.get(key)
        if r is None:
            r = self._evalues[key] = nucl_evalue_bits(score, self.gapped[context], self.searchsp[context])
        return r

    def evalues_bits(self, scores, contexts):
        """(E-values, bit scores) as float arrays of rows (raw score, context), the floats
        :meth:`evalue_bits` gives: the same IEEE operations elementwise (``searchsp * exp(-lambda
        S + ln K)``, ``(S lambda - ln K) / ln 2``) with ``math.exp`` once per distinct exponent
        (numpy's vectorised exp may differ in the last bit: ``stats.evalue.karlin_evalue``)."""
        scores = np.asarray(scores, dtype=np.int64)
        contexts = np.asarray(contexts, dtype=np.int64)
        if not len(scores):
            return np.zeros(0), np.zeros(0)
        if self._keys is None:
            self._keys = _key_values(self.stat_key, self.gapped, self.searchsp)
        key_of, lam, logk, rnd, ssp = self._keys
        k = key_of[contexts]
        ex = self._exp_values(k, scores, lam, logk, rnd)
        return ssp[k] * ex, (scores.astype(np.float64) * lam[k] - logk[k]) / BIT_LN2

    def _exp_values(self, k, scores, lam, logk, rnd):
        """``math.exp(-lambda S' + ln K)`` of each row (statistics key ``k``, raw score; S' the
        score rounded down to even where the key says so), each (key, score) computed once per
        search and kept in a table (a search asks for the same few thousand many times; racing
        threads at worst compute an entry twice)."""
        tab = self._exps
        lo, hi = int(scores.min()), int(scores.max())
        if lo < 0 or hi >= 1 << 20:       # outside the table: each distinct exponent, once
            return self._exp_direct(k, scores, lam, logk, rnd)
        if tab is None or tab.shape[1] <= hi:
            grown = np.full((len(lam), max(1024, 1 << hi.bit_length())), np.nan)
            if tab is not None:
                grown[:, :tab.shape[1]] = tab
            tab = self._exps = grown
        ex = tab[k, scores]
        miss = np.flatnonzero(np.isnan(ex))
        if miss.size:
            ex[miss] = got = self._exp_direct(k[miss], scores[miss], lam, logk, rnd)
            tab[k[miss], scores[miss]] = got
        return ex

    @staticmethod
    def _exp_direct(k, scores, lam, logk, rnd):
        rs = np.where(rnd[k], scores & ~1, scores).astype(np.float64)
        x = -lam[k] * rs + logk[k]
        u, inv = np.unique(x, return_inverse=True)
        return np.array([math.exp(v) for v in u.tolist()], dtype=np.float64)[inv.reshape(-1)]


def _key_values(stat_key, gapped, searchsp):
    """Per statistics key (``stat_key``'s numbers; -1, an invalid context, becomes the last):
    lambda, ln K, round-down flag and search space, as arrays, with each context's key."""
    key_of = np.asarray(stat_key, dtype=np.int64)
    n = int(key_of.max()) + 2 if len(key_of) else 1
    key_of = np.where(key_of < 0, n - 1, key_of)
    lam, logk = np.full(n, np.nan), np.full(n, np.nan)
    rnd, ssp = np.zeros(n, dtype=bool), np.full(n, np.nan)
    keys, first = np.unique(key_of, return_index=True)
    for j, c in zip(keys.tolist(), first.tolist()):   # any context of a key has its values
        g = gapped[c]
        if g is not None:
            lam[j], logk[j], rnd[j], ssp[j] = g.karlin.lam, g.karlin.logK, g.round_down, float(searchsp[c])
    return key_of, lam, logk, rnd, ssp


def setup_search(queries, opts: BlastnOptions, db_length: int, db_num_seqs: int,
                 context_searchsp=None, threads: int = 1) -> Setup:
    """Everything BLAST+ fixes before the first subject is scanned. ``context_searchsp``: a
    search space per context index, used instead of the computed ones (a query chunk's search,
    :mod:`nucl_split`). ``threads``: DUST and the lookup table's sort run on that many threads
    (same masks, same table). DUST runs beside the context layout, the statistics and the
    compressed query, which do not need its masks."""
    from .nucl_context_stats import context_stats
    from .nucl_extend import choose_extend
    from .nucl_words import compress_query_threads
    from .nucl_hsp import strand_offsets
    from .nucl_ungapped import nucl_score_table

    # DUST on its own thread while this one lays out the contexts and computes what does not
    # depend on the masks (statistics, compressed query); the lookup table waits for both
    flat = flat_queries(queries)
    if flat is None:   # queries made elsewhere: their pieces joined once, here
        starts = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([len(q.text) for q in queries], out=starts[1:])
        flat = (b"".join(q.text for q in queries), None, starts)
    with ThreadPoolExecutor(max_workers=1) as pool:
        dust = pool.submit(query_mask_arrays, flat[0], flat[2], dust=opts.dust,
                           lcase=opts.lcase_masking, threads=threads)
        try:
            batch = batch_layout([q.codes for q in queries] if flat[1] is None else None,
                                 strand=opts.strand, threads=threads,
                                 flat=None if flat[1] is None else flat[1:])
            matrix = blastna_matrix(opts.reward, opts.penalty).astype(np.int32)   # one compiled variant with BLASTP's DP
            dbl = opts.dbsize or db_length
            blocks, group = ungapped_groups(batch, matrix, threads)
            valid, gps, ssp, cg, cu, xu, stat_key = context_stats(opts, blocks, group, batch.lengths,
                                                                  dbl, db_num_seqs, context_searchsp)
            compressed = compress_query_threads(batch.seq, threads)
        finally:
            masks = dust.result()
    set_segments(batch, masks)
    entries, max_off = batch.estimate_entries()
    kind, width = choose_na_lookup(opts.word_size, entries, max_off)
    flat = build_flat(batch, kind, width, opts.word_size, threads) if batch.segments else None
    ext = choose_extend(flat.kind if flat else kind, width, opts.word_size, opts.word_size - width + 1)
    distinct = dict(zip(map(id, gps), gps)).values()   # a few blocks, shared by 100,000s of contexts
    lam = min((g.karlin.lam for g in distinct if g is not None), default=1.0)
    xg = int(opts.xdrop_gap_bits * LN2 / lam)
    xf = int(max(GAP_XDROP_FINAL_BITS * LN2 / lam, xg))
    return Setup(opts, queries, batch, flat, ext, matrix,
                 nucl_score_table(opts.reward, opts.penalty), gps, valid, ssp, cg, cu, xu,
                 (0.8 * cu).astype(np.int64), xg, xf, masks, compressed,
                 strand_offsets(batch.offsets, batch.minus), stat_key)


def invalid_queries(st: Setup) -> list:
    """Indices, ascending, of the queries with a context without valid Karlin-Altschul
    parameters (blastn warns about each; one pass, not one comparison over every context per
    query: ~1.3 s for 50,000 reads)."""
    b = st.batch
    return np.unique(np.asarray(b.query_of)[~np.asarray(st.ctx_valid, dtype=bool)]).tolist()
