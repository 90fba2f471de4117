"""clalign.output: BLAST tabular text identical to blastp 2.12's, Bio.SearchIO reads it, formats."""
import io
import json
import os

import pytest

from clalign.data import PROTEIN, as_database, get_matrix, read_fasta
from clalign.errors import ParameterError
from clalign.output import (Alignment, QueryHits, format_bitscore, format_evalue, order_hits, parse_outfmt,
                            write_json, write_tabular, write_tsv)
from clalign.stats import SearchStatistics

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = os.path.join(HERE, "data", "blastp", "queries_fields.out7")
DATA = os.path.join(HERE, "..", "data")
COLS = ("qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score qlen slen "
        "nident positive gaps ppos qcovs qcovhsp sstrand btop qseq sseq").split()


@pytest.fixture(scope="module")
def golden_results():
    """Records rebuilt from the golden file's raw fields (ids, lengths, score, starts, aligned strings),
    statistics from clalign.stats, subject_index = database order."""
    db = as_database(os.path.join(DATA, "proteome.faa.gz"))
    oid = {s: i for i, s in enumerate(db.ids)}
    titles = {r.id: f"{r.id} {r.description}".strip() for r in read_fasta(os.path.join(DATA, "queries.faa"))}
    st = SearchStatistics.for_search("BLOSUM62", 11, 1, db.total_residues, len(db))
    m = get_matrix("BLOSUM62").scores
    res = {}
    with open(GOLD) as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = dict(zip(COLS, line.rstrip("\n").split("\t")))
            sc, ql, sl = int(f["score"]), int(f["qlen"]), int(f["slen"])
            a = Alignment.make(f["qseqid"], f["sseqid"], ql, sl, sc, st.bitscore(sc), st.evalue(sc, ql, sl),
                               int(f["qstart"]), int(f["sstart"]), f["qseq"], f["sseq"], scores=m,
                               letters=PROTEIN.letters, subject_index=oid[f["sseqid"]])
            r = res.setdefault(f["qseqid"], QueryHits(f["qseqid"], ql, [], titles[f["qseqid"]]))
            r.hits.append(a)
    return list(res.values())


def test_outfmt7_is_blastp_text(golden_results):
    """Comment lines, field labels, BLAST order (hits shuffled first), every column formatted as
    blastp 2.12 does: the whole file is byte-identical."""
    for r in golden_results:
        r.hits.reverse()
    out = io.StringIO()
    write_tabular(out, golden_results, COLS, comments=True, program="BLASTP 2.12.0+", database="proteome")
    with open(GOLD) as fh:
        assert out.getvalue() == fh.read()


def test_bio_searchio_reads_outfmt_6_and_7(golden_results, tmp_path):
    SearchIO = pytest.importorskip("Bio.SearchIO")
    cols = ("qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore").split()
    for fmt, comments in (("blast-tab", False), ("blast-tab", True)):
        path = tmp_path / f"out{int(comments)}.tsv"
        with open(path, "w") as fh:
            write_tabular(fh, golden_results, cols, comments=comments, database="proteome")
        kw = {"comments": True} if comments else {}
        qrs = list(SearchIO.parse(str(path), fmt, **kw))
        assert [q.id for q in qrs] == [r.query_id for r in golden_results]
        first = order_hits(golden_results[0].hits)[0]
        hsp = qrs[0][0][0]
        assert qrs[0][0].id == first.subject_id
        assert (hsp.query_start + 1, hsp.query_end, hsp.hit_start + 1, hsp.hit_end) == \
               (first.qstart, first.qend, first.sstart, first.send)
        assert hsp.evalue == float(format_evalue(first.evalue))
        assert hsp.ident_pct == float("%.3f" % first.pident)


def test_std_columns_and_parse_outfmt():
    assert parse_outfmt("6") == ("6", ("qaccver", "saccver", "pident", "length", "mismatch", "gapopen", "qstart",
                                       "qend", "sstart", "send", "evalue", "bitscore"))
    assert parse_outfmt("7 qseqid std score")[1][:2] == ("qseqid", "qaccver")
    assert parse_outfmt(" json ") == ("json", None)
    with pytest.raises(ParameterError, match="unknown column 'foo'"):
        parse_outfmt("6 qseqid foo")
    with pytest.raises(ParameterError, match="expected 6, 7"):
        parse_outfmt("5")


def test_no_hits_comment_block():
    out = io.StringIO()
    write_tabular(out, [QueryHits("q1", 10, [], "q1 some protein")], comments=True, database="db")
    assert out.getvalue() == ("# BLASTP 2.12.0+\n# Query: q1 some protein\n# Database: db\n# 0 hits found\n"
                              "# BLAST processed 1 queries\n")


