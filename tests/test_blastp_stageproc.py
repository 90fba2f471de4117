"""BLASTP's stage process (``runtime.stageproc``, ``blast.stage_remote``): the same rows as the
threads (golden files), numba kept out of the main process, fallback when the child cannot start
or dies, no process or shared-memory segment left behind, the child's errors raised here."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest

from clalign.blast import stage_remote
from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.options import blastp_options
from clalign.runtime.stageproc import RemoteTraceback, StageError, StageProcess

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "blastp"
CASES = {
    "synth": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
              dict(max_target_seqs=500)),
    "synth_top5_hsp1": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
                        dict(max_target_seqs=5, max_hsps=1)),
    "odd_proteome": ("tests/data/blastp/odd_queries.faa", "data/proteome.faa.gz",
                     dict(max_target_seqs=500)),
    "blastdb_prot_e1000": ("tests/data/blastdb/prot.fa", "tests/data/blastdb/db/prot_v5",
                           dict(max_target_seqs=500, evalue=1000)),
}


def _device():
    return cl.get_platforms()[0].get_devices()[0]


def _shm():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


@pytest.fixture
def started(monkeypatch):
    """The Remotes run_blastp starts (to check they are closed); ``argv`` replaces the child."""
    made, argv = [], []
    real = stage_remote.start

    def start(threads, _argv=None):
        r = real(threads, argv[0] if argv else None)
        made.append(r)
        return r

    monkeypatch.setattr(stage_remote, "start", start)
    return made, argv


def _rows(name, **kw):
    query, db, opts = CASES[name]
    kw.setdefault("stage_process", True)     # the default is off below 8 cores (CI has 2)
    return list(tabular_lines(run_blastp(ROOT / query, ROOT / db, blastp_options(**opts),
                                         num_threads=2, device=_device(), **kw)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_stage_process_equals_golden(name, started):
    got = _rows(name)
    assert got == (GOLD / f"{name}.tsv").read_text().splitlines()
    (remote,) = started[0]
    assert remote is not None and remote.proc._proc.poll() is not None   # the child has ended
    assert not remote.proc._segments and remote.proc.shared
    assert not set(n.lstrip("/") for n in remote.proc.shared) & _shm()   # unlinked


def test_threads_when_switched_off(started):
    assert _rows("synth", stage_process=False) == (GOLD / "synth.tsv").read_text().splitlines()
    assert started[0] == []


@pytest.mark.parametrize("argv", [["/nonexistent/python"],
                                  [sys.executable, "-c", "import sys; sys.exit(3)"]])
def test_fallback_when_the_child_cannot_start_or_dies(argv, started):
    """A child that cannot be started (no Remote) or dies at once (every call StageError): the
    queries' stages run on this process's threads, same rows."""
    started[1].append(argv)
    assert _rows("synth") == (GOLD / "synth.tsv").read_text().splitlines()
    r = started[0][0]
    assert (r is None) == (argv[0] == "/nonexistent/python")
    if r is not None:
        assert not set(n.lstrip("/") for n in r.proc.shared) & _shm()


def test_numba_stays_out_of_the_main_process(tmp_path):
    """A fresh process's device blastp run in this mode: numba never imported there."""
    code = textwrap.dedent(f"""
        import sys
        import pyopencl as cl
        from clalign.blast.blastp import run_blastp, tabular_lines
        from clalign.blast.options import blastp_options
        rows = list(tabular_lines(run_blastp({str(ROOT / CASES['synth'][0])!r},
                    {str(ROOT / CASES['synth'][1])!r}, blastp_options(max_target_seqs=500),
                    num_threads=2, device=cl.get_platforms()[0].get_devices()[0],
                    stage_process=True)))
        print(len(rows), "numba" in sys.modules)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    n, numba = out.stdout.split()
    assert int(n) == len((GOLD / "synth.tsv").read_text().splitlines()) and numba == "False"


def test_calls_shared_arrays_and_errors():
    p = StageProcess(1)
    try:
        a = np.arange(1000, dtype=np.int64)
        h = p.share(a)
        assert p.call("numpy:sum", h) == a.sum()
        assert p.call("numpy:sum", h) == a.sum()      # mapped once, used again
        os.kill(p._proc.pid, signal.SIGINT)             # the parent's to handle, not the child's
        time.sleep(0.2)
        assert p.call("numpy:sum", h) == a.sum()
        with pytest.raises(ZeroDivisionError) as err:
            p.call("operator:truediv", 1, 0)
        assert isinstance(err.value.__cause__, RemoteTraceback)
        assert "ZeroDivisionError" in str(err.value.__cause__)
        with pytest.raises(AttributeError):
            p.call("operator:no_such_function")
        name = h.name
    finally:
        p.close()
    assert not os.path.exists(os.path.join("/dev/shm", name.lstrip("/")))
    assert p._proc.returncode == 0
    with pytest.raises(StageError):
        p.call("numpy:sum", 1)


def test_child_death_fails_pending_and_later_calls():
    p = StageProcess(1)
    try:
        fut = p.submit("time:sleep", 30)
        p._proc.kill()
        with pytest.raises(StageError):
            fut.result(timeout=30)
        with pytest.raises(StageError):
            p.call("numpy:sum", 1)
    finally:
        p.close()


def test_child_ends_with_its_parent():
    """The parent gone (no close): the child reads EOF and exits."""
    code = textwrap.dedent("""
        import os, sys
        from clalign.runtime.stageproc import StageProcess
        p = StageProcess(1)
        assert p.call("os:getpid") == p._proc.pid      # the child serves (numba's start done)
        print(p._proc.pid, flush=True)
        os._exit(0)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[0])
    for _ in range(200):
        if not os.path.exists(f"/proc/{pid}") or "zombie" in _state(pid):
            break
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in _state(pid)


