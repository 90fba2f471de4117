"""BLASTP's gapped stages in the stage process (``runtime.stageproc``), one call per query.

A device search with several threads runs each query's preliminary gapped stage (the device's
extensions replayed), its Spouge E-values, the traceback, the bit scores and the output's column
counts in the child, which cuts them into subject chunks on its own threads: one request (the
query's set-up without its lookup table, its ungapped rows, the device's extensions) and one
reply (the hit list) per query. The subjects go once, through shared memory.

:class:`Remote` is the parent's end; ``keep_subjects`` and ``gapped`` run in the child. Any
:class:`StageError` (the child did not start or died) leaves the caller to run the same stages
on its own threads: same code, same results.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import Future

import numpy as np

from ..runtime.stageproc import StageError, StageProcess

#: what the child loads from numba's cache at its start, in the order of need
PRELOAD = ("clalign.blast.stages_nb:prelim_chunk", "clalign.stats._fast:spouge_evalues",
           "clalign.blast.stages_nb:traceback_chunk", "clalign.output.record:counts_dispatcher()")


class Remote:
    """The parent's end for one search: the child, and the subjects shared with it."""

    def __init__(self, threads: int, argv=None):
        self.proc = StageProcess(threads, PRELOAD, argv=argv)
        self._key = Future()
        self.share_seconds = 0.0

    def share_subjects(self, subjects):
        """Copy the subjects' residues and offsets to shared memory and hand them to the child,
        on a thread (a ``PendingSubjects`` is waited for there)."""

        def run():
            try:
                t0 = time.perf_counter()
                res = self.proc.share(subjects.residues)
                off = self.proc.share(subjects.offsets)
                self.share_seconds = time.perf_counter() - t0
                self._key.set_result(self.proc.call(f"{__name__}:keep_subjects", id(self), res, off))
            except BaseException as exc:   # noqa: BLE001 - the queries' calls raise it
                self._key.set_exception(exc if isinstance(exc, StageError) else StageError(repr(exc)))

        threading.Thread(target=run, name="clalign-share", daemon=True).start()

    def gapped(self, qs, rows, pre, parts, threads, times, shown):
        """[(oid, [HSP, ...])] as ``engine.prelim_hits`` + ``traceback_hits`` give them (each HSP
        with ``counts`` for the output when the child could make them), and the preliminary
        stage's seconds; StageError when the child is not there."""
        key = self._key.result()
        slim = dataclasses.replace(qs, lookup=None)   # the child needs no lookup table
        result, t = self.proc.call(f"{__name__}:gapped", key, slim, rows, pre, parts, threads,
                                   shown)
        if times is not None:
            from .engine import _add_times

            _add_times(times, [(k, v) for k, v in t.items() if not k.startswith("_")])
        return result, t.get("_prelim_wall", 0.0)

    def close(self):
        self.proc.close()


def start(threads: int, argv=None):
    """A :class:`Remote`, or None when the child cannot be started."""
    try:
        return Remote(threads, argv)
    except StageError:
        return None


# -- in the child -------------------------------------------------------------------------

_SUBJECTS = {}


def keep_subjects(key, residues, offsets):
    from .engine import Subjects

    _SUBJECTS[key] = Subjects(residues, offsets, None)
    return key


def gapped(key, qs, rows, pre, parts, threads, shown):
    """The child's half of :meth:`Remote.gapped`."""
    from ..runtime.stageproc import pool
    from .engine import prelim_hits, traceback_hits

    subjects, workers, times = _SUBJECTS[key], pool(), {}
    t0 = time.perf_counter()
    P, pstarts = prelim_hits(qs, subjects, rows, workers, parts, times, pre)
    times["_prelim_wall"] = time.perf_counter() - t0
    result = traceback_hits(qs, subjects, P, pstarts, workers, threads, times) if len(P) else []
    add_counts(result, shown, subjects, qs.matrix)
    return result, times


def add_counts(result, codes, subjects, matrix):
    """Each HSP's ``aligned`` strings (``blastp.aligned_strings`` of ``codes``, the query as
    printed: the output takes them instead of making them again) and ``counts`` (identities,
    positives, gap columns, gap openings) as ``Alignment.make`` derives them from those strings;
    counts left out (the output derives them, and reports) where a letter is not scored."""
    from ..data.alphabet import PROTEIN
    from ..output.record import _column_counts, _letter_index
    from .blastp import aligned_strings

    lut, sc = _letter_index(PROTEIN.letters), np.asarray(matrix)
    for oid, hsps in result:
        s = subjects.residues[subjects.offsets[oid]:subjects.offsets[oid + 1]]
        for h in hsps:
            qseq, sseq = h.aligned = aligned_strings(codes, s, h)
            qa = np.frombuffer(qseq.encode("latin-1"), dtype=np.uint8)
            sa = np.frombuffer(sseq.encode("latin-1"), dtype=np.uint8)
            nident, positive, gaps, opens, bad = _column_counts(qa, sa, lut, sc, True)
            if bad < 0:
                h.counts = (int(nident), int(positive), int(gaps), int(opens))
