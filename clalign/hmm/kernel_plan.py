"""The S-lane kernels of a many-model search: few programs, one database layout where possible.

Why: the per-model choice (:func:`clalign.hmm.kernel_choice.choose_kernel`, CUDAMPF++ Eq. 2-5)
takes the smallest H that covers M, so every distinct ``ceil(M / P)`` is a program of its own:
1,000 Pfam-like models (median 155 states) need 143 programs on the H100 (LANE 16), each an
NVIDIA build of about a second, serialised by the driver. A model may run on any program of
its S with a larger H (the extra states are padding, cost 255: exact, only slower), so the
search picks, per S, the set of H values that minimises

    (kernel time of the padded states) + (a build per program not in the cache)

by dynamic programming over the sorted distinct H values (a search of a few models over a
large database keeps its exact choices: their padding would cost more than a build). The plan
depends only on the models and the database size, not on what the program cache holds, so a
later run of the same search asks for the same programs. The kernel values of each model are
computed here once (``values``; :func:`clalign.hmm.engine.run_raw` then skips the choice).
"""
from __future__ import annotations

from ..runtime import Runtime, tuning
from .kernel_choice import choose_kernel, use_striped

#: What one more program is charged in the plan, in seconds: a build from source costs about
#: a second on NVIDIA (serialised by the driver, docs/perf/cache.md), ~2 s on PoCL, but only
#: once per installation (the persistent program cache keeps it), so a quarter of it: a few
#: searches amortise it. 1,000 Pfam-like models x 205 M residues on the H100's figures: 12
#: programs, 13.6 % padded states (143 programs with exact H).
BUILD_SECONDS = {"gpu": 0.25, "cpu": 0.5}


def _rate(caps) -> float:
    """Cells per second of the MSV kernels on this device (the engine choice's recorded rate)."""
    try:
        per_cu = float(tuning.lookup("hmm_filter.rate", caps)["DEVICE_GCUPS_PER_CU"])
    except (KeyError, LookupError):
        per_cu = 15.0
    return max(1e9, per_cu * 1e9 * max(1, int(caps.compute_units or 1)))


def _best_set(hs, weight, cost):
    """Program H values (a subset of the sorted candidates ``hs``, the largest included) that
    minimise sum over models of weight(h) * (H(h) - h) + sum of cost(H); H(h) = the smallest
    chosen value >= h. ``weight``: {exact h: seconds per unit of H}; returns {exact h: H}."""
    m = len(hs)
    best = [0.0] + [float("inf")] * m
    back = [0] * (m + 1)
    for j in range(1, m + 1):
        c = hs[j - 1]
        for i in range(j):                  # programs ... hs[i-1] chosen, then hs[j-1] serves (hs[i-1], c]
            pad = sum(w * (c - h) for h, w in weight.items() if (i == 0 or h > hs[i - 1]) and h <= c)
            v = best[i] + cost(c) + pad
            if v < best[j]:
                best[j], back[j] = v, i
    out, j = {}, m
    while j > 0:
        i, c = back[j], hs[j - 1]
        for h in weight:
            if (i == 0 or h > hs[i - 1]) and h <= c:
                out[h] = c
        j = i
    return out


def plan_kernels(Ms, layout, algo: str = "msv", device=None, residues: int = 0) -> list:
    """Per model, the overrides for :func:`clalign.hmm.engine.run_raw`: ``layout``'s (the
    shared database layout, :func:`clalign.hmm.engine.shared_layout`) plus ``H`` (from the
    chosen program set) and ``values`` (the validated template values). ``residues``: the
    database size, which prices the padded states."""
    rt = Runtime.get(device)
    Ms = [int(M) for M in Ms]
    if not Ms or use_striped(rt.caps):
        return [dict(ov) for ov in layout] if layout else [{} for _ in Ms]
    caps = rt.caps
    rate = _rate(caps)
    build = BUILD_SECONDS["gpu" if caps.is_gpu else "cpu"]
    memo: dict = {}

    def values(M, ov, H=None):
        key = (M, tuple(sorted(ov.items())), H)
        if key not in memo:
            memo[key] = choose_kernel(M, algo, caps, {**ov, **({"H": H} if H else {})})
        return memo[key]

    groups: dict = {}                      # (S, layout overrides) -> {exact H: seconds per unit of H}
    exact = []
    for M, ov in zip(Ms, layout):
        v = values(M, ov)
        g = (v["S"], tuple(sorted(ov.items())))
        # seconds per unit of H of one model: P states over the whole database
        per_h = (32 // v["LANE"]) * v["WAVE"] // v["S"] * residues / rate
        w = groups.setdefault(g, ({}, M))[0]
        w[v["H"]] = w.get(v["H"], 0.0) + per_h
        exact.append((g, v["H"]))
    chosen = {g: _best_set(sorted(weight), weight, lambda H: build) for g, (weight, _) in groups.items()}
    out = []
    for M, ov, (g, h) in zip(Ms, layout, exact):
        H = chosen[g][h]
        out.append({**ov, "H": H, "values": values(M, {**ov, "S": g[0]}, H)})
    return out


__all__ = ["plan_kernels", "BUILD_SECONDS"]
