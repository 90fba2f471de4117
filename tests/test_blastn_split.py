"""BLAST+ 2.12's query-batch split (``clalign.blast.nucl_split``): chunk count and size, chunk
ranges, query pieces and offsets, the ``CHUNK_SIZE`` override blastn reads, and whole searches
against blastn 2.12 run with ``CHUNK_SIZE=300`` (golden tables split300_*.tsv in
tests/data/blastn/search, made by its make_search_golden.py)."""
import os

import pytest

from clalign.blast import nucl_split as ns
from clalign.blast.blastn import run_blastn, tabular_lines
from clalign.blast.nucl_setup import BlastnOptions
from clalign.errors import ParameterError

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def test_chunk_count_rule():
    assert ns.chunk_count(23025, 300) == (115, 300)       # (23025 + 114*100)//115 = 299, +1
    assert ns.chunk_count(23025, 1000) == (25, 1018)
    assert ns.chunk_count(1000000, 1000000) == (1, 1000000)
    assert ns.chunk_count(1999799, 1000000) == (1, 1999799)   # n = total // 999900 = 1
    assert ns.chunk_count(2000000, 1000000) == (2, 1000051)
    assert ns.chunk_count(500, 100) == (1, 500)           # chunk not above the overlap


def test_chunk_bounds_pieces_and_offsets():
    for total, chunk in ((23025, 300), (10007, 450), (2000000, 1000000)):
        n, size = ns.chunk_count(total, chunk)
        b = ns.chunk_bounds(total, n, size)
        assert len(b) == n and b[0][0] == 0 and b[-1][1] == total
        for (s0, e0), (s1, e1) in zip(b, b[1:]):
            assert s1 == s0 + size - ns.CHUNK_OVERLAP and e0 == s0 + size
    lengths = [5, 3, 120, 40]
    got = ns.chunk_pieces(lengths, [(0, 4), (3, 8), (7, 168)])
    assert got == [[ns.Piece(0, 0, 3)], [ns.Piece(0, 3, 4), ns.Piece(1, 0, 2)],
                   [ns.Piece(1, 2, 2), ns.Piece(2, 0, 119), ns.Piece(3, 0, 39)]]
    # BLAST+'s offset corrections give each piece's start (plus) and its end from the
    # query's end (minus) when pieces overlap by at most the overlap
    lengths = [700, 90, 431, 1000] * 5
    lay = ns.split_layout(lengths, "blastn", environ={"CHUNK_SIZE": "300"})
    for row in ns.piece_offsets(lay.pieces, lengths):
        for p, plus, minus in row:
            assert (plus, minus) == (p.first, lengths[p.query] - 1 - p.last)


def test_chunk_size_override_and_no_split():
    assert ns.query_chunk_size("megablast", {}) == 5000000
    assert ns.query_chunk_size("blastn-short", {}) == 1000000
    assert ns.query_chunk_size("blastn", {"CHUNK_SIZE": "300"}) == 300
    with pytest.raises(ParameterError):
        ns.query_chunk_size("blastn", {"CHUNK_SIZE": "3e2"})
    lengths = [700] * 40
    assert ns.split_layout(lengths, "blastn", environ={}) is None
    assert ns.split_layout(lengths, "blastn", ungapped=True, environ={"CHUNK_SIZE": "300"}) is None
    # from 1,000 on blastn reads the file in batches under the chunk size: searched whole
    assert ns.split_layout(lengths, "blastn", environ={"CHUNK_SIZE": "1001"}) is None
    assert not ns.batch_may_split(lengths, "blastn", environ={"CHUNK_SIZE": "1001"})
    assert ns.batch_may_split([1801], "blastn", environ={"CHUNK_SIZE": "1001"})
    assert ns.batch_may_split([5000800], "megablast", environ={})
    lay = ns.split_layout(lengths, "blastn", environ={"CHUNK_SIZE": "300"})
    assert lay.num_chunks == 140 and lay.chunk_size == 300
    assert {p.query for ps in lay.pieces for p in ps} == set(range(40))


@pytest.mark.parametrize("name,task,query,extra", [
    ("split300_blastn.tsv", "blastn", "reads.fa", {}),
    ("split300_megablast.tsv", "megablast", "reads.fa", {}),
    ("split300_blastn-short.tsv", "blastn-short", "short.fa", {}),
    ("split300_bn_plus.tsv", "blastn", "reads.fa", {"strand": "plus"}),
])
def test_split_search_equals_blastn(name, task, query, extra, monkeypatch):
    """Chunks of 300 bases (115 over the 36 reads, 2 over the 12 short ones): blastn's own
    split search (its cutoffs per chunk context index: -task blastn loses 63 weak lines and
    gains 3, blastn-short differs in 17 from the unsplit search), on 2 threads."""
    monkeypatch.setenv("CHUNK_SIZE", "300")
    res = run_blastn(os.path.join(HERE, query), os.path.join(HERE, "genome.fa"),
                     BlastnOptions(task=task, **extra), num_threads=2)
    with open(os.path.join(HERE, name)) as fh:
        assert tabular_lines(res) == fh.read().splitlines()