@pytest.mark.parametrize("e,s", [(0.0, "0.0"), (9.9e-181, "0.0"), (1e-180, "1.00e-180"), (3.456e-50, "3.46e-50"),
                                 (0.000899, "8.99e-04"), (0.0009, "0.001"), (0.0999, "0.100"), (0.1, "0.10"),
                                 (0.996, "1.00"), (1.0, "1.0"), (9.96, "10.0"), (10.0, "10"), (123456.7, "123457")])
def test_evalue_format(e, s):
    assert format_evalue(e) == s


@pytest.mark.parametrize("b,s", [(27.65, "27.6"), (27.66, "27.7"), (99.9, "99.9"), (99.95, " 99"), (100.99, "100"),
                                 (5432.7, "5432"), (99999.0, "99999"), (123456.0, "1.235e+05"), (3.04, " 3.0")])
def test_bitscore_format(b, s):
    assert format_bitscore(b) == s


def test_derived_counts_cigar_btop():
    a = Alignment.make("q", "s", 20, 30, 17, 10.0, 1.0, 3, 5, "AC-DEFG--H", "ACWD-FGKLH")
    assert (a.qend, a.send) == (3 + 7 - 1, 5 + 9 - 1)
    assert (a.length, a.nident, a.gaps, a.gapopen, a.mismatch) == (10, 6, 4, 3, 0)
    assert a.cigar == "2M1D1M1I2M2D1M"
    assert a.btop == "2-W1E-2-K-L1"
    assert a.positive == a.nident       # no matrix: positives are the identities


def test_ordering_ties_later_subject_first():
    def mk(idx, e, score, ss=1):
        return Alignment.make("q", f"s{idx}", 10, 10, score, 1.0, e, 1, ss, "A", "A", subject_index=idx)
    hits = [mk(1, 5.0, 40), mk(2, 5.0, 40), mk(0, 1e-200, 10), mk(3, 1e-190, 50), mk(1, 0.1, 60, ss=3)]
    got = [(a.subject_index, a.score) for a in order_hits(hits)]
    # 1e-200 and 1e-190 tie as zero: higher score first; s1's HSPs follow its best one
    assert got == [(3, 50), (0, 10), (1, 60), (1, 40), (2, 40)]


def test_tsv_and_json_carry_the_alignment(golden_results):
    out = io.StringIO()
    write_tsv(out, golden_results[:1])
    lines = out.getvalue().splitlines()
    assert lines[0].split("\t")[:5] == ["qseqid", "sseqid", "score", "qlen", "slen"]
    assert lines[0].endswith("cigar")
    out = io.StringIO()
    write_json(out, golden_results[:1])
    d = json.loads(out.getvalue())[0]
    h = d["hits"][0]
    assert {"cigar", "qseq", "sseq", "evalue", "bitscore", "qstart", "send"} <= set(h)
    assert len(h["qseq"]) == h["length"]


def reference_tabular(results, columns, comments=False, program="BLASTP 2.12.0+", database=""):
    """write_tabular's plain rule: per query ``order_hits``, per record the ``FIELDS`` getters
    (qcovs: ``query_coverage`` of each subject's HSPs)."""
    from clalign.output import query_coverage
    from clalign.output.tabular import FIELDS

    out, n = [], 0
    for r in results:
        n += 1
        hits = order_hits(list(r.hits))
        groups = {}
        for a in hits:
            groups.setdefault((a.subject_index, a.subject_id), []).append(a)
        ctx = {"qcovs": {k: query_coverage(v, r.qlen) for k, v in groups.items()}}
        if comments:
            out.append(f"# {program}\n# Query: {getattr(r, 'title', None) or r.query_id}\n# Database: {database}\n")
            if hits:
                out.append("# Fields: " + ", ".join(FIELDS[c][0] for c in columns) + "\n")
            out.append(f"# {len(hits)} hits found\n")
        out += ["\t".join(FIELDS[c][1](a, ctx) for c in columns) + "\n" for a in hits]
    if comments:
        out.append(f"# BLAST processed {n} queries\n")
    return "".join(out)


