"""The device path's pipelined scheduling (``DeviceUngapped`` with the chunk kernel: queries
prepared, uploaded and read back outside the device's lock, a few reused buffer slots) and
``run_blastp``'s overlapped start-up: several queries at once give the CPU path's initial HSPs
and outfmt 6 rows, launches that overflow their output are redone while other queries run, and
an error in one query neither hangs nor corrupts the others."""
import gzip
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import read_queries, run_blastp, tabular_lines
from clalign.blast.engine import Subjects, initial_hsps, setup_query
from clalign.blast.options import blastp_options
from clalign.data.database import Database

cl = pytest.importorskip("pyopencl")
from clalign.blast import device as dmod  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHUNK = {"KERNEL": "chunk", "WG": 64}
WAIT = 300   # seconds: a hang fails the test instead of stalling the suite


@pytest.fixture(scope="module")
def subjects():
    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    s = Subjects.from_database(db)
    n = 400
    return Subjects(s.residues[:s.offsets[n]], s.offsets[:n + 1], list(db.ids[:n]))


@pytest.fixture(scope="module")
def setups(subjects):
    """The four bundled queries and four of the subjects themselves (self hits): 8 queries."""
    opts = blastp_options()
    codes = [c for _, _, c in read_queries(ROOT / "data" / "queries.faa")]
    codes += [subjects.residues[subjects.offsets[k]:subjects.offsets[k + 1]] for k in (10, 50, 90, 130)]
    return [setup_query(c, subjects, opts) for c in codes]


def test_concurrent_queries_same_rows(subjects, setups, monkeypatch):
    """More queries at once than buffer slots, over several blocks, with output buffers of one
    row (every launch with hits is redone with room for all): each query gets its own rows,
    equal to the compiled CPU path's."""
    monkeypatch.setattr(dmod, "IN_FLIGHT", 3)
    dev = dmod.DeviceUngapped(subjects, override=CHUNK, block_residues=40_000)
    assert len(dev.blocks) > 2 and len(setups) > dev._slots.limit == 3
    slots = [dev._slots.get() for _ in range(dev._slots.limit)]
    for slot in slots:
        slot.capacity = [1] * len(dev.blocks)
        dev._slots.put(slot)
    with ThreadPoolExecutor(max_workers=len(setups)) as pool:
        got = [f.result(timeout=WAIT) for f in [pool.submit(dev.initial_hsps, qs) for qs in setups]]
    total = 0
    for qs, rows in zip(setups, got):
        want = initial_hsps(qs, subjects)
        assert rows.shape == want.shape and np.array_equal(rows, want)
        total += len(want)
    assert total > 20 and dev.times.counts["init_hsps"] == total
    span, busy = dev.times.kernel_span()
    assert 0 < busy <= span + 1e-9


def test_error_in_one_query_spares_the_others(subjects, setups, monkeypatch):
    """A query failing after its launches were enqueued raises in its own thread; its slot comes
    back once the launches ended, and the queries around it (more than the slots) finish with
    the right rows."""
    monkeypatch.setattr(dmod, "IN_FLIGHT", 3)
    dev = dmod.DeviceUngapped(subjects, override=CHUNK, block_residues=60_000)
    bad = len(setups[3].codes)
    real = dev.chunk.enqueue

    def enqueue(blocks, job, slot, wait_for):
        done = real(blocks, job, slot, wait_for)
        if job.qlen == bad:
            raise RuntimeError("injected device failure")
        return done

    monkeypatch.setattr(dev.chunk, "enqueue", enqueue)
    with ThreadPoolExecutor(max_workers=len(setups)) as pool:
        futs = [pool.submit(dev.initial_hsps, qs) for qs in setups]
        for k, (qs, f) in enumerate(zip(setups, futs)):
            if len(qs.codes) == bad:
                with pytest.raises(RuntimeError, match="injected"):
                    f.result(timeout=WAIT)
            else:
                assert np.array_equal(f.result(timeout=WAIT), initial_hsps(qs, subjects))
    assert dev._slots.idle() == dev._slots.made == 3     # every slot returned
    monkeypatch.setattr(dev.chunk, "enqueue", real)
    assert np.array_equal(dev.initial_hsps(setups[3]), initial_hsps(setups[3], subjects))


