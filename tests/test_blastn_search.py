"""clalign blastn end to end: outfmt 6/7 identical, line for line and in order, to blastn 2.12
(golden tables in tests/data/blastn/search, provenance in its make_search_golden.py and the
README), from a FASTA database and from the makeblastdb database made of it."""
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from clalign.blast.blastn import run_blastn, tabular_lines
from clalign.blast.nucl_setup import BlastnOptions
from clalign.cli import main

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")
sys.path.insert(0, HERE)
from make_search_golden import GOLDEN  # noqa: E402

GENOME = os.path.join(HERE, "genome.fa")


def _golden(name):
    with open(os.path.join(HERE, name)) as fh:
        return fh.read().splitlines()


def _cli(args, cwd, db):
    """Run ``clalign blastn`` in-process in folder ``cwd``; returns click's Result."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["blastn", "-db", str(db)] + args)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("task,name", [("megablast", "megablast.tsv"), ("blastn", "blastn.tsv")])
def test_tasks_equal_blastn(task, name, threads):
    res = run_blastn(os.path.join(HERE, "reads.fa"), GENOME, BlastnOptions(task=task), num_threads=threads)
    assert tabular_lines(res) == _golden(name)


def test_blastn_short_equal_blastn():
    res = run_blastn(os.path.join(HERE, "short.fa"), GENOME, BlastnOptions(task="blastn-short"))
    assert tabular_lines(res) == _golden("blastn-short.tsv")


@pytest.mark.parametrize("name", ["mb_plus.tsv", "mb_minus_pid97.tsv", "mb_cols.tsv", "bn_1_2.tsv",
                                  "bn_minus.tsv", "bn_w7.tsv", "bn_searchsp.tsv"])
def test_options_equal_blastn(name, tmp_path):
    for f in ("reads.fa", "short.fa"):
        shutil.copy(os.path.join(HERE, f), tmp_path)
    r = _cli(shlex.split(GOLDEN[name]), tmp_path, GENOME)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == _golden(name)


def test_cli_num_threads(tmp_path):
    """``-num_threads`` reaches the search; the table is blastn's."""
    shutil.copy(os.path.join(HERE, "reads.fa"), tmp_path)
    r = _cli(shlex.split(GOLDEN["blastn.tsv"]) + ["-num_threads", "4"], tmp_path, GENOME)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == _golden("blastn.tsv")


@pytest.mark.skipif(shutil.which("makeblastdb") is None, reason="BLAST+ makeblastdb not installed")
def test_makeblastdb_database_gives_the_fasta_output(tmp_path):
    shutil.copy(GENOME, tmp_path)
    shutil.copy(os.path.join(HERE, "reads.fa"), tmp_path)
    subprocess.run(["makeblastdb", "-in", "genome.fa", "-dbtype", "nucl", "-out", "gdb"], cwd=tmp_path,
                   check=True, stdout=subprocess.DEVNULL)
    r = _cli(shlex.split(GOLDEN["mb_dbsize.tsv"]), tmp_path, "gdb")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == _golden("mb_dbsize.tsv")


@pytest.mark.parametrize("args,msg", [
    (["-task", "dc-megablast"], "dc-megablast is not implemented"),
    (["-dust", "20 64 1"], "-dust"),
    (["-reward", "3", "-penalty", "-2"], "not supported for substitution scores 3 and -2"),
    (["-task", "blastn", "-gapopen", "1", "-gapextend", "9"], "values 1 and 9 are not supported"),
    (["-outfmt", "5"], "-outfmt"),
])
def test_refused_options_one_line(args, msg, tmp_path):
    shutil.copy(os.path.join(HERE, "short.fa"), tmp_path)
    r = _cli(["-query", "short.fa"] + args, tmp_path, GENOME)
    assert r.exit_code == 2 and msg in r.output and r.output.count("\n") == 1


def test_bad_query_letter_names_file_and_line(tmp_path):
    (tmp_path / "q.fa").write_text(">a\nACGT\n>b\nACGJT\n")
    r = _cli(["-query", "q.fa"], tmp_path, GENOME)
    assert r.exit_code != 0 and "q.fa:4" in r.output and r.output.count("\n") == 1


def test_invalid_query_warns_and_others_still_search(tmp_path):
    """An all-N query gets BLAST+'s warning and no hits; the other queries are searched."""
    reads = open(os.path.join(HERE, "reads.fa")).read().split(">")[1:3]
    q = tmp_path / "q.fa"
    q.write_text(">allN\n" + "N" * 40 + "\n>" + ">".join(reads))
    warned = []
    res = run_blastn(str(q), GENOME, BlastnOptions(), warn=lambda qid, m: warned.append(qid))
    assert warned == ["allN"] and res[0].hits == []
    ids = {r.split()[0] for r in reads}
    assert [l for l in tabular_lines(res[1:])] == [l for l in _golden("megablast.tsv")
                                                  if l.split("\t")[0] in ids]


def test_clalign_makedb_database_gives_the_fasta_output(tmp_path):
    r = CliRunner().invoke(main, ["makedb", GENOME, str(tmp_path / "cdb"), "-dbtype", "nucl", "-q"])
    assert r.exit_code == 0, r.output
    res = run_blastn(os.path.join(HERE, "reads.fa"), str(tmp_path / "cdb"), BlastnOptions())
    assert tabular_lines(res) == _golden("megablast.tsv")


@pytest.mark.parametrize("task", ["megablast", "blastn"])
def test_subject_longer_than_a_blast_chunk(task, tmp_path):
    """A 5.3 Mb subject is searched in BLAST+'s two overlapping chunks (on two threads: the pieces
    run concurrently, their lists merged in order); reads across the seam."""
    from make_search_golden import long_subject

    long_subject(str(tmp_path))
    res = run_blastn(str(tmp_path / "long_reads.fa"), str(tmp_path / "long.fa"), BlastnOptions(task=task),
                     num_threads=2)
    assert tabular_lines(res) == _golden(f"long_{task}.tsv")


@pytest.mark.parametrize("dbsize,golden", [("2463666", "megablast_dbsize.tsv"),
                                           ("100000", "megablast_dbsize_100000.tsv")])
def test_gap_tie_equals_blastn(dbsize, golden, tmp_path):
    """An equal-score tie whose gap placement follows megablast's ungapped X-drop, which is the
    context's ungapped cutoff (13 at -dbsize 2463666, 12 at 100000): the ungapped extension, the
    greedy start and so the traceback's start differ (tests/data/blastn/tie/README.md)."""
    tie = os.path.join(os.path.dirname(HERE), "tie")
    r = _cli(["-query", os.path.join(tie, "read.fa"), "-outfmt", "6", "-dbsize", dbsize], tmp_path,
             os.path.join(tie, "subject.fa"))
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == _golden(os.path.join(tie, golden))
