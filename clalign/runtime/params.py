"""Template parameters: one definition each, validated before any template is rendered.

A kernel family declares its parameters once as a :class:`ParamSet`. Every value that
reaches a Mako template passes :meth:`ParamSet.validate`, which admits only ints, bools
and named choices inside their documented range, so a bad value fails in Python with a
clear message instead of producing odd OpenCL C.

Values are chosen in one place per family, in this order (see :func:`choose`): what the
device limits allow, then the tuning values (:mod:`clalign.runtime.tuning`: built-in table,
then the user tuning database), then the caller's override. Cross-parameter rules and the
local memory a set of values needs are functions of the ParamSet (:meth:`ParamSet.problems`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..errors import ParameterError


@dataclass(frozen=True)
class Param:
    """One template parameter.

    ``kind`` is ``"int"``, ``"bool"``, ``"choice"`` or ``"real"``. Ints may be bounded by
    ``lo``/``hi`` (inclusive) and/or restricted to ``values``; choices are restricted to
    ``values`` (strings). A ``by_size`` int may also be a ladder ``((limit, v), ..., (None, v))``:
    ``v`` for problem sizes up to ``limit`` (e.g. model length), the last step for the rest.
    Reals (host-side rates, never rendered into a template) are bounded by ``lo``/``hi``.
    ``doc`` states the meaning and the legal range in words.
    """

    name: str
    kind: str
    doc: str
    values: tuple = ()
    lo: int | None = None
    hi: int | None = None
    default: Any = None
    by_size: bool = False

    @classmethod
    def int(cls, name, doc, lo=None, hi=None, values=(), default=None, by_size=False):
        return cls(name, "int", doc, tuple(values), lo, hi, default, by_size)

    @classmethod
    def real(cls, name, doc, lo=None, hi=None, default=None):
        return cls(name, "real", doc, (), lo, hi, default)

    @classmethod
    def bool(cls, name, doc, default=None):
        return cls(name, "bool", doc, (), None, None, default)

    @classmethod
    def choice(cls, name, doc, values, default=None):
        return cls(name, "choice", doc, tuple(values), None, None, default)

    def check(self, value, family="") -> Any:
        where = f"{family}.{self.name}" if family else self.name
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if type(value) is int and value in (0, 1):
                return bool(value)
            raise ParameterError(f"{where} must be a bool, got {value!r}")
        if self.kind == "int" and self.by_size and isinstance(value, (list, tuple)):
            steps = []
            for i, step in enumerate(value):
                if not (isinstance(step, (list, tuple)) and len(step) == 2):
                    raise ParameterError(f"{where}: a ladder step must be (limit, value), got {step!r}")
                last = i == len(value) - 1
                if (step[0] is None) != last:
                    raise ParameterError(f"{where}: only the last ladder step has limit None, got {value!r}")
                lim = None if last else Param.int(self.name, "limit", lo=1).check(step[0], family)
                steps.append((lim, Param(self.name, "int", self.doc, self.values, self.lo, self.hi).check(step[1], family)))
            if not steps:
                raise ParameterError(f"{where}: an empty ladder")
            return tuple(steps)
        if self.kind == "real":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParameterError(f"{where} must be a number, got {value!r}")
            v = float(value)
            if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
                raise ParameterError(f"{where}={v} is outside {self.lo}..{self.hi} ({self.doc})")
            return v
        if self.kind == "int":
            # bool is an int subclass; numpy ints are accepted and converted.
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                raise ParameterError(f"{where} must be an int, got {value!r}")
            v = int(value.__index__())
            if self.values and v not in self.values:
                raise ParameterError(f"{where}={v} is not one of {list(self.values)} ({self.doc})")
            if self.lo is not None and v < self.lo:
                raise ParameterError(f"{where}={v} is below its minimum {self.lo} ({self.doc})")
            if self.hi is not None and v > self.hi:
                raise ParameterError(f"{where}={v} is above its maximum {self.hi} ({self.doc})")
            return v
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.values:
                raise ParameterError(f"{where} must be one of {list(self.values)}, got {value!r}")
            return value
        raise ParameterError(f"{where}: unknown parameter kind {self.kind!r}")

    def describe(self) -> str:
        if self.kind == "int":
            rng = (f"one of {list(self.values)}" if self.values else
                   f"{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi}")
            if self.by_size:
                rng += ", or ((limit, value), ..., (None, value)) by size"
        elif self.kind == "choice":
            rng = " | ".join(self.values)
        elif self.kind == "real":
            rng = f"{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi} (real)"
        else:
            rng = "true | false"
        return f"{self.name} ({rng}): {self.doc}"


# Parameters every template receives: the SIMD variant and what the device can do.
SIMD_PARAMS = (
    Param.choice("SIMD", "packed-SIMD implementation: inline PTX (NVIDIA) or portable SWAR bit tricks",
                 ("ptx", "swar")),
    Param.bool("PTX_S16X2", "sm_90+ packed 16-bit add.s16x2/max.s16x2[.relu] (DPX-fusable) available; "
                            "only true together with SIMD=ptx"),
    Param.bool("PTX_SHFL", "PTX shfl.sync usable for lane exchange (NVIDIA); else local memory"),
)


_log = logging.getLogger("clalign.params")


@dataclass(frozen=True)
class ParamSet:
    """The parameters of one kernel family (e.g. ``sw_intertask``, ``msv_slane``).

    ``constraints``: functions ``f(values) -> str | None`` of a full set of values, naming what
    a combination breaks (the cross-parameter rules, CLBlast's ``SetConstraints``);
    ``local_memory``: ``f(values) -> bytes`` of local memory one work-group needs (CLBlast's
    ``ComputeLocalMemSize``). Engines, the tuner and the tests all ask :meth:`problems`.
    """

    family: str
    params: tuple = field(default_factory=tuple)
    with_simd: bool = True
    constraints: tuple = ()
    local_memory: Callable | None = None

    def __post_init__(self):
        names = [p.name for p in self.all()]
        if len(names) != len(set(names)):
            raise ParameterError(f"{self.family}: duplicate parameter names {names}")

    def all(self) -> tuple:
        return (SIMD_PARAMS if self.with_simd else ()) + tuple(self.params)

    def names(self) -> list:
        return [p.name for p in self.all()]

    def validate(self, values: Mapping[str, Any]) -> dict:
        """Return a checked copy of ``values``; unknown or missing names raise."""
        known = {p.name: p for p in self.all()}
        extra = set(values) - set(known)
        if extra:
            raise ParameterError(f"{self.family}: unknown parameter(s) {sorted(extra)}; "
                                 f"known: {sorted(known)}")
        out = {}
        for name, p in known.items():
            if name in values and values[name] is not None:
                out[name] = p.check(values[name], self.family)
            elif p.default is not None:
                out[name] = p.check(p.default, self.family)
            else:
                raise ParameterError(f"{self.family}: parameter {name} is required ({p.describe()})")
        if out.get("PTX_S16X2") and out.get("SIMD") != "ptx":
            raise ParameterError(f"{self.family}: PTX_S16X2 needs SIMD=ptx")
        if out.get("PTX_SHFL") and out.get("SIMD") != "ptx":
            raise ParameterError(f"{self.family}: PTX_SHFL needs SIMD=ptx")
        return out

    def doc(self) -> str:
        return "\n".join(p.describe() for p in self.all())

    def check_partial(self, values: Mapping[str, Any]) -> dict:
        """Check the given names only (a tuning entry sets some parameters, not all)."""
        known = {p.name: p for p in self.all()}
        extra = set(values) - set(known)
        if extra:
            raise ParameterError(f"{self.family}: unknown parameter(s) {sorted(extra)}; known: {sorted(known)}")
        return {k: known[k].check(v, self.family) for k, v in values.items()}

    def problems(self, values: Mapping[str, Any], caps=None) -> list:
        """Why ``values`` cannot run (empty: it can): broken constraints, a work-group above the
        device's limit, more local memory than the device has."""
        out = [msg for f in self.constraints if (msg := f(values))]
        if caps is not None:
            wg = values.get("WG")
            if isinstance(wg, int) and wg > int(caps.max_work_group):
                out.append(f"WG={wg} is above {caps.name}'s work-group limit {caps.max_work_group}")
            if self.local_memory is not None:
                need = int(self.local_memory(values))
                if need > int(caps.local_mem or 0):
                    out.append(f"needs {need} bytes of local memory, {caps.name} has {caps.local_mem}")
        return out


def clamp_work_group(family: str, wg: int, caps, explicit: bool = False, key: str = "WG") -> int:
    """``wg`` limited to the device's work-group maximum: a logged choice for a tuned value, an
    error for one the user asked for (``explicit``)."""
    limit = int(caps.max_work_group)
    if wg <= limit:
        return wg
    if explicit:
        raise ParameterError(f"{key}={wg} is above {caps.name}'s work-group limit {limit}")
    _log.info("%s: %s=%d clamped to %s's work-group limit %d", family, key, wg, caps.name, limit)
    return limit


def choose(paramset: ParamSet, device_values: Mapping[str, Any], tuned: Mapping[str, Any] | None = None,
           override: Mapping[str, Any] | None = None) -> dict:
    """Pick every parameter in one place: device-derived values, then tuning table, then override.

    Later sources win. The result is validated; an override the device cannot honour should be
    rejected by the caller's own capability checks before this point.
    """
    merged: dict = {}
    for src in (device_values, tuned or {}, override or {}):
        for k, v in src.items():
            if v is not None:
                merged[k] = v
    return paramset.validate(merged)


def simd_values(caps, simd: str | None = None) -> dict:
    """The SIMD_PARAMS values for a probed device; ``simd`` forces ``"ptx"`` or ``"swar"``."""
    variant = simd or caps.simd_variant
    if variant == "ptx" and not caps.ptx:
        raise ParameterError(f"SIMD=ptx requested but inline PTX does not build on {caps.name}")
    ptx = variant == "ptx"
    return {"SIMD": variant, "PTX_S16X2": bool(ptx and caps.ptx_s16x2), "PTX_SHFL": bool(ptx and caps.ptx_shfl)}


def iter_docs(paramsets: Iterable[ParamSet]) -> str:
    return "\n\n".join(f"[{ps.family}]\n{ps.doc()}" for ps in paramsets)
