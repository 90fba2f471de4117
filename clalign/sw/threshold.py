"""Which subjects go to the intra-task kernel, from per-cell rates measured on the device.

Rates (GCUPS, stored in the tuning table under ``sw_rates``; measured at first use when the
table has no entry for the device, then registered for the rest of the process):
``inter``  the first-pass kernel over the whole device on normal subjects;
``lane``   the same kernel running one work-group alone, per lane (how fast one long subject
           in a lane advances: the tail of a length-sorted search waits for it);
``intra``  the intra-task kernel over the whole device on long pairs.
Per database the engine then picks k, the number of longest subjects sent to the intra-task
kernel, minimising the predicted time max(longest remaining lane, all cells at their kernel's
rate) -- the query length cancels out, so one threshold serves every query.
"""
from __future__ import annotations

import time

import numpy as np

from ..data import PROTEIN, Database
from ..runtime.tuning import lookup, register
from .params import RATES_FAMILY

_AA = PROTEIN.encode("ACDEFGHIKLMNPQRSTVWY")


def choose_threshold(lengths, rates: dict) -> int:
    """Subjects longer than the returned length go to the intra-task kernel."""
    L = np.sort(np.asarray(lengths, dtype=np.int64))[::-1]
    if L.size == 0:
        return 0
    inter, lane, intra = (float(rates[k]) for k in ("inter", "lane", "intra"))
    total = float(L.sum())
    head = np.concatenate([[0.0], np.cumsum(L, dtype=np.float64)])     # cells of the k longest
    nxt = np.concatenate([L, [0]]).astype(np.float64)                   # longest remaining lane
    cost = np.maximum(nxt / lane, (total - head) / inter + head / intra)
    k = int(np.argmin(cost))
    return int(L[k]) if k < L.size else 0


def device_rates(worker, report=None) -> dict:
    """The tuning table's rates for the worker's device, measured now when absent."""
    caps = worker.caps
    got = lookup(RATES_FAMILY, caps)
    if all(k in got for k in ("inter", "lane", "intra")):
        return got
    t0 = time.perf_counter()
    rates = measure_rates(worker)
    register(RATES_FAMILY, [({"name_contains": caps.name, "vendor": caps.vendor}, rates)])
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
