"""What a search does before its first model: the database read in a thread while the HMM
file is parsed, and the kernels planned and built from the file's LENG lines meanwhile
(:mod:`clalign.hmm.search`; why: reading 1,000 models takes seconds of Python, the database
and the builds need none of it)."""
from __future__ import annotations

import os
import threading
import time

import numpy as np


def residues_guess(seqdb) -> int:
    """About how many residues the database holds, before it is read (prices a kernel plan):
    a Database's own count, else the bytes of the file or folder (3x for gzip)."""
    if hasattr(seqdb, "residues"):
        return int(np.asarray(seqdb.residues).size)
    try:
        path = os.fspath(seqdb)
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        return os.path.getsize(path) * (3 if gz else 1)
    except (OSError, TypeError):
        return 0


def early_prebuild(hmmfile, seqdb, device, threads):
    """(model lengths, kernel plan) of a plain HMM file from its LENG lines, with the kernels
    already being built, or None. Why: reading 1,000 models takes ~2-5 s (Python), and on a
    cold program cache the builds (~1 s each on NVIDIA, one after the other) can start at once.
    The search checks the lengths against the models it reads and plans again if they differ;
    any problem here is left for the reader and the search to report, in their order."""
    import re

    try:
        with open(hmmfile, "rb") as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            return None
        # a literal "\n" prefix, not "^" with re.M: 0.09 s instead of 0.88 s for 1,000 models (94 MB, VM)
        Ms = [int(m) for m in re.findall(rb"\nLENG[ \t]+(\d+)[ \t\r]*(?=\n)", data)]
        if not Ms or len(Ms) != data.count(b"\n//") + data.startswith(b"//"):
            return None
        from ..runtime import Runtime
        from .engine import layout_fill_items, prebuild, prebuild_items, shared_layout
        from .kernel_choice import use_striped
        from .kernel_plan import plan_kernels
        from .vit_search import use_device_viterbi

        residues = residues_guess(seqdb)
        plan = plan_kernels(Ms, shared_layout(Ms, "msv", device), "msv", device, residues)
        threads = min(threads, os.cpu_count() or 1)
        rt = Runtime.get(device)
        if use_striped(rt.caps) or not use_device_viterbi(rt.caps, work=float(sum(Ms)) * residues):
            prebuild(Ms, "msv", device, threads=threads, overrides=plan)
        else:      # each model's MSV, Viterbi and Forward programs side by side, in the order models need them
            from .vit_engine import filter_items

            msv = prebuild_items(Ms, "msv", device, plan)
            bias, per_model = filter_items(Ms, device)
            items = [it for m, later in zip(msv, per_model) for it in [m, *later] if it is not None]
            rt.prebuild([*layout_fill_items(msv), *bias, *items], threads)
        return Ms, plan
    except Exception:           # noqa: BLE001  (the reader and the search report what is wrong)
        return None


def residues_early(cache, device, db) -> None:
    """Start uploading the database's residue codes into a search's layout cache, in a daemon
    thread: the S-lane layouts are filled on the device from them (:mod:`clalign.hmm.layout_dev`),
    and the stage's first models plan their layouts meanwhile. A failure here is left to the
    stage, which then uploads them itself and reports what goes wrong."""
    from ..cl_early import ahead

    def upload():
        from ..runtime import Runtime
        from .layout_dev import residues_on_device

        rt = Runtime.get(device)
        residues_on_device(cache, rt, rt.new_queue(), np.asarray(db.residues))

    ahead("clalign-residues", upload)


_EARLY: dict = {}                   # path -> the Loading the command started (Loading.early)
_EARLY_LOCK = threading.Lock()


class Loading:
    """``as_database(seqdb)`` in a daemon thread, started at once: reading a large FASTA file
    (compiled loops, no GIL) overlaps with reading the HMM file (Python, ~2-5 ms per model).
    :meth:`result` gives (database, seconds) or raises what the reader raised; a search that
    fails on its HMM file first never asks, so that error still comes first."""

    @classmethod
    def early(cls, seqdb) -> None:
        """Start reading the database ``seqdb`` (a path) now, for the search that :meth:`take`
        s it: the CLI calls this before importing the device runtime (pyopencl, ~0.13 s on the
        H200 host) and the search's modules, so that the read begins that much sooner."""
        key = os.fspath(seqdb)
        with _EARLY_LOCK:
            if key not in _EARLY:
                _EARLY[key] = cls(seqdb)

    @classmethod
    def take(cls, seqdb) -> "Loading":
        """The loading :meth:`early` started for ``seqdb``, else a new one (started now)."""
        if isinstance(seqdb, (str, bytes, os.PathLike)):
            with _EARLY_LOCK:
                got = _EARLY.pop(os.fspath(seqdb), None)
            if got is not None:
                return got
        return cls(seqdb)

    def __init__(self, seqdb):
        from ..data import as_database

        self._out: list = []
        if hasattr(seqdb, "residues"):
            self._out = [(as_database(seqdb), 0.0)]
            self._thread = None
            return

        def load():
            t0 = time.perf_counter()
            try:
                self._out.append((as_database(seqdb), time.perf_counter() - t0))
            except BaseException as exc:          # raised in the caller's thread by result()
                self._out.append(exc)

        self._thread = threading.Thread(target=load, name="clalign-db", daemon=True)
        self._thread.start()

    def then(self, work) -> None:
        """``work(database)`` on a daemon thread once the database is read (nothing if the read
        fails: the search reports that when it asks for :meth:`result`)."""
        from ..cl_early import ahead

        ahead("clalign-db-then", lambda: work(self.result()[0]))

    def result(self):
        if self._thread is not None:
            self._thread.join()
        got = self._out[0]
        if isinstance(got, BaseException):
            raise got
        return got