def _fasta(tmp_path, subjects_n=300):
    """A database of the first ``subjects_n`` proteome proteins; queries: the four bundled
    queries and four of those proteins (self hits)."""
    db = tmp_path / "db.faa"
    recs = gzip.open(ROOT / "data" / "proteome.faa.gz", "rt").read().split(">")[1:]
    db.write_text("".join(">" + r for r in recs[:subjects_n]))
    q = tmp_path / "q.faa"
    qrecs = (ROOT / "data" / "queries.faa").read_text().split(">")[1:]
    q.write_text("".join(">" + r for r in qrecs + recs[10:subjects_n:subjects_n // 4][:4]))
    return q, db


def test_run_blastp_threads_device_equals_cpu(tmp_path, monkeypatch):
    """run_blastp with 2 query threads (setups 4 queries ahead, of 8), the device made in the
    background:
    outfmt 6 rows identical to the CPU path's, in order."""
    q, db = _fasta(tmp_path)
    made = []

    class Chunk(dmod.DeviceUngapped):     # the chunk kernel (CPU devices default to 'subject')
        def __init__(self, subjects, device=None, stream=None):
            super().__init__(subjects, device, override=CHUNK, block_residues=30_000, stream=stream)
            made.append(self)

    monkeypatch.setattr(dmod, "DeviceUngapped", Chunk)
    opts = blastp_options()
    times = {}
    dev = cl.get_platforms()[0].get_devices()[0]
    with ThreadPoolExecutor(max_workers=1) as run:
        got = run.submit(lambda: tabular_lines(run_blastp(q, db, opts, num_threads=2, device=dev,
                                                          times=times))).result(timeout=WAIT)
    want = tabular_lines(run_blastp(q, db, opts, num_threads=1))
    assert len(want) > 10 and got == want
    assert times["device_setup"] > 0 and times["read_db"] > 0
    assert made[0].kernel == "chunk" and len(made[0].blocks) > 2 and made[0].times.launches


def test_run_blastp_device_error_surfaces(tmp_path, monkeypatch):
    """A device that fails while being made in the background: the search raises that error
    (no hang), with one query thread and with several."""
    q, db = _fasta(tmp_path, subjects_n=50)

    class Broken(dmod.DeviceUngapped):
        def __init__(self, subjects, device=None, stream=None):
            subjects.result()
            raise RuntimeError("device set-up failed")

    monkeypatch.setattr(dmod, "DeviceUngapped", Broken)
    for threads in (1, 3):
        with ThreadPoolExecutor(max_workers=1) as run:
            fut = run.submit(lambda: list(run_blastp(q, db, blastp_options(), num_threads=threads,
                                                     device="0:0")))
            with pytest.raises(RuntimeError, match="set-up failed"):
                fut.result(timeout=WAIT)


def _bounds_loop(lengths, block_residues, max_subjects):
    """The plain rule: add subjects while the block's stream (residues + a separator each)
    stays within ``block_residues`` (a block takes at least one subject)."""
    out, first = [], 0
    while first < len(lengths):
        last, total = first, 0
        while last < len(lengths) and last - first < max_subjects and (
                last == first or total + lengths[last] + 1 <= block_residues):
            total += int(lengths[last]) + 1
            last += 1
        out.append((first, last))
        first = last
    return out


def test_block_bounds_plain_rule(monkeypatch):
    rng = np.random.default_rng(3)
    monkeypatch.setattr(dmod, "KEY_SUBJ_BITS", 3)
    for _ in range(200):
        lengths = rng.integers(1, 50, size=int(rng.integers(0, 60)))
        br = int(rng.integers(1, 200))
        assert dmod.block_bounds(lengths, br) == _bounds_loop(lengths, br, 8)


def test_lpt_order_windows():
    """Queries start longest first within each window, windows in file order, ties in file order."""
    from clalign.blast.blastp import lpt_order

    assert lpt_order([1, 5, 3, 5, 2, 9, 1], 3) == [1, 2, 0, 5, 3, 4, 6]
    assert lpt_order([4, 4, 4], 8) == [0, 1, 2]
    assert lpt_order([], 4) == []


@pytest.mark.parametrize("numpy_form", [False, True])
def test_block_stream_layout(numpy_form, monkeypatch):
    """A block's stream: each subject's residues, one SEPARATOR after each, SEPARATOR padding;
    subjects of length 0 included (the plain construction it replaces, np.full + slices); the
    compiled fill and the numpy one (numba kept out of the process)."""
    from clalign.blast import device
    from clalign.blast.device import block_stream

    monkeypatch.setattr(device, "numpy_forms", lambda f: numpy_form)
    from clalign.blast.engine import Subjects
    from clalign.blast.params import SEPARATOR

    rng = np.random.default_rng(3)
    lens = np.array([5, 0, 1, 17, 3, 0, 8], dtype=np.int64)
    off = np.r_[0, np.cumsum(lens)]
    subj = Subjects(rng.integers(1, 25, int(off[-1])).astype(np.uint8), off, [b"s"] * len(lens))
    for first, last in ((0, 7), (2, 5), (1, 2)):
        got_lens, base, n, stream = block_stream(subj, first, last, 4)
        want = np.full(int(np.sum(lens[first:last] + 1)) + 4, SEPARATOR, dtype=np.uint8)
        at = 0
        for k in range(first, last):
            want[at:at + lens[k]] = subj.residues[off[k]:off[k + 1]]
            at += int(lens[k]) + 1
        assert np.array_equal(stream, want) and n == len(want) - 4
        assert np.array_equal(got_lens, lens[first:last]) and np.array_equal(base, np.r_[0, np.cumsum(lens[first:last] + 1)[:-1]])


def test_psq_block_equals_block_stream(tmp_path):
    """A makeblastdb database's blocks straight from its .psq (``protein_stream``/``psq_block``)
    equal the ones filled from the residues the reader copies: trailing stops, a gap letter
    inside a sequence (code 0 there is a residue, not a separator) and an empty-residue edge."""
    import shutil
    import subprocess

    from clalign.blast.device import block_bounds, block_stream, psq_block
    from clalign.data.blastdb import protein_stream
    from clalign.data.database import as_database

    if shutil.which("makeblastdb") is None:
        pytest.skip("makeblastdb (BLAST+) not installed")
    fa = tmp_path / "db.fa"
    fa.write_text(">a\nMKV*\n>b\nW\n>c\nACDEFGHIKLMNPQRSTVWY*\n>d\nMK-LV\n>e\nPPPPPPPPPPPPPPPPPP**\n")
    subprocess.run(["makeblastdb", "-in", str(fa), "-dbtype", "prot", "-out", str(tmp_path / "db")],
                   check=True, capture_output=True)
    psq, starts = protein_stream(tmp_path / "db")
    subj = Subjects.from_database(as_database(str(tmp_path / "db"), "protein"))
    assert np.array_equal(np.diff(starts) - 1, np.diff(subj.offsets))
    for first, last in [(0, 5), (1, 4), (4, 5)] + block_bounds(np.diff(subj.offsets), 12):
        got, want = psq_block(psq, starts, first, last, 3), block_stream(subj, first, last, 3)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
    assert protein_stream(fa.with_suffix(".missing")) is None
