"""``clalign blastp`` command line: golden output through the CLI, BLAST+ option names, and
one-line errors (exit 2) for bad values and what is not implemented yet."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from clalign.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_cli_writes_golden_rows(tmp_path):
    """Through the OpenCL device path (PoCL in CI) and two query threads."""
    out = tmp_path / "hits.tsv"
    res = CliRunner().invoke(main, ["blastp", "-query", str(ROOT / "data/queries.faa"),
                                    "-db", str(ROOT / "data/proteome.faa.gz"), "-out", str(out),
                                    "-outfmt", "6", "-comp_based_stats", "0", "-seg", "no",
                                    "-num_threads", "2", "--device", "0:0"])
    assert res.exit_code == 0, res.output
    assert out.read_text() == (ROOT / "tests/data/blastp/queries_proteome.tsv").read_text()


def test_cli_outfmt7_names_the_database_as_given(tmp_path, monkeypatch):
    """-outfmt 7's "# Database:" line holds the -db argument as typed (blastp 2.12 prints
    "sub/db" for -db sub/db and "./sub/../sub/db" for that spelling), not its base name."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "db.fa").write_text(">s1\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEK\n")
    (tmp_path / "q.fa").write_text(">q1\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ\n")
    monkeypatch.chdir(tmp_path)
    for spelling in ("sub/db.fa", "./sub/../sub/db.fa"):
        res = CliRunner().invoke(main, ["blastp", "-query", "q.fa", "-db", spelling, "-outfmt", "7"])
        assert res.exit_code == 0, res.output
        assert res.stdout.splitlines()[2] == f"# Database: {spelling}"


def test_cli_fast_task_runs_on_cpu_with_device(tmp_path):
    """-task blastp-fast with --device: the CPU path (noted on stderr), BLAST+'s rows."""
    out = tmp_path / "fast.tsv"
    golden = (ROOT / "tests/data/blastp/fast_synth.tsv").read_text().splitlines(True)
    recs = (ROOT / "tests/data/blastp/synth_queries.faa").read_text().split(">")[1:]
    ids = {line.split("\t")[0] for line in golden}
    names = [r.split()[0] for r in recs]
    recs = [r for r in recs if r.split()[0] in ids and names.count(r.split()[0]) == 1][:2]   # the routing is the point
    query = tmp_path / "q.faa"
    query.write_text("".join(">" + r for r in recs))
    keep = {r.split()[0] for r in recs}
    res = CliRunner().invoke(main, [
        "blastp", "-query", str(query),
        "-db", str(ROOT / "tests/data/blastp/synth_db.faa.gz"), "-out", str(out),
        "-task", "blastp-fast", "-seg", "no", "--device", "0:0"])
    assert res.exit_code == 0, res.output
    assert "runs on the CPU" in res.stderr
    want = "".join(line for line in golden if line.split("\t")[0] in keep)
    assert want and out.read_text() == want


@pytest.mark.parametrize("args,needle", [
    (["-comp_based_stats", "2"], "-comp_based_stats 2 is not implemented yet"),
    (["-seg", "12 2.2"], "-seg 12 2.2: expected 'yes', 'no' or 'window locut hicut'"),
    (["-soft_masking", "maybe"], "-soft_masking maybe: expected true or false"),
    (["-word_size", "1"], "Invalid value for '-word_size'"),
    (["-task", "blastp-fast", "-word_size", "5"], "requires word size 6 or 7"),
    (["-outfmt", "6 qseqid nosuch"], "unknown column 'nosuch'"),
    (["-matrix", "FOO"], "-matrix FOO: BLAST+ knows"),
    (["-gapopen", "3", "-gapextend", "3"], "not supported for BLOSUM62"),
])
def test_cli_errors_are_one_line(args, needle):
    res = CliRunner().invoke(main, ["blastp", "-query", str(ROOT / "data/queries.faa"),
                                    "-db", str(ROOT / "data/proteome.faa.gz")] + args)
    assert res.exit_code == 2
    assert needle in res.output and res.output.count("\n") == 1
