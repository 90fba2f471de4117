"""One OpenCL runtime for every engine: device choice, capability probe, template
rendering, an in-memory program cache and the persistent binary cache (:mod:`.cache`).

Typical use inside an engine::

    rt = Runtime.get(device)                 # device: None, "P:D", or a pyopencl.Device
    values = choose(MY_PARAMS, {**simd_values(rt.caps), ...derived...}, tuned, override)
    prg = rt.program("sw_intertask.mako", MY_PARAMS, values)
    prg.sw_kernel(rt.queue, gsize, lsize, ...)
"""
from __future__ import annotations

import hashlib
import tempfile
import threading
import time
from pathlib import Path

import pyopencl as cl

from ..errors import KernelBuildError
from . import cache as _cache
from .. import cl_early as early
from .device import all_devices, device_label, select_devices
from .params import Param, ParamSet, SIMD_PARAMS, choose, simd_values
from .probe import Capabilities, probe
from .render import dump_source, kernel_dir, render

__all__ = ["Runtime", "Param", "ParamSet", "SIMD_PARAMS", "choose", "simd_values", "Capabilities",
           "probe", "select_devices", "all_devices", "device_label", "render", "kernel_dir"]


_SOURCES: dict = {}
_SOURCES_MAX = 256


def _source(template: str, paramset: ParamSet, values: dict, extra_dirs=()) -> str:
    """OpenCL source of ``kernels/<template>`` for ``values``, validated before rendering.

    Rendered once per process and values: engines ask for their program on every pass, and
    rendering the tuned SW kernel (3,000 lines) took ~30 ms each time, ~0.6 s of a 20-query
    ``clalign sw`` run on the H100 (docs/perf/cache.md)."""
    checked = paramset.validate(values)
    key = (template, paramset.family, tuple(sorted(checked.items())), tuple(str(d) for d in extra_dirs))
    src = _SOURCES.get(key)
    if src is None:
        src = render(template, checked, extra_dirs)
        if len(_SOURCES) >= _SOURCES_MAX:
            _SOURCES.clear()
        _SOURCES[key] = src
    return src


