"""The engine's two hooks for the device's preliminary gapped extensions (``device_gapped``).

Kept apart from ``device_gapped`` so the CPU path imports no OpenCL: ``device_extensions``
asks the device (when the tuning table lets it run the stage) for one query's speculative
extensions; ``replay_pre`` replays one chunk of subjects on them (``stages_nb.prelim_chunk``).
"""
from __future__ import annotations

import threading
import time

import numpy as np

from .stages_nb import prelim_chunk

_LOCK = threading.Lock()


def _add(times, key, value):
    if times is not None:
        with _LOCK:
            times[key] = times.get(key, 0) + value


def device_extensions(device, qs, rows, times=None):
    """int32 (n, 8) extensions of ``rows`` from ``device`` (a ``DeviceUngapped``), or None when
    there are none to make or the device does not run the preliminary stage."""
    if len(rows) == 0 or not hasattr(device, "rt"):
        return None
    from .device_gapped import for_device

    dg = for_device(device)
    if dg is None:
        return None
    t0 = time.perf_counter()
    ktimes = {}
    pre = dg.extend(qs, rows, times=ktimes)
    t1 = time.perf_counter()
    _add(times, "dev_gapped", t1 - t0)
    _add(times, "dev_gapped_kernel", ktimes.get("dev_gapped_kernel", 0.0))
    _add(times, "dev_gapped_overflow", int((pre[:, 7] == 0).sum()))
    if times is not None and "_events" in times:
        times["_events"].append(("dev_gapped", threading.get_ident(), t0, t1))
    return pre


def replay_pre(args, bounds, tail, pre, times=None):
    """``prelim_chunk`` on rows[bounds[0]:bounds[1]] with the device's extensions ``pre``
    (``args``/``tail`` as ``engine.prelim_hits`` passes them)."""
    cpu = np.zeros(1, dtype=np.int64)
    out = prelim_chunk(*args, bounds[0], bounds[1], *tail, pre, cpu)
    _add(times, "gapped_cpu_extensions", int(cpu[0]))
    return out
