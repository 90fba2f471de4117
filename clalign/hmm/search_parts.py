"""The pieces of :mod:`clalign.hmm.search` that hold no search state: its result types, the
checks and readers of its inputs, and its thread pool."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .hmmfile import HMM, _read_text
from .hmmtext import hmmer_order
from .pyhmmer_adapter import read_models


@dataclass
class ModelResult:
    """Search result of one model: pyhmmer ``TopHits`` plus the filter counts."""

    hmm: HMM
    hits: object
    n_device_pass: int
    n_past_msv: int
    n_past_bias: int
    n_past_vit: int
    n_past_fwd: int
    seconds: float = 0.0
    #: longest target name in HMMER's hit list of this query (the tables' and report's name
    #: column width; see :mod:`clalign.hmm.tables`)
    name_width: int = 0


@dataclass
class SearchStats:
    models: int = 0
    nodes: int = 0
    sequences: int = 0
    residues: int = 0
    device_pass: int = 0
    past_msv: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0      # reading the sequence database
    device_seconds: float = 0.0    # device MSV stage (summed over its threads), waits for kernel builds included
    pyhmmer_seconds: float = 0.0   # post-MSV stages, summed over models (they run in parallel)
    engine: str = ""               # which MSV filter ran, and why (clalign.hmm.choice)
    kernel_seconds: float = 0.0    # MSV kernels alone (OpenCL profiling events)
    vit_seconds: float = 0.0       # bias, Viterbi and Forward filters on the device (clalign.hmm.vit_search)
    cells: int = 0                 # model states x residues the kernels scored
    per_model: list = field(default_factory=list)


def _hmmer_lengths(db):
    """Target lengths as HMMER counts them (trailing stops included) and the stop counts.

    The counts are the database's own (``db.stops``, from the FASTA reader or a prepared
    database), so a FASTA file and the database made from it give the same.
    """
    from .reference import hmmer_lengths

    return hmmer_lengths(db), np.asarray(db.stops, dtype=np.int64)


def _check_targets(db, seqdb):
    """What HMMER refuses in a sequence file: no sequences at all, a sequence without a name."""
    where = None if hasattr(seqdb, "residues") else seqdb
    if len(db) == 0:
        raise InputError("sequence database is empty (no sequences)", where)
    empty = np.flatnonzero(np.diff(np.asarray(db.ids.offsets)) == 0)
    if empty.size:
        raise InputError(f"sequence {int(empty[0]) + 1} has no name (HMMER needs one for every target)", where)


def _pyhmmer_models(hmmfile):
    """pyhmmer HMM objects of the file (plain or gzip), read from memory."""
    data = hmmer_order(_read_text(hmmfile))     # header order HMMER 3.4 (pyhmmer) does not crash on
    try:
        return read_models(data)
    except (ValueError, OSError, EOFError, RuntimeError) as exc:   # what our reader let through
        raise InputError(f"HMMER (pyhmmer) cannot read this file: {exc}", hmmfile) from None


@contextmanager
def _pool(workers):
    """A thread pool that, when the search stops early (an error, or a signal turned into an
    exception by the CLI), drops its queued tasks instead of running them all first."""
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