def _state(pid):
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def test_counts_made_in_the_child_equal_the_derived_ones():
    """``add_counts`` (the child's aligned strings and counts) against the output's own."""
    from clalign.blast.blastp import _query_hits, aligned_strings, read_queries, search_codes
    from clalign.blast.engine import QuerySkipped, Subjects, search_query, search_statistics
    from clalign.blast.matrix import blast_matrix
    from clalign.data.database import as_database

    query, db, kw = CASES["odd_proteome"]
    opts = blastp_options(**kw)
    subjects = Subjects.from_database(as_database(ROOT / db, "protein"))
    stats, m = search_statistics(subjects, opts), blast_matrix(opts.matrix)
    checked = 0
    for qid, title, codes in read_queries(ROOT / query)[:6]:
        try:
            hits = search_query(search_codes(codes), subjects, opts, stats)
        except QuerySkipped:
            continue
        stage_remote.add_counts(hits, codes, subjects, m)
        given = _query_hits(qid, title, codes, subjects, hits, m, lambda oid: "")
        for oid, hsps in hits:
            s = subjects.residues[subjects.offsets[oid]:subjects.offsets[oid + 1]]
            for h in hsps:
                assert h.aligned == aligned_strings(codes, s, h)
                del h.counts, h.aligned
        derived = _query_hits(qid, title, codes, subjects, hits, m, lambda oid: "")
        assert given.hits == derived.hits
        checked += len(given.hits)
    assert checked > 0


@pytest.mark.parametrize("n,cores,want", [(3, 16, True), (3, 2, False), (70, 16, False)])
def test_default_by_cores_and_queries(tmp_path, started, monkeypatch, n, cores, want):
    """The default: the stage process on machines of STAGE_PROCESS_MIN_CPUS cores, for searches
    of at most STAGE_PROCESS_MAX_QUERIES queries (threads otherwise); same rows either way."""
    import clalign.blast.blastp as bp

    monkeypatch.setattr(bp.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(bp, "STAGE_PROCESS_MAX_QUERIES", 5 if n == 3 else 64)
    records = (ROOT / CASES["synth"][0]).read_text().split(">")[1:]
    q = tmp_path / "q.faa"
    q.write_text("".join(">" + records[k % len(records)] for k in range(n)))
    opts = blastp_options(max_target_seqs=500)
    got = list(tabular_lines(run_blastp(q, ROOT / CASES["synth"][1], opts, num_threads=2,
                                        device=_device())))
    want_rows = list(tabular_lines(run_blastp(q, ROOT / CASES["synth"][1], opts, num_threads=2,
                                              device=_device(), stage_process=False)))
    assert got == want_rows and len(got) > 0
    assert (len(started[0]) == 1 and started[0][0] is not None) == want

