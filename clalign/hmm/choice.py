"""Which engine runs hmmsearch's MSV filter: the OpenCL kernels or pyhmmer's own (SSE) filter.

The choice compares measured filter rates (GCUPS = model states x residues per second):
the OpenCL S-lane kernels' rate per compute unit of the device kind, and pyhmmer's
``msv_filter`` per host core, times the cores the search may use. The figures are
measurements recorded in the tuning table (family ``hmm_filter.rate``; docs/perf/hmmsearch.md
says where each comes from), so the choice costs no run-time benchmark, and the automatic
choice is remembered per OpenCL setup so that later runs need not load OpenCL to make it: on this team's 2-core
PoCL machine the striped CPU kernel runs ~9 GCUPS per core inside a search against pyhmmer's
~25 GCUPS per thread on a quiet machine (the S-lane kernel it replaced on CPUs: ~0.5), on the
H100 host 2-10 TCUPS against 16 x ~25 GCUPS. Where pyhmmer's filter is
faster (no GPU), the whole search runs in pyhmmer (:mod:`clalign.hmm.cpusearch`) and the
summary line says so.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

#: The engines ``--filter-engine`` accepts.
ENGINES = ("auto", "opencl", "pyhmmer")

# GCUPS per compute unit of the OpenCL MSV filter, and per host thread of pyhmmer's msv_filter.
# 2026-11-23, this team's machine (PoCL 5, 2 cores of an AMD EPYC, haswell target): MSV
# kernels 0.96-1.12 GCUPS on the whole device at M = 178-400 (20,000 synthetic proteins);
# pyhmmer 0.12.3 msv_filter 24.3-25.9 GCUPS on one thread (same data and models).
# H100 (132 SMs): MSV 2.3-7.1 TCUPS at M = 100-800 (docs/perf/hmm.md, issue 15), ~17-54 per SM.
# CPU devices, striped kernel (kernels/hmm_striped.mako, 2026-11-23, same machine, load 3-7):
# 17-20 GCUPS on the 2 CUs inside `clalign hmmsearch` (14 bundled HMMs x 22,100 proteins, sharing
# the cores with pyhmmer's post-filter stages), 22-40 GCUPS alone (1.0-1.8x pyhmmer per core in
# the same rounds). End to end the pyhmmer path still wins on 2 cores (OpenCL's fixed costs:
# medians 3.09 s against 3.99 s, docs/perf/hmmsearch.md), which these figures keep choosing.
def _tuning():
    from ..runtime import Param, ParamSet
    from ..runtime.tuning import Entry

    params = ParamSet("hmm_filter.rate", (
        Param.real("DEVICE_GCUPS_PER_CU", "OpenCL MSV filter GCUPS per compute unit", lo=0.0),
        Param.real("PYHMMER_GCUPS_PER_CORE", "pyhmmer msv_filter GCUPS per host thread", lo=0.0),
    ), with_simd=False)
    return {"hmm_filter.rate": (params, [
        Entry("default", {}, {"DEVICE_GCUPS_PER_CU": 15.0, "PYHMMER_GCUPS_PER_CORE": 25.0},
              source="docs/perf/hmmsearch.md"),
        Entry("vendor", {"is_cpu": True}, {"DEVICE_GCUPS_PER_CU": 9.0},
              source="striped CPU kernel, docs/perf/hmmsearch.md (issue 15, 2026-11-23)")])}


def __getattr__(name):
    """``TUNING`` is built on first use (clalign.runtime.tuning.load_builtin): this module stays
    importable without pyopencl."""
    if name == "TUNING":
        return _tuning()
    raise AttributeError(name)


@dataclass(frozen=True)
class FilterChoice:
    engine: str            # "opencl" or "pyhmmer"
    reason: str            # one line for the summary


class _KindCaps:
    """The device facts the tuning lookup needs, read without creating a context."""

    def __init__(self, dev):
        import pyopencl as cl

        self.is_cpu = bool(dev.type & cl.device_type.CPU)
        self.is_gpu = bool(dev.type & cl.device_type.GPU)
        self.name = str(dev.name)
        self.compute_units = int(dev.max_compute_units)
        self.compute_capability = None

    def __getattr__(self, name):          # any other capability: unknown, matches no entry
        return None


def _cache_file() -> str:
    """Beside the program cache (``CLALIGN_CACHE_DIR`` or the user cache folder), like the
    SW kernels' stored rates: one place for everything clalign remembers per machine."""
    from ..cachedir import default_root

    return os.path.join(default_root(), "hmm_filter_choice.json")


