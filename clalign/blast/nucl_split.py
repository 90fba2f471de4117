"""How BLAST+ 2.12 cuts a long BLASTN query batch into chunks (``CQuerySplitter``,
``split_query_aux_priv.cpp``, ``split_query_cxx.cpp``; read in ``ncbi-cxx-toolkit-public``,
written afresh).

The queries' summed length (no separators) is compared with the chunk size: 1,000,000 for
``-task blastn``/``blastn-short``, 5,000,000 for megablast, or the environment variable
``CHUNK_SIZE`` that blastn 2.12 itself reads (so tests can use small values). An ungapped
search is never split. Otherwise ``n = total // (chunk - 100)`` chunks (no split when
``n <= 1``), the chunk size evened out to ``(total + (n - 1) * 100) // n``, plus one when
``n < size - 100``. Chunk ``k`` starts at ``k * (size - 100)`` and ends at ``start + size``
(the last one at ``total``), both as BLAST+'s inclusive ranges on the concatenated query, in
which query ``i`` covers ``[a_i, a_i + len_i]`` with ``a_{i+1} = a_i + len_i + 1`` (one more
position per query than the summed length counts). A query belongs to every chunk whose range
intersects its own; its piece there is ``[max(0, start - a_i), min(len_i - 1, end - a_i)]``
(0-based, inclusive), both strands (the strand option as for the whole query).

This module gives that layout (:func:`split_layout`). ``run_blastn`` uses it to tell the user
when blastn would split the batch; searching the chunks and merging their HSP lists
(``BlastHSPStreamMerge``) is not done, so output for such batches may differ from blastn's
(``docs/blastn.md``).
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
    """[(start, end)] of the chunks on the concatenated query, BLAST+'s inclusive ranges
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
    (``[a_i, a_i + len_i]``, ``a_{i+1} = a_i + len_i + 1``) intersects the chunk's
    (``x_ComputeQueryIndicesForChunks`` / ``s_SetSplitQuerySeqInterval``)."""
    starts, a = [], 0
    for n in lengths:
        starts.append(a)
        a += int(n) + 1
    out = []
    for cs, ce in bounds:
        got = []
        for qi, (a, n) in enumerate(zip(starts, lengths)):
            n = int(n)
            if max(cs, a) <= min(ce, a + n):
                got.append(Piece(qi, max(0, cs - a), min(n - 1, ce - a)))
        out.append(got)
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


def split_layout(lengths, task: str, ungapped: bool = False, environ=None):
    """The :class:`SplitLayout` of a batch of queries with these lengths, or None when blastn
    searches the batch whole (summed length within one chunk, or an ungapped search)."""
    if ungapped:
        return None
    total = int(sum(int(n) for n in lengths))
    n, size = chunk_count(total, query_chunk_size(task, environ))
    if n <= 1:
        return None
    bounds = chunk_bounds(total, n, size)
    return SplitLayout(size, bounds, chunk_pieces(lengths, bounds))
