"""A command's OpenCL contexts made while pyopencl is still being imported.

On the H100 host, importing pyopencl takes ~0.17-0.24 s of a command's start, and only then
do the driver's platform list (~0.12 s) and context (~0.12 s) begin: the device's first launch
waits for all three (docs/perf/blastp.md, run L4). :func:`start` makes the contexts of a
``P:D[,P:D...]`` spec on a thread at once, through ctypes and the very ICD loader library that
pyopencl's extension links (found on disk, not imported), so the driver's work overlaps the
import. :func:`take` hands a context to :class:`~clalign.runtime.Runtime` for a pyopencl device
only when it was made for that same device (same ``cl_device_id``); in every other case (no
spec, another loader, an error, a device chosen otherwise) nothing is taken and the runtime
makes its context as before, so errors are still reported by the usual path.

This module imports neither pyopencl nor numpy.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.util
import os
import threading

_CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
_CL_DEVICE_TYPE_CPU, _CL_DEVICE_TYPE_GPU = 2, 4
_CL_DEVICE_TYPE, _CL_DEVICE_MAX_COMPUTE_UNITS = 0x1000, 0x1002
_LOCK = threading.Lock()
_THREAD = None
_MADE: dict = {}        # cl_device_id (int) -> cl_context (int), not yet taken


def loader_path():
    """The ICD loader pyopencl's extension links: the copy a pyopencl wheel carries in
    ``pyopencl/.libs``, else the system's ``libOpenCL.so.1``; None when pyopencl is absent."""
    try:
        spec = importlib.util.find_spec("pyopencl")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for where in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(where, ".libs", "libOpenCL*.so*")))
        if found:
            # the wheel's loader reads this (set by pyopencl's import too) to find the ICDs
            # shipped beside it, and crashes on its first call without it
            os.environ.setdefault("PYOPENCL_HOME", os.path.dirname(os.path.abspath(
                os.path.join(where, "__init__.py"))))
            return found[0]
    return "libOpenCL.so.1"


def parse_index(item: str):
    """``(platform, device)`` of one item of a device spec, "P:D" or "P" (device 0), or None when
    it is not one. The one reading of the syntax: ``runtime.device.parse_spec`` reports the
    None items as errors."""
    parts = item.strip().split(":")
    if not 1 <= len(parts) <= 2 or not all(p.strip().isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]) if len(parts) == 2 else 0


def pick_default(devices):
    """The key ``runtime.device.default_device`` picks among ``devices`` -- ``(key, device type
    bits, compute units)`` in listing order: the GPU with the most compute units (the first of
    equals), else the first CPU, else the first device; None when there is none."""
    gpus = [(units, key) for key, kind, units in devices if kind & _CL_DEVICE_TYPE_GPU]
    if gpus:
        best = max(u for u, _ in gpus)
        return next(k for u, k in gpus if u == best)
    cpus = [key for key, kind, _ in devices if kind & _CL_DEVICE_TYPE_CPU]
    return (cpus or [key for key, _, _ in devices] or [None])[0]


def _indices(spec: str):
    keys = [parse_index(x) for x in str(spec).split(",") if x.strip()]
    return [] if not keys or None in keys else keys


