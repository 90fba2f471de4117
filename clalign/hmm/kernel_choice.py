"""Which kernel runs a model: the striped CPU kernel (:func:`use_striped`, :func:`choose_striped`)
or an S-lane kernel: LANE, S, H (CUDAMPF++ Eq. 2-5), WG_WAVES, PROF_LOCAL.

The tuning table entries (per algorithm and device kind) are declared here (``TUNING``); the
choice follows the order device limits -> tuning table -> caller's overrides
(:func:`clalign.runtime.choose`).
"""
from __future__ import annotations

import math

from ..errors import ParameterError
from ..runtime import Param, ParamSet, choose, simd_values, tuning
from ..runtime.tuning import Entry
from .params import H_LIMIT, HMM_SLANE, HMM_STRIPED, S_VALUES, geometry, profile_words, striped_q

#: Knobs of the kernel choice (not rendered): Hmax of Eq. 2-5 per lane width, the largest S.
CHOICE_PARAMS = (
    Param.int("HMAX", "LANE 8: largest H a kernel is picked with before S is lowered (CUDAMPF++ Eq. 2-5)",
              lo=1, hi=H_LIMIT, default=16, by_size=True),
    Param.int("HMAX16", "LANE 16: as HMAX (default: HMAX); a ladder ((M_max, Hmax), ..., (None, Hmax)) "
                        "picks Hmax by model length", lo=1, hi=H_LIMIT, by_size=True),
    Param.int("SMAX", "LANE 8: largest S Eq. 2-5 may pick (default: no limit)", values=S_VALUES),
    Param.int("SMAX16", "LANE 16: largest S Eq. 2-5 may pick (default: no limit)", values=S_VALUES),
)


def _family(algo: str) -> ParamSet:
    # S and H follow from Eq. 2-5 per model; ALGO is the family itself.
    tunable = tuple(p for p in HMM_SLANE.params if p.name not in ("ALGO", "S", "H"))
    return ParamSet(f"hmm_slane.{algo}", tunable + CHOICE_PARAMS, constraints=(_lane_simd,))


def _lane_simd(v) -> str | None:
    """A tuned LANE 16 applies only with native 16x2 ops (PTX_S16X2; choose_kernel takes LANE
    from the table only then), so a table entry pairing it with PTX_S16X2=false is an error."""
    if v.get("LANE") == 16 and v.get("PTX_S16X2") is False:
        return "hmm_slane: a tuned LANE=16 needs PTX_S16X2 (choose_kernel ignores it otherwise)"
    return None


#: Built-in tuning table (loaded by clalign.runtime.tuning.load_builtin): Hmax and friends per
#: algorithm and device kind. The defaults keep the unrolled row within the registers of a
#: 32-bit-register GPU thread; the measurements behind device entries: docs/perf/tuning.md,
#: which points to the runs of docs/perf/hmm.md.
TUNING = {
    "hmm_slane.msv": (_family("msv"), [
        Entry("default", {}, {"HMAX": 16, "WG_WAVES": 2}),
        Entry("vendor", {"is_cpu": True}, {"HMAX": 32, "WG_WAVES": 1}),
        Entry("vendor", {"is_nvidia": True}, {"SIMD": "swar", "PTX_SHFL": False, "PTX_S16X2": False},
              source="H100 2026-11-22, docs/perf/hmm.md runs 1-2"),
        Entry("architecture", {"ptx_s16x2": True},
              {"LANE": 16, "SIMD": "ptx", "PTX_S16X2": True, "PTX_SHFL": True, "RG": 16, "WG_WAVES": 4,
               "HMAX16": 64, "SMAX16": 32},
              source="H100 docs/perf/hmm.md runs 3, 5, 7; RG/WG_WAVES/HMAX16/SMAX16: clalign tune "
                     "2026-11-23, docs/perf/tuning.md"),
    ]),
    "hmm_slane.ssv": (_family("ssv"), [
        Entry("default", {}, {"HMAX": 16, "WG_WAVES": 2}),
        Entry("vendor", {"is_cpu": True}, {"HMAX": 32, "WG_WAVES": 1}),
        Entry("architecture", {"ptx_s16x2": True},
              {"LANE": 16, "RG": 16, "HMAX16": ((256, 64), (None, 32)), "SMAX16": 32},
              source="H100 docs/perf/hmm.md runs 3, 5, 7"),
    ]),
}


