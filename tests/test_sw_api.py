"""sw_scores / sw_search API and the `clalign sw` command: formats, ties, errors, no partial output."""
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from clalign.data import Database, makedb
from clalign.sw import sw_scores, sw_search, top_hits
from clalign.cli import main


SUBJECTS = ["MKTAYIAKQRQISFVKSHFSRQ", "ACDEFGHIKL", "MKTAYIAKQRQISFVKSHFSRQ", "WWWW", "MKTAYIAKQR", "PPPP"]


@pytest.fixture
def dbfa(write_file):
    return write_file("db.fa", "".join(f">s{i} d{i}\n{s}\n" for i, s in enumerate(SUBJECTS)))


def test_top_hits_ties_in_database_order():
    sc = np.array([5, 9, 5, 9, 1, 5], dtype=np.int32)
    assert list(top_hits(sc, 4)) == [1, 3, 0, 2]
    assert list(top_hits(sc, 100)) == [1, 3, 0, 2, 5, 4]


def test_sw_scores_paths_and_database(dbfa, tmp_path):
    a = sw_scores("MKTAYIAKQR", dbfa)
    db = Database.from_fasta(dbfa)
    assert np.array_equal(a, sw_scores("MKTAYIAKQR", db))
    prepared = makedb(dbfa, str(tmp_path / "prep"), quiet=True)
    assert np.array_equal(a, sw_scores("MKTAYIAKQR", str(tmp_path / "prep")))
    assert a.dtype == np.int32 and len(a) == len(SUBJECTS) and len(prepared) == len(SUBJECTS)
    assert a[0] == a[2] and a[0] > a[5]


def test_sw_search_order(dbfa):
    res = sw_search(["MKTAYIAKQRQISFVKSHFSRQ", ("named", "WWWW")], dbfa, top=3)
    assert [r.query_id for r in res] == ["query_1", "named"]
    h = res[0].hits
    assert [x.subject_index for x in h] == [2, 0, 4]           # BLAST+ order: tie 0/2, later subject first
    assert h[0].score == h[1].score and h[0].subject_id == "s2" and h[0].qlen == 22 and h[0].slen == 22
    assert res[1].hits[0].subject_id == "s3"


def test_cli_tsv_json(dbfa, write_file, tmp_path):
    q = write_file("q.fa", ">qa first\nMKTAYIAKQRQISFVKSHFSRQ\n>qb\nWWWW\n")
    out = tmp_path / "hits.tsv"
    r = CliRunner().invoke(main, ["sw", "-query", q, "-db", dbfa, "-max_target_seqs", "2", "-out", str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith("qseqid\tsseqid\tscore\tqlen\tslen\tevalue\tbitscore")
    assert len(lines) == 1 + 3          # qb: only s3 has E-value <= 10
    assert lines[1].split("\t")[:2] == ["qa", "s2"] and lines[2].split("\t")[:2] == ["qa", "s0"]
    assert lines[3].split("\t")[1] == "s3" and lines[3].split("\t")[3:5] == ["4", "4"]
    jo = tmp_path / "hits.json"
    r = CliRunner().invoke(main, ["sw", "-query", q, "-db", dbfa, "-outfmt", "json", "-out", str(jo),
                                     "-matrix", "BLOSUM50", "-gapopen", "13", "-gapextend", "2"])
    assert r.exit_code == 0, r.output
    data = json.loads(jo.read_text())
    assert [d["query_id"] for d in data] == ["qa", "qb"] and len(data[0]["hits"]) >= 3
    assert data[0]["hits"][0]["subject_id"] == "s2" and data[0]["hits"][0]["cigar"] == "22M"


def test_cli_bad_query_one_line_no_output(dbfa, write_file, tmp_path):
    q = write_file("bad.fa", ">ok\nMKT\n>bad\nAC1D\n")
    out = tmp_path / "never.tsv"
    r = CliRunner().invoke(main, ["sw", "-query", q, "-db", dbfa, "-out", str(out)])
    assert r.exit_code != 0
    msg = [x for x in r.output.splitlines() if x.startswith("clalign: error:")]
    assert len(msg) == 1 and "bad.fa:4" in msg[0]
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".clalign-sw-")]
    r = CliRunner().invoke(main, ["sw", "-query", str(tmp_path / "nope.fa"), "-db", dbfa])
    assert r.exit_code != 0 and "nope.fa" in r.output


