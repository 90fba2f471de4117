"""Which Smith-Waterman kernels run, with which template values, on one device.

Chosen in one place (device limits -> tuning table -> user override), before any search:
the first-pass family (``intertask`` packed-word lanes or the CPU ``vector`` kernel), its lane
widths and rescoring passes, and the intra-task kernel's values for long subjects.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..runtime import choose, simd_values
from ..runtime.params import clamp_work_group
from ..runtime.tuning import lookup
from .params import (ALPHA, ENGINE_KNOBS, FAMILY, INTERTASK_ONLY, INTRA_FAMILY, INTRA_PARAMS, SW_PARAMS,
                     SWV_PARAMS, VFAMILY, intra_local_bytes)
from .scoring import Scoring


@dataclass
class KernelPlan:
    """The kernels of one device: family, widths, template values and engine knobs."""

    caps: object
    scoring: Scoring
    kernel: str                 # first-pass family: "intertask" | "vector"
    first_width: int
    override: dict              # the user's inter-task template overrides
    simd: dict
    tuned: dict
    base: dict                  # inter-task values of the first pass
    vvalues: dict               # vector kernel values
    ivalues: dict               # intra-task kernel values
    batch_residues: int | None = None
    groups_per_cu: int = 0
    long_threshold: int | None = None   # None: from the measured rates (clalign.sw.threshold)
    pipeline: int = 0                   # queries in flight per device (0: the device's default)

    @property
    def wg(self) -> int:
        return clamp_work_group(FAMILY, self.base["WG"], self.caps, "WG" in self.override)

    @property
    def lanes_per_block(self) -> int:
        """Subjects the first pass pads to one length: a work-item's VEC lanes (vector kernel),
        a work-group's lanes (inter-task: the block holds the device until its longest lane ends)."""
        if self.kernel == "vector":
            return self.vvalues["VEC"]
        return self.wg * self.base["WORDS"] * (32 // self.first_width)

    def widths(self):
        """Lane widths of the passes: the first width the scoring fits, then wider ones."""
        if self.kernel == "vector":
            return [w for w, _ in self.vector_passes()] + [32]
        order = [w for w in (8, 16, 32) if w >= self.first_width]
        return [w for w in order if self.scoring.width_ok(w)]

    def vector_passes(self):
        """[(width, template values)] of the vector kernel's passes: u8 (when asked for and the
        scoring fits 8 bits), then s16 (VEC 16 after a 32-lane u8 pass)."""
        v = self.vvalues
        out = []
        if v["LANE"] == "u8" and self.scoring.width_ok(8):
            out.append((8, dict(v)))
        out.append((16, {**v, "LANE": "s16", "VEC": 16 if v["VEC"] == 32 else v["VEC"]}))
        return out

    def profile_layout(self, width: int, qlen: int) -> str:
        """CUDASW++3.0's rule, with our table sizes: the residue-pair variant while its table for
        the query fits in half the L2 cache, else the plain profile; tuning table and override win."""
        if width == 32:
            return "plain"
        ov = self.override.get("PROFILE") or self.tuned.get("PROFILE")
        if ov:
            return ov
        rows = self.base["ROWS"]
        pair_bytes = ALPHA * ALPHA * 4 * max(1, -(-qlen // rows)) * rows // (2 if width == 8 else 1)
        return "pairs" if pair_bytes <= self.caps.global_cache // 2 else "plain"

    def schedule(self, lengths) -> str:
        """Static when the length spread is tiny (std <= 1% of the mean, CUDASW++3.0), else dynamic."""
        ov = self.override.get("SCHEDULE") or self.tuned.get("SCHEDULE")
        if ov:
            return ov
        if len(lengths) == 0:
            return "static"
        mean = float(np.mean(lengths))
        return "static" if mean == 0 or float(np.std(lengths)) <= 0.01 * mean else "dynamic"

    def values(self, width, layout, sched) -> dict:
        """Inter-task template values of one pass."""
        ov = {**self.override, "KERNEL": "intertask", "WIDTH": width, "PROFILE": layout, "SCHEDULE": sched,
              "WG": self.wg}
        return choose(SW_PARAMS, self.simd, self.tuned, ov)

    def rescore_schedule(self) -> str:
        return self.override.get("SCHEDULE", "static")


def make_plan(caps, scoring: Scoring, overrides: dict) -> KernelPlan:
    """Validate the user's overrides and choose every kernel's values for ``caps``."""
    ov = dict(overrides)
    intertask_asked = any(k in ov for k in INTERTASK_ONLY)
    batch_residues = ov.pop("batch_residues", None)
    groups_per_cu = int(ov.pop("groups_per_cu", 0) or 0)
    long_threshold = ov.pop("long_threshold", None)
    pipeline = ov.pop("pipeline", 0) or 0
    if not isinstance(pipeline, (int, np.integer)) or isinstance(pipeline, bool) or not 0 <= int(pipeline) <= 2:
        raise ParameterError(f"pipeline must be 0 (the device's default), 1 or 2 (got {pipeline!r})")
    if "first_width" in ov:
        ov["WIDTH"] = ov.pop("first_width")
    simd = ov.pop("SIMD", None)
    iov = {k[len("INTRA_"):]: ov.pop(k) for k in list(ov) if k.startswith("INTRA_")}
    known = set(SW_PARAMS.names()) | set(SWV_PARAMS.names())
    unknown = set(ov) - known
    bad_intra = set(iov) - set(INTRA_PARAMS.names())
    if unknown or bad_intra:
        names = sorted(known) + sorted(ENGINE_KNOBS) + [f"INTRA_{n}" for n in INTRA_PARAMS.names()]
        raise ParameterError(f"unknown sw option(s) {sorted(unknown | {f'INTRA_{k}' for k in bad_intra})}; "
                             f"known: {names}")
    override = {k: v for k, v in ov.items() if k in SW_PARAMS.names()}
    simd_vals = simd_values(caps, simd)
    tuned = lookup(FAMILY, caps)
    if simd_vals["SIMD"] != "ptx":
        if override.get("CELL") == "ptx":
            raise ParameterError(f"CELL=ptx needs inline PTX (SIMD=ptx), which {caps.name} does not build")
        if tuned.get("CELL") == "ptx":
            tuned = {**tuned, "CELL": "c"}      # e.g. SIMD=swar forced on an NVIDIA device
    base = choose(SW_PARAMS, simd_vals, tuned, {k: v for k, v in override.items() if k not in ("PROFILE", "SCHEDULE")})
    clamp_work_group(FAMILY, base["WG"], caps, "WG" in override)      # an explicit WG above the limit fails here
    # First-pass family: override, else the intertask kernel when one of its own parameters was
    # overridden (e.g. WIDTH=8), else the tuning table.
    kernel = base["KERNEL"] if ("KERNEL" in ov or not intertask_asked) else "intertask"
    if kernel == "vector" and not scoring.width_ok(16):
        kernel = "intertask"      # scores too wide for 16-bit lanes: the 32-bit pass does all
    vvalues = _vector_values(caps, {k: v for k, v in ov.items() if k in SWV_PARAMS.names()})
    ivalues = choose(INTRA_PARAMS, {}, lookup(INTRA_FAMILY, caps), iov)
    ivalues["WG"] = clamp_work_group(INTRA_FAMILY, ivalues["WG"], caps, "WG" in iov, "INTRA_WG")
    _intra_profile(caps, scoring, ivalues, iov)
    if long_threshold is not None and int(long_threshold) < 0:
        raise ParameterError(f"long_threshold must be >= 0 (got {long_threshold})")
    return KernelPlan(caps, scoring, kernel, base["WIDTH"], override, simd_vals, tuned, base, vvalues, ivalues,
                      batch_residues, groups_per_cu, None if long_threshold is None else int(long_threshold),
                      int(pipeline))


def _intra_profile(caps, scoring, ivalues: dict, iov: dict):
    """PBITS: the narrowest profile lane the matrix fits (an override may only widen it); PROF=local
    only where its slices fit the device's local memory (else global, unless the user asked)."""
    bits = scoring.profile_bits()
    if "PBITS" in iov:
        if ivalues["PBITS"] < bits:
            raise ParameterError(f"INTRA_PBITS={ivalues['PBITS']} cannot hold this matrix's scores "
                                 f"({scoring.smin}..{scoring.smax}): {bits} bits at least")
    else:
        ivalues["PBITS"] = bits
    if ivalues["PROF"] == "local" and intra_local_bytes(ivalues) > caps.local_mem:
        if "PROF" in iov:
            raise ParameterError(f"INTRA_PROF=local needs {intra_local_bytes(ivalues)} bytes of local memory, "
                                 f"{caps.name} has {caps.local_mem}")
        ivalues["PROF"] = "global"


def _vector_values(caps, vov: dict) -> dict:
    vt = lookup(VFAMILY, caps)
    if "LANE" in vov and "VEC" not in vov:
        vt = {**vt, "VEC": 16}        # the tuned VEC belongs to the tuned LANE
    vals = choose(SWV_PARAMS, {}, vt, vov)
    vec = vals["VEC"]
    bad = SWV_PARAMS.problems(vals)
    if bad:
        raise ParameterError(bad[0])
    if vec == 32 and not caps.clang_vectors:
        raise ParameterError(f"sw_vector: VEC=32 needs Clang vector extensions, which {caps.name} "
                             "does not build (probe: clang_vectors); use VEC=16")
    vals["WG"] = clamp_work_group(VFAMILY, vals["WG"], caps, "WG" in vov)
    return vals
