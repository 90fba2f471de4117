"""Outputs are whole or absent (issue 9): clalign.outfile, and `clalign sw` / `clalign hmmsearch`
against existing files, same-path outputs, unwritable places, a full disk and signals.

Each failure case asserts the exit status, one `clalign: error:` line naming the path, no
traceback, no output or temporary file left, and every pre-existing file unchanged."""
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from clalign.cli import main
from clalign.outfile import OutputError, atomic_output, clean_leftovers, plan_outputs

pyhmmer = pytest.importorskip("pyhmmer")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYDATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
HMM = os.path.join(PYDATA, "hmms", "txt", "PF02826.hmm")
FAA = os.path.join(PYDATA, "seqs", "938293.PRJEB85.HG003687.faa")


def _hit():
    """A protein of pyhmmer's test proteome that PF02826 hits (E 5e-57)."""
    text = open(FAA).read()
    rec = text[text.index(">938293.PRJEB85.HG003685_328"):]
    rec = rec[:rec.index(">", 1)]
    return "".join(rec.splitlines()[1:]).rstrip("*")


HIT = _hit()


def _snapshot(folder):
    """{name: bytes} of every file in folder (hidden ones too)."""
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, n))}


def _one_error(r, *needles, status=2):
    """Exit status, exactly one 'clalign: error:' line naming every needle, no traceback."""
    assert r.exit_code == status, (r.exit_code, r.output)
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("clalign: error:")]
    assert len(errs) == 1, r.stderr
    assert "Traceback" not in r.output and "Traceback" not in r.stderr
    for n in needles:
        assert str(n) in errs[0], (n, errs[0])
    return errs[0]


@pytest.fixture
def swfiles(tmp_path):
    q = tmp_path / "q.fa"
    q.write_text(">q1\nMKTAYIAKQRQISFVKSHFSRQ\n")
    db = tmp_path / "db.fa"
    db.write_text(">s1\nMKTAYIAKQRQISFVKSHFSRQ\n>s2\nWWWWPPPP\n")
    return str(q), str(db)


@pytest.fixture
def hmmfiles(tmp_path):
    db = tmp_path / "t.fa"
    db.write_text(f">hit one\n{HIT}\n>decoy\nMKTAYIAKQRQISFVKSHFSRQ\n")
    return HMM, str(db)


def _sw(args):
    return CliRunner().invoke(main, ["sw", *args])


# --- clalign sw -out ---------------------------------------------------------------------------
def test_sw_existing_output_needs_force_and_mode_follows_umask(swfiles, tmp_path):
    q, db = swfiles
    out = tmp_path / "hits.tsv"
    out.write_text("precious\n")
    before = _snapshot(tmp_path)
    r = _sw(["-query", q, "-db", db, "-out", str(out)])
    msg = _one_error(r, str(out), "--force")
    assert "exists" in msg and _snapshot(tmp_path) == before
    old = os.umask(0o027)
    try:
        r = _sw(["-query", q, "-db", db, "-out", str(out), "--force"])
        out2 = tmp_path / "new.tsv"
        r2 = _sw(["-query", q, "-db", db, "-out", str(out2)])
    finally:
        os.umask(old)
    assert r.exit_code == 0 and r2.exit_code == 0, r.output + r2.output
    assert out.read_text().startswith("qseqid") and out2.read_text() == out.read_text()
    assert oct(os.stat(out2).st_mode & 0o777) == oct(0o640)          # 0666 minus the umask, not 0600
    assert not [n for n in os.listdir(tmp_path) if ".clalign-" in n]
    assert "--force" in CliRunner().invoke(main, ["sw", "--help"]).output


@pytest.mark.parametrize("which", ["query", "db"])
def test_sw_output_naming_an_input_is_refused_even_with_force(swfiles, tmp_path, which):
    q, db = swfiles
    before = _snapshot(tmp_path)
    target = q if which == "query" else db
    r = _sw(["-query", q, "-db", db, "-out", target, "--force"])
    _one_error(r, target, "input")
    assert _snapshot(tmp_path) == before


def _bad_places(tmp_path):
    (tmp_path / "afile").write_text("x")
    return {
        "missing folder": (str(tmp_path / "nope" / "o.tsv"), "does not exist"),
        "parent is a file": (str(tmp_path / "afile" / "o.tsv"), "not a folder"),
        "name too long": (str(tmp_path / ("n" * 300)), "too long"),
        "full disk": ("/dev/full", "no space left"),
    }