def _setup_key(device, threads: int) -> str:
    """What the choice depends on, read without loading OpenCL: the installed OpenCL drivers
    (ICD files and the variables that redirect them), the device asked for, the threads."""
    vendors = os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors"
    try:
        icds = sorted((f, os.stat(os.path.join(vendors, f)).st_mtime_ns) for f in os.listdir(vendors))
    except OSError:
        icds = []
    env = {k: os.environ.get(k) for k in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS", "POCL_DEVICES",
                                          "CLALIGN_DEVICE", "PYOPENCL_CTX")}
    return json.dumps([icds, env, str(device), int(threads)], sort_keys=True)


def remembered(device, threads: int) -> str | None:
    """The engine the automatic choice remembers for this setup, None if none is remembered
    (read without loading OpenCL: the CLI starts the device's context early when it is "opencl")."""
    hit = _cached(_setup_key(device, threads))
    return None if hit is None else hit.engine


def _cached(key: str):
    try:
        with open(_cache_file()) as fh:
            entry = json.load(fh).get(key)
        return FilterChoice(**entry) if entry else None
    except (OSError, ValueError, TypeError):
        return None


def _remember(key: str, choice: FilterChoice) -> None:
    """Keep the automatic choice for this setup (saves loading OpenCL, ~0.2 s, on later runs)."""
    path = _cache_file()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path) as fh:
                table = json.load(fh)
        except (OSError, ValueError):
            table = {}
        table[key] = asdict(choice)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            json.dump(table, fh)
        os.replace(tmp, path)
    except OSError:
        pass                        # a read-only home only costs the next run the same 0.2 s


def choose_filter(engine: str, device, threads: int) -> FilterChoice:
    """The filter engine for ``--filter-engine engine`` on ``device`` with ``threads`` host cores.

    The automatic choice is remembered per setup (:func:`_setup_key`) in the user's cache."""
    if engine not in ENGINES:
        raise ValueError(f"filter engine must be one of {ENGINES}, not {engine!r}")
    if engine == "pyhmmer":
        return FilterChoice("pyhmmer", "pyhmmer's SSE filter (--filter-engine pyhmmer)")
    if engine == "auto":
        key = _setup_key(device, threads)
        hit = _cached(key)
        if hit is None:
            hit = _measure_choice(engine, device, threads)
            _remember(key, hit)
        return hit
    return _measure_choice(engine, device, threads)


def _measure_choice(engine: str, device, threads: int) -> FilterChoice:
    from ..runtime import tuning

    try:
        from ..runtime.device import device_label, select_devices

        dev = select_devices(device)[0]
    except Exception as exc:                        # no OpenCL driver or device
        if engine == "opencl":
            raise
        return FilterChoice("pyhmmer", f"pyhmmer's SSE filter on {threads} thread(s): no OpenCL device ({exc})")
    if engine == "opencl":
        return FilterChoice("opencl", f"OpenCL MSV filter on {device_label(dev)} (--filter-engine opencl)")
    caps = _KindCaps(dev)
    rate = tuning.lookup("hmm_filter.rate", caps)
    dev_rate = rate["DEVICE_GCUPS_PER_CU"] * caps.compute_units
    cpu_rate = rate["PYHMMER_GCUPS_PER_CORE"] * max(1, int(threads))
    if dev_rate > cpu_rate:
        return FilterChoice("opencl", f"OpenCL MSV filter on {device_label(dev)} (~{dev_rate:.0f} GCUPS "
                                      f"against pyhmmer's ~{cpu_rate:.0f} on {threads} thread(s))")
    return FilterChoice("pyhmmer", f"pyhmmer's SSE filter on {threads} thread(s) (~{cpu_rate:.0f} GCUPS against "
                                   f"~{dev_rate:.0f} for OpenCL on {device_label(dev)})")
