"""How BLAST+ 2.12 searches a long BLASTN query batch in chunks (``CQuerySplitter``,
``split_query_aux_priv.cpp``, ``split_query_cxx.cpp``, ``blast_hspstream.c``; read in
``ncbi-cxx-toolkit-public``, written afresh).

The queries' summed length is compared with the chunk size: 1,000,000 for
``-task blastn``/``blastn-short``, 5,000,000 for megablast, or the environment variable
``CHUNK_SIZE`` that blastn 2.12 itself reads (so tests can use small values). An ungapped
search is never split. Otherwise ``n = total // (chunk - 100)`` chunks (no split when
``n <= 1``), the chunk size evened out to ``(total + (n - 1) * 100) // n``, plus one when
``n < size - 100``. Chunk ``k`` covers ``[k * (size - 100), start + size)`` of the
concatenated queries (the last one ends at ``total``); each query it touches contributes the
piece it overlaps, both strands, so consecutive pieces of a query share 100 bases.

Which batch: blastn 2.12 reads the query file in batches of at most ``chunk - 1000`` bases
(``blastn_app.cpp``: ``CBatchSizeMixer`` with that maximum, adapted to the hits found), each a
search of its own; only a batch past the split size is split. A chunk size under 1,000 makes
that maximum negative and the whole file one batch (1,000 itself makes blastn fail, "Empty
CBlastQueryVector"). Batching alone does not change blastn's output, so clalign splits (the
whole file) only for ``CHUNK_SIZE`` under 1,000, where blastn does exactly that, and otherwise
searches the file whole; :func:`batch_may_split` tells when a query is long enough for
blastn's batch holding it to be split (not reproduced).

Each chunk is searched on its own (its own masks, lookup table, Karlin blocks), except that
its context ``j`` takes the search space of context ``j`` of the *whole* batch
(``SplitQuery_SetEffectiveSearchSpace`` stores them by context index and a chunk reads them by
its own index), which moves its cutoffs and preliminary E-values. Its HSPs are mapped back to
the whole queries (per-context offset corrections) and merged per query and subject
(``BlastHSPStreamMerge``); the traceback then runs on the whole queries as usual.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import ParameterError

#: blastn's query chunk size per task (``SplitQuery_GetChunkSize``)
CHUNK_SIZES = {"megablast": 5000000, "blastn": 1000000, "blastn-short": 1000000}
#: bases shared by consecutive chunks (``SplitQuery_GetOverlapChunkSize``)
CHUNK_OVERLAP = 100


def query_chunk_size(task: str, environ=None) -> int:
    """The chunk size blastn 2.12 uses for ``task``: ``CHUNK_SIZE`` from the environment when
    set (an integer, as blastn reads it), else the task's default."""
    env = os.environ if environ is None else environ
    text = env.get("CHUNK_SIZE")
    if text is not None and text.strip():
        try:
            return int(text.strip())
        except ValueError:
            raise ParameterError(f"environment variable CHUNK_SIZE: not an integer: {text!r}") from None
    return CHUNK_SIZES[task]


def chunk_count(total: int, chunk: int, overlap: int = CHUNK_OVERLAP):
    """(number of chunks, evened-out chunk size) for a batch of ``total`` bases
    (``SplitQuery_CalculateNumChunks``); (1, total) when the batch is not split."""
    n = total // (chunk - overlap) if chunk > overlap else 0
    if n <= 1:
        return 1, total
    size = (total + (n - 1) * overlap) // n
    if n < size - overlap:
        size += 1
    return n, size


def chunk_bounds(total: int, n: int, size: int, overlap: int = CHUNK_OVERLAP):
    """[(start, end)] of the chunks on the concatenated query, half-open
    (``x_ComputeChunkRanges``: the last chunk, or one reaching the end, ends at ``total``)."""
    out, start = [], 0
    for k in range(n):
        end = start + size
        if end >= total or k + 1 == n:
            end = total
        out.append((start, end))
        start += size - overlap
        if start > total or end == total:
            break
    return out


@dataclass(frozen=True)
class Piece:
    """Part of query ``query`` that a chunk holds: bases ``first..last`` (0-based, inclusive)."""
    query: int
    first: int
    last: int


def chunk_pieces(lengths, bounds):
    """Per chunk, the :class:`Piece` of every query whose range on the concatenated query
    intersects the chunk's (``x_ComputeQueryIndicesForChunks`` / ``s_SetSplitQuerySeqInterval``)."""
    starts, a = [], 0
    for n in lengths:
        starts.append(a)
        a += int(n)
    out = []
    for cs, ce in bounds:
        got = []
        for qi, (a, n) in enumerate(zip(starts, lengths)):
            n = int(n)
            if max(cs, a) < min(ce, a + n):
                got.append(Piece(qi, max(0, cs - a), min(n, ce - a) - 1))
        out.append(got)
    return out