@pytest.mark.parametrize("case", ["missing folder", "parent is a file", "name too long", "full disk"])
def test_sw_unwritable_outputs(swfiles, tmp_path, case):
    q, db = swfiles
    out, why = _bad_places(tmp_path)[case]
    before = _snapshot(tmp_path)
    r = _sw(["-query", q, "-db", db, "-out", out])
    msg = _one_error(r, out)
    assert why in msg
    assert _snapshot(tmp_path) == before


def test_sw_output_that_is_a_folder(swfiles, tmp_path):
    q, db = swfiles
    (tmp_path / "d").mkdir()
    r = _sw(["-query", q, "-db", db, "-out", str(tmp_path / "d")])
    _one_error(r, str(tmp_path / "d"))
    assert os.listdir(tmp_path / "d") == []


def test_sw_read_only_folder(swfiles, tmp_path, monkeypatch):
    """A folder we may not write in: real permissions when not root, else the EACCES simulated
    (root ignores permission bits)."""
    q, db = swfiles
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:
        import clalign.outfile as of

        monkeypatch.setattr(of.os, "access", lambda p, m: not str(p).startswith(str(ro)))
    ro.chmod(0o555)
    try:
        r = _sw(["-query", q, "-db", db, "-out", str(ro / "o.tsv")])
        msg = _one_error(r, str(ro / "o.tsv"))
        assert "permission denied" in msg.lower()
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("opt,val", [("-gapopen", "-1"), ("-gapextend", "-3"), ("-gapopen", str(1 << 20)),
                                     ("-gapextend", "nan"), ("-max_target_seqs", "0"), ("-max_target_seqs", "-5"),
                                     ("-max_target_seqs", "inf"), ("-max_target_seqs", str(2 ** 31)),
                                     ("-outfmt", "xml")])
def test_sw_numeric_options_out_of_range(swfiles, tmp_path, opt, val):
    q, db = swfiles
    out = tmp_path / "o.tsv"
    r = _sw(["-query", q, "-db", db, "-out", str(out), opt, val])
    assert r.exit_code == 2 and not out.exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clalign: error:") and opt in lines[0], r.stderr


def test_sw_stdout_dash(swfiles):
    q, db = swfiles
    r = _sw(["-query", q, "-db", db, "-out", "-"])
    assert r.exit_code == 0 and r.stdout.startswith("qseqid")


# --- clalign hmmsearch outputs --------------------------------------------------------------
def _hs(args):
    return CliRunner().invoke(main, ["hmmsearch", "--cpu", "1", *args])


@pytest.mark.parametrize("a,b", [("-o", "--tblout"), ("--tblout", "--domtblout"), ("-o", "--domtblout")])
def test_hmmsearch_two_outputs_one_path(hmmfiles, tmp_path, a, b):
    hmm, db = hmmfiles
    before = _snapshot(tmp_path)
    same = str(tmp_path / "same.txt")
    r = _hs([a, same, b, same, hmm, db])
    _one_error(r, a, b, same)
    assert _snapshot(tmp_path) == before


def test_hmmsearch_same_file_by_another_name_and_stdout_twice(hmmfiles, tmp_path):
    hmm, db = hmmfiles
    (tmp_path / "x.tbl").write_text("old\n")
    os.symlink(tmp_path / "x.tbl", tmp_path / "link.tbl")
    before = _snapshot(tmp_path)
    r = _hs(["--force", "--tblout", str(tmp_path / "x.tbl"), "--domtblout", str(tmp_path / "link.tbl"), hmm, db])
    _one_error(r, "--tblout", "--domtblout")
    r = _hs(["--tblout", "-", hmm, db])                  # -o is standard output too
    _one_error(r, "standard output")
    assert _snapshot(tmp_path) == before


def test_hmmsearch_output_naming_an_input(hmmfiles, tmp_path):
    hmm, db = hmmfiles
    r = _hs(["--force", "--tblout", db, hmm, db])
    _one_error(r, db, "input")
    assert open(db).read().startswith(">hit one")


@pytest.mark.parametrize("case", ["missing folder", "parent is a file", "name too long", "full disk"])
def test_hmmsearch_unwritable_output_leaves_nothing(hmmfiles, tmp_path, case):
    """One bad output of three: none of the others appears either."""
    hmm, db = hmmfiles
    bad, why = _bad_places(tmp_path)[case]
    before = _snapshot(tmp_path)
    r = _hs(["-o", str(tmp_path / "main.out"), "--tblout", str(tmp_path / "t.tbl"), "--domtblout", bad, hmm, db])
    msg = _one_error(r, bad)
    assert why in msg
    assert _snapshot(tmp_path) == before


