"""Verify, then time: the one measuring path of the tuner and of the device benchmarks.

A variant (a set of template values) is run once; that run builds its kernels, warms the
device up and yields the output, which is checked against a reference. Only a variant whose
output is right is timed: ``repeats`` further runs, each reporting the seconds of its kernels
(OpenCL profiling events), and the median is the variant's time. A variant that cannot build,
breaks a device limit or gives a wrong answer is never timed, and the reason is kept.

Results are rows of plain JSON (:func:`result_doc`), so ``clalign tune``, ``tools/device_*.py``
and ``tools/bench_*.py`` write files the tuner and the tuning table can read back.
"""
from __future__ import annotations

import json
import platform
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import KernelBuildError, ParameterError

RESULT_FORMAT = "clalign-results-1"


@dataclass
class Measurement:
    """Outcome of one variant on one input: ``status`` is ``ok``, ``limit`` (breaks a device
    limit or a constraint), ``build`` (did not compile), ``wrong`` (failed verification) or
    ``error`` (failed to run); ``seconds`` is the median kernel time (ok only)."""

    status: str
    seconds: float | None = None
    samples: list = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict:
        return asdict(self)


def _first_line(exc) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def verify_then_time(run: Callable, verify: Callable, repeats: int = 3, warmup: int = 0) -> Measurement:
    """``run() -> (output, kernel_seconds)``; ``verify(output) -> None`` or the reason it is
    wrong. The first run (build, warm-up) is never timed; ``warmup`` more untimed runs follow
    before the ``repeats`` timed ones (``repeats=0``: verify only, nothing timed)."""
    import pyopencl as cl

    try:
        out, _ = run()
    except KernelBuildError as exc:
        return Measurement("build", reason=_first_line(exc))
    except ParameterError as exc:
        return Measurement("limit", reason=_first_line(exc))
    except (cl.Error, MemoryError, RuntimeError) as exc:
        return Measurement("error", reason=f"{type(exc).__name__}: {_first_line(exc)}")
    bad = verify(out)
    if bad:
        return Measurement("wrong", reason=str(bad)[:300])
    if repeats <= 0:                   # a correctness gate only
        return Measurement("ok")
    try:
        for _ in range(max(0, warmup)):
            run()
        samples = [float(run()[1]) for _ in range(repeats)]
    except (cl.Error, MemoryError, RuntimeError) as exc:
        return Measurement("error", reason=f"{type(exc).__name__}: {_first_line(exc)}")
    return Measurement("ok", statistics.median(samples), samples)


def compare(got, want, what="scores", index=None) -> str | None:
    """None when equal (NaN equal to NaN), else one line naming the first difference."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape} != reference {want.shape}"
    eq = (got == want)
    if got.dtype.kind == "f":
        eq |= np.isnan(got) & np.isnan(want)
    if eq.all():
        return None
    bad = np.flatnonzero(~eq)
    i = int(bad[0])
    where = int(index[i]) if index is not None else i
    return f"{what}: {bad.size} of {got.size} differ from the reference (first at {where}: {got.flat[i]} != {want.flat[i]})"


def _commit() -> str:
    """The clalign checkout's commit, or '' when clalign is not its own git work tree (an
    installed copy, or a snapshot inside another repository's tree)."""
    here = Path(__file__).resolve().parent.parent.parent
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             cwd=here, timeout=5).stdout.strip()
        if not top or Path(top).resolve() != here:
            return ""
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=here, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def result_doc(caps, command: str, rows: list, **extra) -> dict:
    """A results file: when, where (the device key of the tuning database), what ran, rows.

    A row: ``{"family", "input", "values", "status", "seconds", "reason", ...}``."""
    from .tuning_db import device_key

    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": platform.node(),
            "command": command, "commit": _commit(), **extra}
    return {"format": RESULT_FORMAT, "meta": meta, "device": device_key(caps) if caps is not None else None,
            "rows": rows}


def write_results(path, doc: dict) -> None:
    """Write a results document whole or not at all (a benchmark's own output: replaced)."""
    from ..outfile import atomic_output

    with atomic_output(str(path), force=True) as fh:
        fh.write(json.dumps(doc, indent=1, default=str) + "\n")


def read_results(path) -> dict:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != RESULT_FORMAT:
        raise ValueError(f"{path}: not a {RESULT_FORMAT} file")
    return doc