class Runtime:
    """A context and a profiling-enabled in-order queue on one device, plus its probe.

    ``Runtime.get(device)`` returns one shared instance per device; engines call it rather
    than building contexts of their own, so programs are built once per process.
    """

    _instances: dict = {}
    _lock = threading.Lock()

    def __init__(self, device):
        self.device = device
        self.ctx = early.take(device) or cl.Context([device])   # early: made during the imports
        self.caps: Capabilities = probe(device, self.ctx)      # its compile probes use this context
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._programs: dict = {}
        self._building: dict = {}          # key -> Event of a build in flight (another thread)
        self._build_lock = threading.Lock()
        self.build_seconds = 0.0          # summed over threads, source builds only
        self.builds = 0                   # programs built from source
        self.loads = 0                    # programs loaded from the persistent cache

    @classmethod
    def get(cls, device=None) -> "Runtime":
        dev = select_devices(device)[0]
        with cls._lock:
            rt = cls._instances.get(dev.int_ptr)
            if rt is None:
                rt = cls._instances[dev.int_ptr] = cls(dev)
            return rt

    @classmethod
    def all(cls, device=None) -> list:
        """One Runtime per selected device (for ``--device 0:0,1:0`` splits)."""
        out = []
        for dev in select_devices(device):
            out.append(cls.get(dev))
        return out

    def new_queue(self):
        """An extra in-order profiling queue on this context (to overlap copies and kernels)."""
        return cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)

    @property
    def label(self) -> str:
        return device_label(self.device)

    def program(self, template: str, paramset: ParamSet, values: dict, options=(), extra_dirs=()) -> cl.Program:
        """Render, build and cache ``kernels/<template>`` for ``values`` (validated here)."""
        return self.build_source(_source(template, paramset, values, extra_dirs), options, name=template)

    def is_ready(self, template: str, paramset: ParamSet, values: dict, options=(), extra_dirs=()) -> bool:
        """Whether :meth:`program` would return without compiling: the program is in this
        process or has an entry in the persistent cache. Lets an engine prefer a variant that
        builds fast on a cold cache (on the H100 the SW kernel's four-column body with C cells took
        22.5 s to build, its UNROLL=1 form 0.9 s, with PTX cells 1 s: docs/perf/cache.md)."""
        src = _source(template, paramset, values, extra_dirs)
        opts = tuple(options)
        with self._build_lock:
            if (hashlib.sha256(src.encode()).hexdigest(), opts) in self._programs:
                return True
        store = _cache.get_cache()
        return store.enabled and store.path(store.key(src, opts, self.device), self.device).is_file()

    def build_source(self, src: str, options=(), name="kernel") -> cl.Program:
        """Build (or take from the caches) one program. Thread-safe: a second thread asking for
        a program that is being built waits for that build instead of starting its own.

        Order: this process's programs, then the persistent binary cache, then a source build
        (whose binary is then stored)."""
        opts = tuple(options)
        key = (hashlib.sha256(src.encode()).hexdigest(), opts)
        while True:
            with self._build_lock:
                prg = self._programs.get(key)
                if prg is not None:
                    return prg
                ev = self._building.get(key)
                if ev is None:
                    ev = self._building[key] = threading.Event()
                    break
            ev.wait()        # built by another thread; if that build failed, build here for the error
        try:
            prg = self._load_or_build(src, opts, name)
        finally:
            with self._build_lock:
                self._building.pop(key, None)
            ev.set()
        with self._build_lock:
            self._programs[key] = prg
        return prg

    def _load_or_build(self, src: str, opts: tuple, name: str) -> cl.Program:
        store = _cache.get_cache()
        ckey = store.key(src, opts, self.device) if store.enabled else None
        if ckey is not None:
            prg = store.load(self.ctx, self.device, ckey, opts)
            if prg is not None:
                with self._build_lock:
                    self.loads += 1
                return prg
        t0 = time.perf_counter()
        try:
            prg = cl.Program(self.ctx, src).build(options=list(opts))
        except (cl.Error, RuntimeError) as exc:
            path = dump_source(name, src, Path(tempfile.gettempdir()) / "clalign-kernels")
            # pyopencl's exception text carries the compiler's build log.
            raise KernelBuildError(f"OpenCL build of {name} failed on {self.caps.name}", str(exc), path) from None
        dt = time.perf_counter() - t0
        with self._build_lock:
            self.build_seconds += dt
            self.builds += 1
        store.count(builds=1, build_seconds=dt)
        if ckey is not None:
            store.store(self.device, ckey, prg, {"template": name, "options": list(opts),
                                                 "build_seconds": round(dt, 3), "lines": src.count("\n") + 1})
        return prg

    def build_note(self) -> str:
        """For summary lines: ', N kernel builds (X s summed over threads), M kernels from the
        cache' ('' when this runtime neither built nor loaded a program)."""
        parts = []
        if self.builds:
            parts.append(f"{self.builds} kernel builds ({self.build_seconds:.2f} s summed over threads)")
        if self.loads:
            parts.append(f"{self.loads} kernels from the cache")
        return "".join(", " + p for p in parts)

    def prebuild(self, items, threads: int = 8) -> list:
        """Start building programs in background threads; returns their futures.

        ``items``: (template, paramset, values) triples; each is rendered here (in order) and
        built by a pool of ``threads`` (pyopencl releases the GIL while compiling). Whether the
        builds overlap is the driver's business: NVIDIA's serialises them (two distinct 25 s
        builds in threads took 48 s on the H100, docs/perf/cache.md), so there the pool only
        overlaps builds with the caller's host work. A later :meth:`program` call for one of
        them waits for its build rather than starting another."""
        from concurrent.futures import ThreadPoolExecutor

        seen, srcs = set(), []
        for template, paramset, values in items:
            src = _source(template, paramset, values)
            if src not in seen:
                seen.add(src)
                srcs.append((src, template))
        if not srcs:
            return []
        pool = ThreadPoolExecutor(max_workers=max(1, min(int(threads), len(srcs))),
                                  thread_name_prefix="clalign-build")
        futs = [pool.submit(self.build_source, src, (), name) for src, name in srcs]
        pool.shutdown(wait=False)
        return futs