def test_hmmsearch_existing_outputs_need_force(hmmfiles, tmp_path):
    hmm, db = hmmfiles
    tbl = tmp_path / "t.tbl"
    tbl.write_text("keep me\n")
    before = _snapshot(tmp_path)
    r = _hs(["--tblout", str(tbl), "-o", str(tmp_path / "o.txt"), hmm, db])
    _one_error(r, str(tbl), "--force")
    assert _snapshot(tmp_path) == before
    r = _hs(["--force", "--tblout", str(tbl), "-o", str(tmp_path / "o.txt"), hmm, db])
    assert r.exit_code == 0, r.output
    assert tbl.read_text().splitlines()[3].split()[0] == "hit" and (tmp_path / "o.txt").exists()
    assert "--force" in CliRunner().invoke(main, ["hmmsearch", "--help"]).output


def test_hmmsearch_bad_input_found_late_leaves_no_output(tmp_path):
    """An error after the outputs were opened (an unnamed target, refused as HMMER does):
    exit 2, one line, no output and no temporary file."""
    db = tmp_path / "t.fa"
    db.write_text(f">\n{HIT}\n")
    r = _hs(["--tblout", str(tmp_path / "t.tbl"), "-o", str(tmp_path / "o.txt"), HMM, str(db)])
    _one_error(r, str(db), "name")   # ours: "has no name"; HMMER's reader: "no FASTA name found"
    assert sorted(os.listdir(tmp_path)) == ["t.fa"]