# --- the "sequence or path" rule (clalign.data.inputs), issue 9 -----------------------------
@pytest.mark.parametrize("bad", [None, 3, 2.5, True, object()])
def test_api_non_sequence_is_type_error_naming_the_argument(dbfa, bad):
    with pytest.raises(TypeError, match="query"):
        sw_scores(bad, dbfa)
    with pytest.raises(TypeError, match="queries"):
        sw_search(bad, dbfa)


@pytest.mark.parametrize("name", ["myqueries.fa", "queries.fasta.gz", "sub/q", "~/q"])
def test_api_path_looking_str_must_exist(dbfa, tmp_path, monkeypatch, name):
    """A str that looks like a path is a path: a missing file is an InputError naming it, never
    a search for its letters."""
    from clalign.errors import InputError

    monkeypatch.chdir(tmp_path)
    for f in (sw_scores, sw_search):
        with pytest.raises(InputError, match="no such file") as ei:
            f(name, dbfa)
        assert name in str(ei.value)


def test_api_existing_file_name_and_pathlike(dbfa, write_file, tmp_path, monkeypatch):
    import pathlib

    from clalign.errors import InputError

    q = write_file("myqueries", ">a\nMKTAYIAKQR\n")          # no suffix, but it exists: a path
    monkeypatch.chdir(tmp_path)
    res = sw_search("myqueries", dbfa)
    assert [r.query_id for r in res] == ["a"]
    assert [r.query_id for r in sw_search(pathlib.Path(q), dbfa)] == ["a"]
    with pytest.raises(InputError, match="one sequence"):
        sw_scores("myqueries", dbfa)
    assert np.array_equal(sw_scores("MKTAYIAKQR", dbfa), sw_scores(b"MKTAYIAKQR", dbfa))


def test_api_code_arrays_checked(dbfa):
    from clalign.errors import InputError

    with pytest.raises(InputError, match="outside the alphabet"):
        sw_scores(np.array([1, 2, 200], dtype=np.uint8), dbfa)
    with pytest.raises(InputError, match="1-D integer"):
        sw_scores(np.zeros(3, dtype=np.float32), dbfa)
    with pytest.raises(TypeError, match="query"):
        sw_scores(np.zeros((2, 2), dtype=np.uint8), dbfa)


def test_database_arguments_are_paths_only(tmp_path):
    """An int is never a file descriptor (Database.from_fasta(2) used to close stderr)."""
    import sys

    from clalign import msv_scores

    for bad in (2, None, 1.0):
        with pytest.raises(TypeError, match="path"):
            Database.from_fasta(bad)
        with pytest.raises(TypeError, match="hmm"):
            msv_scores(bad, Database.from_sequences(["MKT"]))
    sys.stderr.write("")            # still open
    os.fstat(2)


def test_api_arguments_fuzzed(dbfa, tmp_path, monkeypatch):
    """Any object as a query: scores, or a TypeError / clalign error naming the problem, never
    another exception (hypothesis, bounded)."""
    hyp = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    from clalign.errors import ClalignError

    monkeypatch.chdir(tmp_path)
    values = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                       st.binary(max_size=12), st.lists(st.text(max_size=6), max_size=3),
                       st.lists(st.integers(-5, 300), max_size=6).map(lambda v: np.array(v, dtype=np.int64)))

    @hyp.settings(max_examples=int(os.environ.get("CLALIGN_FUZZ_EXAMPLES", "60")), deadline=None,
                  derandomize="CLALIGN_FUZZ_EXAMPLES" not in os.environ, database=None)
    @hyp.given(q=values)
    def check(q):
        for f in (sw_scores, sw_search):
            try:
                f(q, dbfa)
            except (TypeError, ClalignError):
                pass

    check()


def test_engine_cache_keys_matrices_by_content():
    """Two matrix objects of one name but different scores get their own engines (the cache once
    keyed them by id(), which a later object reuses once the first is collected: seen as wrong
    scores in a parametrised test), and equal matrices share one."""
    import gc

    from clalign.data.matrices import Matrix
    from clalign.sw.engine import get_engine
    from clalign.sw.reference import sw_score

    db = Database.from_sequences([np.array([1, 2, 3, 4, 5, 6], dtype=np.uint8)])
    q = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint8)
    scores = []
    for diag in (5, 50):
        m = np.full((28, 28), -1, dtype=np.int32)
        m[np.arange(28), np.arange(28)] = diag
        mat = Matrix("SAME", m, -1, diag)
        assert get_engine(mat) is get_engine(Matrix("SAME", m.copy(), -1, diag))
        scores.append(int(sw_scores(q, db, matrix=mat)[0]))
        del mat
        gc.collect()
    assert scores == [sw_score(q, q, np.where(np.eye(28, dtype=bool), d, -1), 11, 1) for d in (5, 50)]
