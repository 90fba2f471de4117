"""BLAST+ 2.12's query-batch split layout (``clalign.blast.nucl_split``): chunk count and size,
chunk ranges, query pieces, the ``CHUNK_SIZE`` override blastn reads, and the warning
``run_blastn`` gives when blastn would split the batch."""
import os

import pytest

from clalign.blast import nucl_split as ns
from clalign.blast.blastn import _warn_if_split
from clalign.blast.nucl_setup import BlastnOptions, read_queries
from clalign.errors import ParameterError

READS = os.path.join(os.path.dirname(__file__), "data", "blastn", "search", "reads.fa")


def test_chunk_count_rule():
    assert ns.chunk_count(23025, 300) == (115, 300)       # (23025 + 114*100)//115 = 299, +1
    assert ns.chunk_count(23025, 1000) == (25, 1018)
    assert ns.chunk_count(1000000, 1000000) == (1, 1000000)
    assert ns.chunk_count(1999799, 1000000) == (1, 1999799)   # n = total // 999900 = 1
    assert ns.chunk_count(2000000, 1000000) == (2, 1000051)
    assert ns.chunk_count(500, 100) == (1, 500)           # chunk not above the overlap


def test_chunk_bounds_cover_with_overlap():
    for total, chunk in ((23025, 300), (23025, 1000), (2000000, 1000000), (10007, 450)):
        n, size = ns.chunk_count(total, chunk)
        b = ns.chunk_bounds(total, n, size)
        assert len(b) == n and b[0][0] == 0 and b[-1][1] == total
        for (s0, e0), (s1, e1) in zip(b, b[1:]):
            assert s1 == s0 + size - ns.CHUNK_OVERLAP and e0 == s0 + size


def test_chunk_pieces_inclusive_ranges():
    # query 0 covers [0, 5], query 1 [6, 9] on the concatenated query
    got = ns.chunk_pieces([5, 3], [(0, 4), (3, 8)])
    assert got == [[ns.Piece(0, 0, 4)], [ns.Piece(0, 3, 4), ns.Piece(1, 0, 2)]]
    # a chunk starting on a query's extra position gets an empty piece of it
    assert ns.chunk_pieces([5, 3], [(5, 8)]) == [[ns.Piece(0, 5, 4), ns.Piece(1, 0, 2)]]


def test_chunk_size_override_and_no_split():
    assert ns.query_chunk_size("megablast", {}) == 5000000
    assert ns.query_chunk_size("blastn-short", {}) == 1000000
    assert ns.query_chunk_size("blastn", {"CHUNK_SIZE": "300"}) == 300
    with pytest.raises(ParameterError):
        ns.query_chunk_size("blastn", {"CHUNK_SIZE": "3e2"})
    lengths = [700] * 40
    assert ns.split_layout(lengths, "blastn", environ={}) is None
    assert ns.split_layout(lengths, "blastn", ungapped=True, environ={"CHUNK_SIZE": "300"}) is None
    lay = ns.split_layout(lengths, "blastn", environ={"CHUNK_SIZE": "300"})
    assert lay.num_chunks == 140 and lay.chunk_size == 300
    assert {p.query for ps in lay.pieces for p in ps} == set(range(40))


def test_warning_when_blastn_would_split(monkeypatch, capsys):
    queries = read_queries(READS)
    _warn_if_split(queries, BlastnOptions(task="blastn"))
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("CHUNK_SIZE", "300")
    _warn_if_split(queries, BlastnOptions(task="blastn"))
    assert "115 chunks" in capsys.readouterr().err
