"""``clalign blastp`` command line: golden output through the CLI, BLAST+ option names, and
one-line errors (exit 2) for what is not implemented yet."""
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


@pytest.mark.parametrize("args,needle", [
    (["-comp_based_stats", "2"], "-comp_based_stats 2 is not implemented yet"),
    (["-seg", "yes"], "-seg yes is not implemented yet"),
    (["-task", "blastp-fast"], "-task blastp-fast is not implemented yet"),
    (["-outfmt", "6 qseqid nosuch"], "unknown column 'nosuch'"),
    (["-matrix", "FOO"], "-matrix FOO: BLAST+ knows"),
    (["-gapopen", "3", "-gapextend", "3"], "not supported for BLOSUM62"),
])
def test_cli_errors_are_one_line(args, needle):
    res = CliRunner().invoke(main, ["blastp", "-query", str(ROOT / "data/queries.faa"),
                                    "-db", str(ROOT / "data/proteome.faa.gz")] + args)
    assert res.exit_code == 2
    assert needle in res.output and res.output.count("\n") == 1
