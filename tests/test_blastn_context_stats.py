"""setup_search's per-context statistics (``nucl_context_stats.context_stats``: values once per
distinct key, spread with numpy) equal the context-by-context rule (``context_stats_ref``), with
computed and given search spaces, invalid contexts (all N), -strand plus and -searchsp."""
import os

import numpy as np
import pytest

from clalign.blast.nucl_context_stats import context_stats, context_stats_ref
from clalign.blast.nucl_lookup import QueryBatch
from clalign.blast.nucl_setup import BlastnOptions, read_queries, ungapped_blocks, ungapped_groups
from clalign.data.nucleotide import blastna_matrix

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def _batch(strand):
    rng = np.random.default_rng(4)
    seqs = [q.codes for q in read_queries(os.path.join(HERE, "reads.fa"))]
    for k in range(80):
        s = rng.integers(0, 4, int(rng.integers(5, 300))).astype(np.uint8)
        if k % 4 == 0:
            s[rng.random(len(s)) < 0.05] = 9
        seqs.append(s)
        if k % 10 == 0:
            seqs.append(s.copy())                       # equal contexts share every key
    seqs.insert(3, np.full(30, 14, dtype=np.uint8))     # no block: invalid context
    return QueryBatch.build(seqs, [[] for _ in seqs], strand=strand)


@pytest.mark.parametrize("task,strand,searchsp,given", [
    ("megablast", "both", 0, False), ("blastn", "plus", 0, False), ("megablast", "both", 0, True),
    ("blastn-short", "both", 123456789, False)])
def test_context_stats_equal_reference(task, strand, searchsp, given, monkeypatch):
    opts = BlastnOptions(task=task, strand=strand, searchsp=searchsp)
    b = _batch(strand)
    m = blastna_matrix(opts.reward, opts.penalty).astype(np.int32)
    blocks, group = ungapped_groups(b, m)
    kus = ungapped_blocks(b, m)
    assert kus == [blocks[g] if g >= 0 else None for g in group]
    from clalign.blast import nucl_flat_nb

    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1)   # threads on this small batch
    for t in (2, 5):                                    # letter counts on threads: same groups
        bt, gt = ungapped_groups(b, m, t)
        assert bt == blocks and np.array_equal(gt, group)
    sp = None
    if given:
        sp = np.where(np.arange(len(b.offsets)) % 3 == 0, 2.5e9, 7.0e8)
    got = context_stats(opts, blocks, group, b.lengths, 5_000_000, 10, sp)
    want = context_stats_ref(opts, kus, b.lengths.tolist(), 5_000_000, 10, sp)
    assert got[1] == want[1] and got[6] == want[6]
    for x, y in zip(got[:1] + got[2:6], want[:1] + want[2:6]):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert not got[0].all() and len(set(got[6]) - {-1}) >= 2


def test_context_stats_no_valid_context():
    opts = BlastnOptions()
    b = QueryBatch.build([np.full(20, 14, dtype=np.uint8)], [[]])
    m = blastna_matrix(opts.reward, opts.penalty).astype(np.int32)
    blocks, group = ungapped_groups(b, m)
    got = context_stats(opts, blocks, group, b.lengths, 1000, 1)
    want = context_stats_ref(opts, ungapped_blocks(b, m), b.lengths, 1000, 1)
    assert got[6] == want[6] == [-1, -1] and got[1] == want[1] == [None, None]
    assert np.array_equal(got[3], want[3])


@pytest.mark.parametrize("strand", ["both", "minus"])
def test_invalid_queries_as_the_per_query_rule(strand):
    """invalid_queries = the queries with any invalid context, ascending (the rule it replaced:
    one comparison over every context per query)."""
    from clalign.blast.nucl_setup import Query, invalid_queries, setup_search

    rng = np.random.default_rng(2)
    qs = []
    for k in range(30):
        codes = (np.full(25, 14, dtype=np.uint8) if k in (0, 7, 8, 29)
                 else rng.integers(0, 4, 60).astype(np.uint8))
        qs.append(Query(f"q{k}", f"q{k}", b"N" * 25 if k in (0, 7, 8, 29) else b"A" * 60, codes))
    st = setup_search(qs, BlastnOptions(strand=strand, dust=False), 10 ** 6, 3)
    b = st.batch
    want = [qi for qi in range(len(qs)) if not st.ctx_valid[b.query_of == qi].all()]
    assert invalid_queries(st) == want == [0, 7, 8, 29]