def test_bulk_columns_equal_the_getters(golden_results):
    """write_tabular (every column formatted for all rows at once, BLAST order by arrays) gives
    the plain rule's text (``reference_tabular``), on the golden records and on edge values
    (E-values and bit scores at every format's boundary, empty alignments, numpy integers,
    scores <= 0, minus-strand HSPs, repeated columns), -outfmt 6 and 7."""
    import random

    import numpy as np

    from clalign.output.tabular import FIELDS, STD_FIELDS

    rnd = random.Random(3)
    extra = QueryHits("qx", 40, [], None)
    for e in (0.0, 1e-181, 1e-180, 8.99e-4, 9e-4, 0.0999, 0.1, 0.999, 1.0, 9.99, 10.0, 123.4):
        for b in (0.0, -0.0, 99.9, 99.95, 100.0, 99999.0, 99999.5, 123456.7, rnd.uniform(0, 500)):
            q = "AC-GT" * rnd.randrange(0, 4)
            ss, se = (3, 7) if rnd.random() < 0.5 else (7, 3)
            extra.hits.append(Alignment(f"q{e}", f"s{rnd.randrange(3)}", np.int64(40), 9, rnd.choice((5, 0, -2)),
                                        b, e, np.int64(rnd.randrange(1, 9)), rnd.randrange(1, 40), ss, se, q,
                                        q.replace("-", "A"), q.count("A"), q.count("C"), q.count("-"),
                                        q.count("-"), subject_index=rnd.randrange(3),
                                        sstrand="minus" if ss > se else "plus"))
    results = golden_results + [extra, QueryHits("empty", 5, [], "t")]
    for cols in (STD_FIELDS, tuple(FIELDS), ("evalue", "qseqid", "evalue", "qcovs", "btop")):
        for comments in (False, True):
            fh = io.StringIO()
            write_tabular(fh, results, cols, comments=comments, database="d")
            assert fh.getvalue() == reference_tabular(results, cols, comments, database="d")


def _random_hits(rnd, qi, max_hits, subjects, qstart_hi, qend_hi):
    """Up to ``max_hits - 1`` random records of query ``qi`` with ties of every ordering key:
    ``subjects`` subjects (some sharing an index under another id), both strands, few scores,
    E-values around BLAST's 1e-180 tie, query starts below ``qstart_hi``, ends below ``qend_hi``."""
    hits = []
    for _ in range(rnd.randrange(0, max_hits)):
        sidx = rnd.randrange(subjects)
        a, b = sorted(rnd.sample(range(1, 30), 2))
        ss, se = (a, b) if rnd.random() < 0.5 else (b, a)
        hits.append(Alignment(f"q{qi}", f"s{sidx}" + ("x" if rnd.random() < 0.1 else ""), 30, 50,
                              rnd.choice((10, 12)), 1.0, rnd.choice((0.0, 1e-200, 1e-185, 0.5, 2.0)),
                              rnd.randrange(1, qstart_hi), rnd.randrange(4, qend_hi), ss, se, "A", "A", 1, 1,
                              0, 0, subject_index=sidx))
    return hits


def test_order_rows_equal_order_hits():
    """The arrays' BLAST order (tabular.order_rows) = order_hits per query, with ties of every
    key (E-values below 1e-180, equal scores, equal coordinates, minus strands, one subject
    index under two names)."""
    import random

    import numpy as np

    from clalign.output.columns import RecordRows
    from clalign.output.tabular import order_rows

    rnd = random.Random(11)
    for _ in range(30):
        results = []
        for qi in range(rnd.randrange(1, 6)):
            hits = _random_hits(rnd, qi, 12, 4, 4, 8)
            results.append(QueryHits(f"q{qi}", 30, hits))
        rows = RecordRows(a for r in results for a in r.hits)
        qpos = np.repeat(np.arange(len(results)), [len(r.hits) for r in results])
        got = [rows.records[i] for i in order_rows(rows, qpos).tolist()]
        assert [id(a) for a in got] == [id(a) for r in results for a in order_hits(list(r.hits))]


def test_order_rows_in_order_check(monkeypatch):
    """Rows already in BLAST order are only checked (tabular._in_order): the check says so
    exactly when the full sort gives them back unmoved; rows in order_hits' order, and the same
    with two neighbours swapped, come out as order_hits orders them (ties of every key)."""
    import random

    import numpy as np

    from clalign.output import tabular
    from clalign.output.columns import RecordRows

    check = tabular._in_order
    rnd = random.Random(5)
    agreed = {True: 0, False: 0}
    for _ in range(300):
        results = []
        for qi in range(rnd.randrange(1, 5)):
            hits = order_hits(_random_hits(rnd, qi, 8, 3, 3, 6))
            if len(hits) > 1 and rnd.random() < 0.5:
                i = rnd.randrange(len(hits) - 1)
                hits[i], hits[i + 1] = hits[i + 1], hits[i]
            results.append(QueryHits(f"q{qi}", 30, hits))
        rows = RecordRows(a for r in results for a in r.hits)
        qpos = np.repeat(np.arange(len(results)), [len(r.hits) for r in results])
        seen = []
        monkeypatch.setattr(tabular, "_in_order", lambda *a: seen.append(check(*a)) or False)
        full = tabular.order_rows(rows, qpos)
        monkeypatch.setattr(tabular, "_in_order", check)
        if len(rows) > 1:
            assert seen == [np.array_equal(full, np.arange(len(rows)))]
            agreed[seen[0]] += 1
        got = [rows.records[i] for i in tabular.order_rows(rows, qpos).tolist()]
        assert [id(a) for a in got] == [id(a) for r in results for a in order_hits(list(r.hits))]
    assert min(agreed.values()) > 30