def _prof_local_bytes(algo: str, S: int, H: int, wave: int, lane: int, wg_waves: int, shfl: bool) -> int:
    """Local memory of a kernel with PROF_LOCAL: the profile copy (:func:`profile_words`, the
    same numbers the template is given) plus its exchange buffers."""
    g = geometry(S, wave, lane)
    words = profile_words(S, H, wave, lane, True)["LWORDS"]
    xch = 0 if (shfl or g["L"] == 1) else (3 if algo == "msv" else 2) * wave * wg_waves
    return 4 * (words + xch)


def choose_kernel(M: int, algo: str, caps, override=None, simd=None) -> dict:
    """Template values for a model of M states: LANE, S, then H (CUDAMPF++ Eq. 2-5), WG_WAVES,
    PROF_LOCAL.

    ``override`` may fix any template value (ALGO/WAVE/LANE/S/H/RG/WG_WAVES/PROF_LOCAL/SIMD/
    PTX_SHFL...), ``HMAX`` and ``SMAX``. LANE comes from the tuning table only where the chosen
    SIMD variant has native 16-bit ops (``PTX_S16X2``); elsewhere it defaults to 8 (HMMER's
    bytes). ``HMAX`` (Hmax of Eq. 2-5) is the tuning value ``HMAX`` for LANE 8 and ``HMAX16``
    for 16; ``SMAX``/``SMAX16`` (optional) is the largest S that Eq. 2-5 may pick.
    """
    override = dict(override or {})
    tuned = tuning.lookup(f"hmm_slane.{algo}", caps)
    hmax8, hmax16 = tuned.pop("HMAX", 16), tuned.pop("HMAX16", None)
    smax8, smax16 = tuned.pop("SMAX", None), tuned.pop("SMAX16", None)
    dev = simd_values(caps, simd)
    eff = {**dev, **({} if simd else {k: tuned[k] for k in dev if k in tuned}),
           **{k: override[k] for k in dev if k in override}}
    lane = override.get("LANE")
    if lane is None:
        lane = tuned.get("LANE", 8) if eff["PTX_S16X2"] else 8
    lane = int(lane)
    if lane not in (8, 16):
        raise ParameterError(f"hmm_slane: LANE={lane} is not 8 or 16")
    tuned.pop("LANE", None)
    hmax = override.pop("HMAX", hmax16 if (lane == 16 and hmax16 is not None) else hmax8)
    if isinstance(hmax, (list, tuple)):      # ((M_max, Hmax), ...): Hmax by model length
        hmax = next(h for m, h in hmax if m is None or M <= m)
    hmax = int(hmax)
    smax = override.pop("SMAX", smax16 if lane == 16 else smax8)
    wave = int(override.get("WAVE", tuned.get("WAVE", 32)))
    NL = 32 // lane
    S = override.get("S")
    if S is None:
        S = 1
        for s in sorted((s for s in S_VALUES if s <= NL * wave and (smax is None or s <= int(smax))),
                        reverse=True):
            if geometry(s, wave, lane)["P"] * hmax >= M:
                S = s
                break
    S = int(S)
    if S not in S_VALUES or S > NL * wave:
        raise ParameterError(f"hmm_slane: S={S} is not one of {[s for s in S_VALUES if s <= NL * wave]} "
                             f"(LANE={lane}, WAVE={wave})")
    P = geometry(S, wave, lane)["P"]
    H = override.get("H")
    H = int(H) if H is not None else max(1, math.ceil(M / P))
    if P * H < M:
        raise ParameterError(f"hmm_slane: S={S}, H={H} cover {P * H} states, the model has {M}")
    if H > H_LIMIT:
        raise ParameterError(f"model of {M} states needs H={H} > {H_LIMIT} even with S=1")
    if wave != caps.warp:
        # shfl.sync exchanges lanes inside one 32-wide NVIDIA warp: a wavefront of another size
        # (or any non-NVIDIA device) uses the local-memory exchange with barriers.
        if override.get("PTX_SHFL"):
            raise ParameterError(f"hmm_slane: PTX_SHFL needs WAVE={caps.warp} (the device's warp), got WAVE={wave}")
        dev["PTX_SHFL"] = False
        override["PTX_SHFL"] = False
    values = {"ALGO": algo, "WAVE": wave, "LANE": lane, "S": S, "H": H}
    override.update({"S": S, "H": H, "LANE": lane})
    if simd:                     # an explicit variant beats the tuning table
        override.update({k: v for k, v in dev.items() if k not in override})
    pre = choose(HMM_SLANE, {**dev, **values, "PROF_LOCAL": False}, tuned, override)
    need = _prof_local_bytes(algo, S, H, pre["WAVE"], lane, pre["WG_WAVES"], pre["PTX_SHFL"])
    fits = need <= min(int(caps.local_mem or 0), 48 * 1024)
    want = override.get("PROF_LOCAL", tuned.get("PROF_LOCAL", fits))
    if want and not fits:
        if override.get("PROF_LOCAL"):
            raise ParameterError(f"hmm_slane: PROF_LOCAL needs {need} bytes of local memory, "
                                 f"{caps.name} allows {min(int(caps.local_mem or 0), 48 * 1024)}")
        want = False
    pre["PROF_LOCAL"] = bool(want)
    return HMM_SLANE.validate(pre)


