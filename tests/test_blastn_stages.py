"""BLASTN's compiled preliminary stage (nucl_stages_nb, interval tree of itree_nb under BLASTN's
rules) against its plain form (nucl_search.prelim_chunk_ref, NuclTree), subject by subject, on
the golden search data: the same HSPs in the same order."""
import os

import pytest

from clalign.blast.nucl_search import initial_hits, prelim_chunk_ref, subject_array
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.blast.nucl_stages_nb import prelim_hsps
from clalign.blast.nucl_words import DiagState
from clalign.data.nucleotide import open_nucleotide

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def _fields(h):
    return (h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.context, h.q_gstart, h.s_gstart)


@pytest.mark.parametrize("task,strand", [("megablast", "both"), ("blastn", "both"), ("blastn", "minus")])
def test_compiled_prelim_equals_reference(task, strand):
    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task, strand=strand), nt.total_bases, len(nt))
    diag = DiagState(len(st.batch.seq))
    seen = 0
    for oid in range(len(nt)):
        s = subject_array(nt.packed(oid))
        n = int(nt.lengths[oid])
        rows = initial_hits(st, diag, s, n)
        want = [_fields(h) for h in prelim_chunk_ref(st, rows, s, n)]
        got = [tuple(r) for r in prelim_hsps(st, rows, s, n).tolist()]
        assert got == want
        seen += len(want)
    assert seen > 20
