"""clalign.output.columns: BLASTN's records kept as columns give the same records and the same
tabular text as the same records made one by one (every column, -outfmt 6 and 7)."""
import io
import os

import numpy as np
import pytest

from clalign.blast.blastn import run_blastn
from clalign.blast.nucl_setup import BlastnOptions
from clalign.output import QueryHits, write_tabular
from clalign.output.columns import HitRows, QueryTable
from clalign.output.tabular import FIELDS, STD_FIELDS

from test_output import reference_tabular

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


@pytest.fixture(scope="module", params=["megablast", "blastn"])
def results(request):
    return run_blastn(os.path.join(HERE, "reads.fa"), os.path.join(HERE, "genome.fa"),
                      BlastnOptions(task=request.param), num_threads=2)


def test_hit_rows_are_records(results):
    rows = [r.hits for r in results if len(r.hits)]
    assert rows and all(isinstance(h, HitRows) for h in rows)
    for h in rows:
        recs = list(h)
        assert h == recs and len(h) == len(recs)
        assert [h[i] for i in range(len(h))] == recs and list(h[1:]) == recs[1:]
        for a in recs:
            assert type(a.qlen) is int and type(a.evalue) is float and type(a.qseq) is str
            assert len(a.qseq) == len(a.sseq) == a.length
            assert a.qend - a.qstart + 1 == len(a.qseq) - a.qseq.count("-")


@pytest.mark.parametrize("cols", [STD_FIELDS, tuple(FIELDS), ("qseqid", "qseq", "sseq", "btop", "qcovs", "sstrand")])
@pytest.mark.parametrize("comments", [False, True])
def test_block_text_equals_records_text(results, cols, comments):
    listed = [QueryHits(r.query_id, r.qlen, list(r.hits), r.title) for r in results]
    got, want = io.StringIO(), io.StringIO()
    write_tabular(got, results, cols, comments=comments, program="BLASTN 2.12.0+", database="g")
    write_tabular(want, listed, cols, comments=comments, program="BLASTN 2.12.0+", database="g")
    assert got.getvalue() == want.getvalue()
    assert got.getvalue() == reference_tabular(listed, cols, comments, "BLASTN 2.12.0+", "g")
    assert got.getvalue().count("\n") > 20


def test_shuffled_hit_rows_are_put_in_order(results):
    """write_tabular orders a block's rows as order_hits orders the records."""
    rng = np.random.default_rng(1)
    shuffled = [QueryHits(r.query_id, r.qlen, HitRows(r.hits.table, rng.permutation(r.hits.rows))
                          if isinstance(r.hits, HitRows) else r.hits, r.title) for r in results]
    got, want = io.StringIO(), io.StringIO()
    write_tabular(got, shuffled)
    write_tabular(want, results)
    assert got.getvalue() == want.getvalue()


def test_spans_of_one_base_written_alone_or_in_part(results):
    """A search's HitRows are spans of one array (rows_of takes it whole when they follow each
    other); every other result, or the results reversed, are not consecutive spans: the same
    text as the records' either way."""
    assert any(isinstance(r.hits, HitRows) and r.hits.base is not None for r in results)
    hit = [r for r in results if isinstance(r.hits, HitRows)]
    table = hit[0].hits.table
    base = np.concatenate([r.hits.rows for r in hit])
    ends = np.cumsum([len(r.hits) for r in hit]).tolist()

    def spans():   # fresh ones each time: a span, once sliced, keeps its own array
        return [QueryHits(r.query_id, r.qlen, HitRows(table, None, base, a, b), r.title)
                for r, a, b in zip(hit, [0] + ends[:-1], ends)]

    for pick in (slice(None), slice(None, None, 2), slice(None, None, -1), slice(1, None)):
        listed = [QueryHits(r.query_id, r.qlen, list(r.hits), r.title) for r in hit[pick]]
        got, want = io.StringIO(), io.StringIO()
        write_tabular(got, spans()[pick])
        write_tabular(want, listed)
        assert got.getvalue() == want.getvalue()


@pytest.fixture(scope="module")
def table_results():
    return run_blastn(os.path.join(HERE, "reads.fa"), os.path.join(HERE, "genome.fa"),
                      BlastnOptions(task="megablast"), num_threads=2, table=True)


def test_query_table_is_the_results(table_results):
    """run_blastn(table=True)'s QueryTable: the same QueryHits as the list, by index, slice and
    iteration, and the same text from the writers (which read its arrays)."""
    t = table_results
    want = run_blastn(os.path.join(HERE, "reads.fa"), os.path.join(HERE, "genome.fa"),
                      BlastnOptions(task="megablast"), num_threads=2)
    assert isinstance(t, QueryTable) and len(t) == len(want) > 3
    assert list(t) == want and t[-1] == want[-1] and t[1:4] == want[1:4] and t[::-2] == want[::-2]
    with pytest.raises(IndexError):
        t[len(t)]
    for cols in (STD_FIELDS, tuple(FIELDS)):
        for comments in (False, True):
            got, ref = io.StringIO(), io.StringIO()
            write_tabular(got, t, cols, comments=comments, program="BLASTN 2.12.0+", database="g")
            write_tabular(ref, want, cols, comments=comments, program="BLASTN 2.12.0+", database="g")
            assert got.getvalue() == ref.getvalue()


def test_query_table_without_records():
    t = QueryTable(["a", "b"], [5, 6], ["a x", "b"], None, np.zeros(0, dtype=np.int64), [0, 0, 0])
    listed = [QueryHits("a", 5, [], "a x"), QueryHits("b", 6, [], "b")]
    assert list(t) == listed
    for comments in (False, True):
        got, ref = io.StringIO(), io.StringIO()
        write_tabular(got, t, comments=comments)
        write_tabular(ref, listed, comments=comments)
        assert got.getvalue() == ref.getvalue()