def _make(path: str, wanted):
    lib = ctypes.CDLL(path)
    vp, u32 = ctypes.c_void_p, ctypes.c_uint32
    lib.clGetPlatformIDs.argtypes = [u32, ctypes.POINTER(vp), ctypes.POINTER(u32)]
    lib.clGetDeviceIDs.argtypes = [vp, ctypes.c_uint64, u32, ctypes.POINTER(vp), ctypes.POINTER(u32)]
    lib.clCreateContext.restype = vp
    lib.clCreateContext.argtypes = [vp, u32, ctypes.POINTER(vp), vp, vp, ctypes.POINTER(ctypes.c_int32)]
    lib.clGetDeviceInfo.argtypes = [vp, u32, ctypes.c_size_t, vp, vp]
    n = u32(0)
    if lib.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
        return
    plats = (vp * n.value)()
    if lib.clGetPlatformIDs(n.value, plats, None) != 0:
        return
    table = {}                  # (platform, device) index -> cl_device_id, in pyopencl's order
    for pi in range(n.value):
        m = u32(0)
        if lib.clGetDeviceIDs(plats[pi], _CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(m)) != 0:
            continue
        devs = (vp * m.value)()
        if lib.clGetDeviceIDs(plats[pi], _CL_DEVICE_TYPE_ALL, m.value, devs, None) == 0:
            table.update({(pi, di): devs[di] for di in range(m.value)})
    if wanted is None:          # the device runtime.device.default_device picks
        wanted = _default(lib, table)
    for key in wanted:
        dev = table.get(key)
        if dev is None:
            continue
        err = ctypes.c_int32(0)
        ctx = lib.clCreateContext(None, 1, (vp * 1)(dev), None, None, ctypes.byref(err))
        if err.value == 0 and ctx:
            with _LOCK:
                _MADE[int(dev)] = int(ctx)


def _default(lib, table):
    """[the key of] ``default_device``'s choice (:func:`pick_default`), [] if a query fails."""
    kind, units = ctypes.c_uint64(0), ctypes.c_uint32(0)
    devices = []
    for key, dev in table.items():
        if lib.clGetDeviceInfo(dev, _CL_DEVICE_TYPE, 8, ctypes.byref(kind), None) != 0:
            return []
        units.value = 0
        if kind.value & _CL_DEVICE_TYPE_GPU and lib.clGetDeviceInfo(
                dev, _CL_DEVICE_MAX_COMPUTE_UNITS, 4, ctypes.byref(units), None) != 0:
            return []
        devices.append((key, kind.value, units.value))
    key = pick_default(devices)
    return [] if key is None else [key]


def start(spec) -> bool:
    """Begin making the contexts of ``spec`` ("P:D[,P:D...]"; None or empty: ``CLALIGN_DEVICE``,
    then ``PYOPENCL_CTX``, then the device ``default_device`` picks) on a daemon thread; False
    (and nothing started) for a malformed spec, or when a start already happened in this
    process."""
    global _THREAD
    if spec is None or not str(spec).strip():   # the same order as runtime.device.select_devices
        spec = os.environ.get("CLALIGN_DEVICE", "").strip() or os.environ.get("PYOPENCL_CTX", "").strip()
    wanted = _indices(spec) if spec else None   # None: the default device
    path = loader_path() if wanted != [] else None
    if not path:
        return False
    with _LOCK:
        if _THREAD is not None:
            return False

        def run():
            # no such library or symbol: nothing is made, and the runtime takes the usual path
            with contextlib.suppress(OSError, AttributeError, ValueError):
                _make(path, wanted)

        _THREAD = threading.Thread(target=run, name="clalign-early-context", daemon=True)
        _THREAD.start()
    return True


def wait():
    """Wait for the thread of :func:`start`, if any: the ICD loader initialises itself on its
    first call, and two threads making that first call at once crash some loaders (ocl-icd), so
    pyopencl's first platform query comes after ours."""
    thread = _THREAD
    if thread is not None:
        thread.join()


def take(device):
    """A ``pyopencl.Context`` made early for ``device`` (a pyopencl Device), or None. Waits for
    the thread of :func:`start`; each context is taken once."""
    if _THREAD is None:
        return None
    wait()
    with _LOCK:
        handle = _MADE.pop(int(device.int_ptr), None)
    if handle is None:
        return None
    import pyopencl as cl

    ctx = cl.Context.from_int_ptr(handle, retain=False)
    if [d.int_ptr for d in ctx.devices] != [device.int_ptr]:   # not ours after all: let it go
        return None
    return ctx


def ahead(name: str, work) -> None:
    """``work()`` on a daemon thread called ``name``, so that what it makes (a runtime, an
    upload) is ready when the command asks for the same thing; its errors are dropped here
    because that later call repeats the work and reports them."""
    def run():
        with contextlib.suppress(Exception):
            work()

    threading.Thread(target=run, name=name, daemon=True).start()

