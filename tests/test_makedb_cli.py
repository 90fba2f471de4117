import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from clalign.data import Database
from clalign.data.cli import makedb

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FA = ">a one\nMKVLA\n>b\nACDEFGHIK\n"
BAD = [  # (content, line) -- missing header, empty sequence, illegal character
    ("MKV\n>a\nAC\n", 1),
    (">a\nAC\n>b\n>c\nAC\n", 3),
    (">a\nAC\nA#C\n", 3),
]


def _run(args):
    return CliRunner().invoke(makedb, args)


def _left(tmp_path, keep):
    return sorted(p.name for p in tmp_path.iterdir() if p.name not in keep)


def test_cli_ok_and_summary(write_file, tmp_path):
    fa = write_file("in.fa.gz", FA, gzip=True)
    r = _run([fa, str(tmp_path / "db"), "-dbtype", "prot"])
    assert r.exit_code == 0, r.output
    assert "makedb: 2 sequences, 14 residues" in r.stderr and r.stderr.count("\n") == 1
    assert len(Database.open(tmp_path / "db")) == 2
    r = _run([fa, str(tmp_path / "db2"), "--dbtype", "nucl"])
    assert r.exit_code == 2 and "illegal character 'L' for the dna alphabet" in r.stderr


@pytest.mark.parametrize("case", range(len(BAD)))
@pytest.mark.parametrize("variant", ["lf", "crlf", "gz"])
def test_cli_bad_fasta_exit_and_no_output(write_file, tmp_path, case, variant):
    text, line = BAD[case]
    if variant != "lf":
        text = text.replace("\n", "\r\n")
    fa = write_file("bad.fa", text, gzip=variant == "gz")
    r = _run([fa, str(tmp_path / "db")])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"clalign: error: {fa}:{line}: "), r.stderr
    assert _left(tmp_path, {"bad.fa"}) == []


def test_cli_refuses_overwrite_then_force(write_file, tmp_path):
    fa = write_file("in.fa", FA)
    out = str(tmp_path / "db")
    assert _run([fa, out, "-q"]).exit_code == 0
    r = _run([fa, out])
    assert r.exit_code == 2 and "already exists; use --force" in r.stderr
    r = _run([fa, out, "--force", "-q"])
    assert r.exit_code == 0 and r.stderr == ""
    assert _left(tmp_path, {"in.fa", "db"}) == []


def test_cli_missing_input(tmp_path):
    r = _run([str(tmp_path / "nope.fa"), str(tmp_path / "db")])
    assert r.exit_code == 2 and "nope.fa: no such file" in r.stderr
    assert _left(tmp_path, set()) == []


def _subprocess(args):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=REPO)


def test_subprocess_bad_fasta_no_traceback(write_file, tmp_path):
    fa = write_file("bad.fa", ">a\nAC\n>b\n\n", gzip=True)
    r = _subprocess(["-c", "from clalign.data.cli import makedb; makedb()", fa, str(tmp_path / "db")])
    assert r.returncode == 2 and r.stderr == f"clalign: error: {fa}:3: empty sequence (header line with no residues)\n"
    assert _left(tmp_path, {"bad.fa"}) == []


def test_python_m_clalign_makedb(write_file, tmp_path):
    fa = write_file("in.fa", FA)
    r = _subprocess(["-m", "clalign", "makedb", fa, str(tmp_path / "db"), "-dbtype", "prot"])
    assert r.returncode == 0 and "2 sequences" in r.stderr
    r = _subprocess(["-m", "clalign", "makedb", fa, str(tmp_path / "db")])
    assert r.returncode == 2 and r.stderr.startswith("clalign: error: ") and "Traceback" not in r.stderr


def test_cli_empty_input(write_file, tmp_path):
    fa = write_file("empty.fa", "\n\n")
    r = _run([fa, str(tmp_path / "db")])
    assert r.exit_code == 2 and "no FASTA records" in r.stderr
    assert _left(tmp_path, {"empty.fa"}) == []


def test_cli_keeps_trailing_stop_counts(write_file, tmp_path):
    fa = write_file("stops.fa.gz", ">a\nMKV*\n>b\nMK\n>c\nMKV\n*\r\n*\n", gzip=True)
    r = _run([fa, str(tmp_path / "db"), "-dbtype", "prot", "-q"])
    assert r.exit_code == 0, r.output
    db = Database.open(tmp_path / "db")
    assert db.stops.tolist() == [1, 0, 2] and db.lengths.tolist() == [3, 2, 3]