# --- the module itself ------------------------------------------------------------------------
def test_atomic_output_all_or_nothing(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with pytest.raises(RuntimeError):
        with atomic_output([a, b]) as (fa, fb):
            fa.write("x")
            fb.write("y")
            raise RuntimeError("late failure")
    assert os.listdir(tmp_path) == []
    with atomic_output([a, b]) as (fa, fb):
        fa.write("x")
        fb.write("y")
    assert open(a).read() == "x" and open(b).read() == "y"
    with pytest.raises(OutputError, match="exists"):
        with atomic_output(a) as fh:
            fh.write("z")
    assert open(a).read() == "x" and sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_leftovers_of_dead_runs_are_cleaned(tmp_path):
    out = tmp_path / "o.tsv"
    dead = tmp_path / ".o.tsv.clalign-999999999-0123abcd.tmp"     # no such process
    live = tmp_path / f".o.tsv.clalign-{os.getppid()}-0123abcd.tmp"
    other = tmp_path / ".o.tsv.clalign-999999999-nothex.tmp"      # not our pattern
    for p in (dead, live, other):
        p.write_text("partial")
    assert clean_leftovers(str(out)) == [str(dead)]
    assert not dead.exists() and live.exists() and other.exists()


def test_plan_outputs_special_files_and_stdout(tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    plan_outputs({"-o": fifo, "--tblout": "-"})                    # a FIFO/device: written in place, no --force
    with pytest.raises(OutputError, match="standard output"):
        plan_outputs({"-o": "-", "--tblout": "-"})


# --- signals (subprocess: a real signal to a real process) -------------------------------------
_SLOW = """
import os, sys, time
import clalign.hmm.search as S
orig = S._Search._pyhmmer_part
def slow(self, *a):
    open(os.environ["CLALIGN_TEST_STARTED"], "w").close()
    time.sleep(120)
    return orig(self, *a)
S._Search._pyhmmer_part = slow
from clalign.cli import main
sys.argv = ["clalign"] + sys.argv[1:]
main()
"""


def _start_slow_hmmsearch(tmp_path, hmmfiles):
    hmm, db = hmmfiles
    outs = [str(tmp_path / n) for n in ("o.txt", "t.tbl", "d.tbl")]
    started = str(tmp_path) + ".started"     # beside tmp_path, whose contents the tests compare
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
               CLALIGN_TEST_STARTED=started)
    p = subprocess.Popen([sys.executable, "-c", _SLOW, "hmmsearch", "--cpu", "1", "--filter-engine", "opencl", "-o", outs[0], "--tblout", outs[1],
                          "--domtblout", outs[2], hmm, db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, text=True)
    t0 = time.time()
    # outputs are opened once the search starts; the signal goes once the filter (and its
    # kernel build: a cold PoCL build on a loaded CI machine can hold the main thread in C for
    # a minute, deferring the handler) is done and the workers are busy
    while time.time() - t0 < 300:
        if os.path.exists(started) and len([n for n in os.listdir(tmp_path) if ".clalign-" in n]) == 3:
            return p, outs
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    raise AssertionError("hmmsearch did not start: " + p.communicate()[1])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_hmmsearch_signal_clean_exit(tmp_path, hmmfiles, sig):
    """While worker threads are busy: exit 128+N within seconds, one line, nothing left."""
    inputs = _snapshot(tmp_path)
    p, outs = _start_slow_hmmsearch(tmp_path, hmmfiles)
    t0 = time.time()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert time.time() - t0 < 30
    assert p.returncode == 128 + sig, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1].startswith(f"clalign: interrupted by {signal.Signals(sig).name}") and "Traceback" not in err
    assert _snapshot(tmp_path) == inputs                 # no output, no temporary file


def test_sigkill_leftovers_cleaned_by_next_run(tmp_path, hmmfiles):
    p, outs = _start_slow_hmmsearch(tmp_path, hmmfiles)
    p.kill()
    p.communicate(timeout=60)
    left = [n for n in os.listdir(tmp_path) if ".clalign-" in n]
    assert len(left) == 3                                # what SIGKILL leaves behind
    hmm, db = hmmfiles
    r = _hs(["-o", outs[0], "--tblout", outs[1], "--domtblout", outs[2], hmm, db])
    assert r.exit_code == 0, r.output
    assert not [n for n in os.listdir(tmp_path) if ".clalign-" in n]
    assert all(os.path.getsize(o) > 0 for o in outs)


def test_output_inside_a_prepared_database_is_refused(swfiles, tmp_path):
    from clalign.data import makedb

    q, db = swfiles
    makedb(db, str(tmp_path / "prep"), quiet=True)
    before = _snapshot(tmp_path / "prep")
    r = _sw(["-query", q, "-db", str(tmp_path / "prep"), "--force", "-out", str(tmp_path / "prep" / "residues.npy")])
    _one_error(r, "inside an input folder")
    assert _snapshot(tmp_path / "prep") == before


_SLOW_SW = """
import os, sys, time
import clalign.sw.engine as E
def slow(self, *a, **k):
    open(os.environ["MARK"], "w").close()
    time.sleep(120)
E.SWEngine.search = slow
from clalign.cli import main
sys.argv = ["clalign"] + sys.argv[1:]
main()
"""


def test_sw_sigterm_during_search(swfiles, tmp_path):
    q, db = swfiles
    mark = str(tmp_path / "started")
    env = dict(os.environ, MARK=mark, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = str(tmp_path / "o.tsv")
    p = subprocess.Popen([sys.executable, "-c", _SLOW_SW, "sw", "-query", q, "-db", db, "-out", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    t0 = time.time()
    while not os.path.exists(mark) and p.poll() is None and time.time() - t0 < 120:
        time.sleep(0.05)
    os.unlink(mark)
    before = _snapshot(tmp_path)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("clalign: interrupted by SIGTERM")
    assert _snapshot(tmp_path) == before and not os.path.exists(out)


def test_hmmsearch_read_only_folder(hmmfiles, tmp_path, monkeypatch):
    hmm, db = hmmfiles
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:                # root ignores permission bits: simulate the refusal
        import clalign.outfile as of

        monkeypatch.setattr(of.os, "access", lambda p, m: not str(p).startswith(str(ro)))
    ro.chmod(0o555)
    try:
        before = _snapshot(tmp_path)
        r = _hs(["-o", str(tmp_path / "main.out"), "--tblout", str(ro / "t.tbl"), hmm, db])
        assert "permission denied" in _one_error(r, str(ro / "t.tbl")).lower()
        assert _snapshot(tmp_path) == before and os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


def test_signal_during_renames_waits_for_the_last(tmp_path, monkeypatch):
    """A signal arriving between two renames is held until every output is in place, then
    delivered again: never some outputs of a command renamed and others not."""
    import clalign.cli as cli
    import clalign.outfile as of

    sent = []
    monkeypatch.setattr(of.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    orig = of._Atomic.commit
    calls = []

    def commit(self):
        orig(self)
        if not calls:
            calls.append(self.path)
            cli._on_signal(signal.SIGTERM, None)        # must not raise here
    monkeypatch.setattr(of._Atomic, "commit", commit)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with atomic_output([a, b]) as (fa, fb):
        fa.write("x")
        fb.write("y")
    assert open(a).read() == "x" and open(b).read() == "y"
    assert sent == [(os.getpid(), signal.SIGTERM)] and not of._pending and not of._committing
