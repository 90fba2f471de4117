"""OpenCL device choice, without ever prompting.

Order: an explicit ``P:D[,P:D...]`` (the ``--device`` option / ``device=`` argument), then
the ``CLALIGN_DEVICE`` environment variable, then ``PYOPENCL_CTX`` (pyopencl's own variable,
read the same way), then the GPU with the most compute units, else the first CPU device,
else any device.
"""
from __future__ import annotations

import os

import pyopencl as cl

from .. import cl_early as early
from ..errors import DeviceError


def platforms():
    early.wait()    # a context being made early initialises the ICD loader first
    try:
        return cl.get_platforms()
    except cl.Error as exc:  # e.g. PLATFORM_NOT_FOUND_KHR when no ICD is installed
        raise DeviceError(
            "no OpenCL platform found; install a driver, e.g. Debian's pocl-opencl-icd for CPUs "
            f"({exc})") from None


_ALL = None


def all_devices():
    """[(platform_index, device_index, device)] for every device of every platform.

    Read once per process: the platform query costs tens of milliseconds on some drivers
    and every engine call resolves its device through here."""
    global _ALL
    if _ALL is not None:
        return list(_ALL)
    out = []
    for pi, p in enumerate(platforms()):
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for di, d in enumerate(devs):
            out.append((pi, di, d))
    _ALL = out
    return list(out)


def _parse_one(item: str, table, source: str):
    item = item.strip()
    key = early.parse_index(item)
    if key is None:
        raise DeviceError(f"bad device {item!r} in {source}: expected P:D (platform and device "
                          f"indices, see `clalign devices`)")
    pi, di = key
    for p, d, dev in table:
        if p == pi and d == di:
            return dev
    raise DeviceError(f"no OpenCL device {pi}:{di} ({source}); `clalign devices` lists them")


def parse_spec(spec: str, source: str = "--device"):
    table = all_devices()
    devs = [_parse_one(x, table, source) for x in spec.split(",") if x.strip()]
    if not devs:
        raise DeviceError(f"empty device list in {source}")
    return devs


def default_device():
    table = all_devices()
    if not table:
        raise DeviceError("no OpenCL device found; install a driver, e.g. Debian's pocl-opencl-icd")
    return early.pick_default([(d, d.type, d.max_compute_units if d.type & cl.device_type.GPU else 0)
                               for _, _, d in table])


def select_devices(device=None):
    """Return the list of OpenCL devices to use.

    ``device`` may be ``None``, a ``"P:D[,P:D...]"`` string, a ``pyopencl.Device`` or a list of
    devices.
    """
    if isinstance(device, cl.Device):
        return [device]
    if isinstance(device, (list, tuple)) and device and all(isinstance(d, cl.Device) for d in device):
        return list(device)
    if device is not None and str(device).strip():
        return parse_spec(str(device), "--device")
    env = os.environ.get("CLALIGN_DEVICE", "").strip()
    if env:
        return parse_spec(env, "CLALIGN_DEVICE")
    env = os.environ.get("PYOPENCL_CTX", "").strip()
    if env:
        return parse_spec(env, "PYOPENCL_CTX")
    return [default_device()]


def device_label(dev) -> str:
    for p, d, x in all_devices():
        if x == dev:
            return f"{p}:{d} {dev.name.strip()}"
    return dev.name.strip()
