"""Which subjects go to the intra-task kernel, from per-cell rates measured on the device.

Rates (GCUPS, looked up in the tuning table under ``sw_rates``; when it has no entry for the
device, read from the program cache folder where an earlier process stored its measurement for
this device and kernel plan, else measured now and stored there):
``inter``  the first-pass kernel over the whole device on normal subjects;
``lane``   the same kernel running one work-group alone, per lane (how fast one long subject
           in a lane advances: the tail of a length-sorted search waits for it);
``intra``  the intra-task kernel over the whole device on long pairs.
Per database the engine then picks k, the number of longest subjects sent to the intra-task
kernel, minimising the predicted time: the intra-task kernel's cells at its rate, plus the longer
of the first pass's longest remaining lane and its cells (counted padded to its blocks' longest
lane) at its rate. The intra-task work is added to both because it is queued first and takes the
compute units first, so the first pass's longest block starts behind it (on the H100's long-tail
database: 2,968 aa, 2.06 s, against 3,391 aa and 2.19-2.21 s from max(lane, inter + intra),
docs/perf/sw.md runs Y3, Y7). The query length cancels out, so one threshold serves every query.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ..data import PROTEIN, Database
from ..runtime.tuning import lookup
from .params import RATES_FAMILY

_AA = PROTEIN.encode("ACDEFGHIKLMNPQRSTVWY")


def choose_threshold(lengths, rates: dict, group: int = 1) -> int:
    """Subjects longer than the returned length go to the intra-task kernel.

    ``group``: subjects the first-pass kernel pads to one length (a block of lanes that holds its
    resources until its longest lane is done), so a long-tailed set costs the first pass its
    padded cells, which the cost model counts."""
    L = np.sort(np.asarray(lengths, dtype=np.int64))[::-1]
    if L.size == 0:
        return 0
    inter, lane, intra = (float(rates[k]) for k in ("inter", "lane", "intra"))
    g = max(1, int(group))
    # padded[k]: cells (per query row) of the first pass over L[k:], in groups of g from the top
    # strided suffix sums: padded[k] = sum of Lg[j] over j >= k, j = k (mod g) -- the columns of
    # Lg laid out g to a row, summed from the last row up (one numpy pass instead of a loop over
    # the g residue classes; same additions in the same order)
    padded = np.zeros(L.size + 1, dtype=np.float64)
    rows = -(-L.size // g)
    grid = np.zeros(rows * g, dtype=np.float64)
    grid[:L.size] = L.astype(np.float64) * g
    grid = grid.reshape(rows, g)[::-1].cumsum(axis=0)[::-1]
    padded[:L.size] = grid.reshape(-1)[:L.size]
    head = np.concatenate([[0.0], np.cumsum(L, dtype=np.float64)])     # cells of the k longest
    nxt = np.concatenate([L, [0]]).astype(np.float64)                   # longest remaining lane
    cost = head / intra + np.maximum(nxt / lane, padded / inter)
    k = int(np.argmin(cost))
    return int(L[k]) if k < L.size else 0


_KEYS = ("inter", "lane", "intra")


_MEASURED: dict = {}      # ident digest -> rates, for the rest of the process


_TEMPLATES = ("sw_intertask.mako", "sw_vector.mako", "sw_intratask.mako", "sw_striped.mako")


@functools.lru_cache(maxsize=1)
def _sources_digest() -> str:
    """The SW kernel templates' text: a changed kernel is measured again, not judged by old rates."""
    from ..runtime.render import kernel_dir

    h = hashlib.sha256()
    for name in _TEMPLATES:
        try:
            h.update((kernel_dir() / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


def _ident(worker) -> str:
    from ..runtime.cache import device_identity

    p = worker.plan
    ident = {"device": device_identity(worker.rt.device), "kernel": p.kernel, "base": p.base, "vector": p.vvalues,
             "intra": p.ivalues, "groups_per_cu": p.groups_per_cu, "sources": _sources_digest()}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _stored_path(worker):
    """Where the rates of this device and kernel plan persist between processes: ``sw_rates/``
    in the program cache folder, keyed by the device identity (driver version included), the
    kernel plan and the kernel templates' text; ``clalign cache clear`` leaves them (delete that folder to measure again).
    None when the cache is off."""
    from ..runtime.cache import get_cache

    cache = get_cache()
    if not cache.enabled:
        return None
    return Path(cache.root) / "sw_rates" / f"{_ident(worker)}.json"


def _load(path):
    try:
        got = json.loads(path.read_text())
        if all(isinstance(got.get(k), (int, float)) and got[k] > 0 for k in _KEYS):
            return {k: float(got[k]) for k in _KEYS}
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _store(path, rates):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(path.parent))
        with os.fdopen(fd, "w") as fh:
            json.dump(rates, fh)
        os.replace(tmp, path)
    except OSError:
        pass        # a read-only cache folder only costs a measurement next time


def device_rates(worker, report=None) -> dict:
    """The tuning table's rates for the worker's device, else the stored measurement of an
    earlier process, else measured now (and stored)."""
    caps = worker.caps
    got = lookup(RATES_FAMILY, caps)
    if all(k in got for k in _KEYS):
        return got
    key = _ident(worker)
    if key in _MEASURED:
        return _MEASURED[key]
    path = _stored_path(worker)
    rates = _load(path) if path is not None else None
    if rates is not None:
        _MEASURED[key] = rates
        return rates
    t0 = time.perf_counter()
    rates = _MEASURED[key] = measure_rates(worker)
    if path is not None:
        _store(path, rates)
    if report is not None:
        report(f"sw: measured per-cell rates on {caps.name} in {time.perf_counter() - t0:.1f} s: "
               + ", ".join(f"{k} {v:.2f} GCUPS" for k, v in rates.items()))
    return rates


def _db(rng, n, m):
    codes = _AA[rng.integers(0, 20, (n, m))]
    return Database.from_sequences(list(codes))


def _time(worker, db, q, threshold, repeat=2) -> float:
    """Seconds of the best of ``repeat`` searches (after a warm-up) of codes ``q`` against ``db``."""
    lim = worker.batch_limit()
    assert int(db.total_residues) <= lim
    b = worker.upload(db, 0, len(db), threshold)
    worker.score_batch(b, q)
    best = float("inf")
    for _ in range(repeat):
        k0 = worker.kernel_seconds
        worker.score_batch(b, q)
        best = min(best, worker.kernel_seconds - k0)
    return max(best, 1e-9)


def measure_rates(worker) -> dict:
    """Time the kernels on synthetic random sequences sized to fill (or not) the device."""
    rng = np.random.default_rng(7)
    caps, plan = worker.caps, worker.plan
    gpu = bool(caps.is_gpu)
    if plan.kernel == "vector":
        per_group = plan.vvalues["VEC"] * plan.vvalues["WG"]
        groups = caps.compute_units * (plan.groups_per_cu or (8 if gpu else 2))
    else:
        per_group = plan.wg * (32 // plan.first_width) * plan.base["WORDS"]
        groups = caps.compute_units * (plan.groups_per_cu or (8 if gpu else 1))
    qlen, slen = (512, 384) if gpu else (256, 256)
    q = _AA[rng.integers(0, 20, qlen)]
    big = 10 ** 9
    db = _db(rng, 2 * groups * per_group, slen)
    inter = qlen * db.total_residues / _time(worker, db, q, big) / 1e9
    one = _db(rng, per_group, 4 * slen)
    lane = qlen * one.total_residues / _time(worker, one, q, big) / 1e9 / per_group
    npairs = caps.compute_units * (4 if gpu else 1)
    lq = _AA[rng.integers(0, 20, 4 * qlen)]
    longdb = _db(rng, npairs, 8 * slen)
    intra = len(lq) * longdb.total_residues / _time(worker, longdb, lq, 0) / 1e9
    return {"inter": inter, "lane": lane, "intra": intra}