def piece_offsets(pieces, lengths, overlap: int = CHUNK_OVERLAP):
    """Per chunk, [(piece, plus offset, minus offset)]: what the chunk's HSP offsets on a
    piece's plus and minus strand contexts get added (``x_ComputeContextOffsets_
    NonTranslatedQueries``: the plus offset sums, over the query's earlier chunks, each piece's
    length less ``min(overlap, next piece's length, its length)``; the minus offset is the
    query length less the same sum taken up to this chunk's piece)."""
    runs = {}
    for k, ps in enumerate(pieces):
        for p in ps:
            runs.setdefault(p.query, []).append((k, p.last - p.first + 1))
    out = []
    for k, ps in enumerate(pieces):
        row = []
        for p in ps:
            run = runs[p.query]
            m = [c for c, _ in run].index(k)
            ln = [n for _, n in run]
            plus = sum(ln[t - 1] - min(overlap, ln[t], ln[t - 1]) for t in range(1, m + 1))
            upto = sum(ln[t] - min(overlap, ln[t], ln[t - 1] if t else 0) for t in range(m + 1))
            row.append((p, plus, int(lengths[p.query]) - upto))
        out.append(row)
    return out


@dataclass
class SplitLayout:
    """The chunks blastn 2.12 would search a query batch in."""
    chunk_size: int          # the evened-out size
    bounds: list             # [(start, end)] inclusive, on the concatenated query
    pieces: list             # per chunk, [Piece]

    @property
    def num_chunks(self) -> int:
        return len(self.bounds)


#: blastn's query batches hold at most the chunk size less this many bases (``blastn_app.cpp``)
BATCH_MARGIN = 1000


def split_layout(lengths, task: str, ungapped: bool = False, environ=None):
    """The :class:`SplitLayout` blastn 2.12 searches a query file with these lengths in, when
    the file is one batch (chunk size under :data:`BATCH_MARGIN`) and over the split size; else
    None (searched whole: also an ungapped search)."""
    chunk = query_chunk_size(task, environ)
    if ungapped or chunk >= BATCH_MARGIN:
        return None
    total = int(sum(int(n) for n in lengths))
    n, size = chunk_count(total, chunk)
    if n <= 1:
        return None
    bounds = chunk_bounds(total, n, size)
    return SplitLayout(size, bounds, chunk_pieces(lengths, bounds))


def batch_may_split(lengths, task: str, ungapped: bool = False, environ=None) -> bool:
    """Whether blastn's query batching (chunk size of :data:`BATCH_MARGIN` or more) may give a
    batch past the split size: a batch holds at most ``chunk - 1000`` bases plus its last query,
    and is split from ``2 * (chunk - 100)`` bases on, so only with a query of ``chunk + 800``
    bases or more."""
    chunk = query_chunk_size(task, environ)
    if ungapped or chunk < BATCH_MARGIN or not len(lengths):
        return False
    return max(int(n) for n in lengths) >= chunk + 800


def split_prelim(st, queries, nt, opts, layout, prelim_all, hitlist_size, times=None,
                 pool=None, device=None):
    """(oid, [NHSP]) of every subject in OID order, as ``prelim_all`` gives for the whole
    batch, from the chunks of ``layout``: each chunk set up on its pieces (search spaces by
    context index from the whole batch's ``st``), searched with ``prelim_all(chunk setup, nt,
    oids, times, pool, device words)``, each chunk query's ``hitlist_size`` best subjects kept,
    HSPs moved to the whole queries' contexts and offsets, and the lists of a query and subject
    appended chunk after chunk and sorted by score."""
    from .hsp import hitlist_key
    from .nucl_hsp import score_order
    from .nucl_setup import Query, setup_search

    lengths = [len(q.codes) for q in queries]
    b = st.batch
    full = {(int(q), bool(m)): c for c, (q, m) in enumerate(zip(b.query_of, b.minus))}
    strands = [m for m in (False, True) if opts.strand == "both" or m == (opts.strand == "minus")]
    merged = {}
    oids = range(len(nt))
    for row in piece_offsets(layout.pieces, lengths):
        parts = [Query(queries[p.query].qid, queries[p.query].title,
                       queries[p.query].text[p.first:p.last + 1],
                       queries[p.query].codes[p.first:p.last + 1]) for p, _, _ in row]
        # the chunk's context (piece i, strand m) is BLAST+'s context 2i + m: it reads the
        # search space of the batch's context 2i + m, i.e. of query i's strand m
        ssp = [st.searchsp[full[i, m]] for i in range(len(parts)) for m in strands]
        sk = setup_search(parts, opts, nt.total_bases, len(nt), context_searchsp=ssp)
        if not sk.ctx_valid.any():
            continue
        dev = None
        if device is not None and sk.flat is not None:
            from .nucl_device import device_words
            dev = device_words(nt, sk, device, times)
        kept = [[] for _ in parts]   # per chunk query: (hit-list key, oid, HSPs)
        for oid, hsps in prelim_all(sk, nt, oids, times, pool, dev):
            groups = {}
            for h in hsps:
                groups.setdefault(int(sk.batch.query_of[h.context]), []).append(h)
            for i, hs in groups.items():
                best = min(h.evalue for h in hs)
                kept[i].append((hitlist_key(best, max(h.score for h in hs), oid), oid, hs))
        for i, lists in enumerate(kept):
            p, plus, minus = row[i]
            for _, oid, hs in sorted(lists, key=lambda t: t[0])[:hitlist_size]:
                for h in hs:
                    m = bool(sk.batch.minus[h.context])
                    off = minus if m else plus
                    h.context = full[p.query, m]
                    h.q_start += off
                    h.q_end += off
                    h.q_gstart += off
                merged.setdefault(oid, []).extend(hs)
    for oid in oids:
        yield oid, sorted(merged.pop(oid, []), key=score_order)