#: Template values only the S-lane kernels take: a caller naming one asks for them.
_SLANE_ONLY = {p.name for p in HMM_SLANE.all()} - {"ALGO"} | {"HMAX", "SMAX", "simd", "split"}


def use_striped(caps, override=None) -> bool:
    """Whether the striped CPU kernel (kernels/hmm_striped.mako) runs: ``kernel="striped"`` or
    ``"slane"`` in ``override`` decides; else CPU devices whose compiler takes Clang vectors
    (PoCL; the kernel uses Clang's vector builtins) use it unless the caller fixes an S-lane
    template value (S, H, LANE, WG_WAVES...). Why on CPUs: PoCL turns its byte vectors into
    SSE/AVX2 instructions; the S-lane kernels' 32-bit words leave them idle (this team's
    2-core PoCL machine: docs/perf/hmmsearch.md)."""
    override = override or {}
    kind = override.get("kernel")
    if kind is not None:
        if kind not in ("striped", "slane"):
            raise ParameterError(f"hmm kernel={kind!r}: not 'striped' or 'slane'")
        return kind == "striped"
    return bool(caps.is_cpu) and bool(caps.clang_vectors) and not (_SLANE_ONLY & set(override))


def choose_striped(algo: str, caps, override=None, M: int | None = None) -> dict:
    """Template values of the striped kernel: VEC 32 (one AVX2 register of bytes) where the
    device compiles Clang vectors (PoCL), else 16; WG 1; for SSV on a model of M states
    QC = :func:`striped_q` (a build per Q, the row unrolled: 1.5-2.7x the scratch-row kernel
    on this team's PoCL machine, docs/perf/hmmsearch.md); all overridable (``VEC``, ``WG``,
    ``QC``; QC 0 = the one build whose Q is a run-time argument)."""
    override = dict(override or {})
    vec = int(override.get("VEC", 32 if caps.clang_vectors else 16))
    if vec == 32 and not caps.clang_vectors:
        raise ParameterError("hmm_striped: VEC=32 needs Clang vector types (PoCL); this device has none")
    q = striped_q(M, vec) if M else 0
    qc = override.get("QC")
    if qc is None:
        qc = q if algo == "ssv" else 0
    qc = int(qc)
    if qc and (algo != "ssv" or (M and qc != q)):
        raise ParameterError(f"hmm_striped: QC={qc} is not the unrolled SSV build for {algo}, M={M} "
                             f"(that is QC={q if algo == 'ssv' else 0})")
    return HMM_STRIPED.validate({"ALGO": algo, "VEC": vec, "WG": int(override.get("WG", 1)), "QC": qc})
