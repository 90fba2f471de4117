"""Packed-SIMD building blocks shared by every kernel.

The OpenCL functions live in ``kernels/simd.mako`` (``cla_<op>_8x4`` / ``cla_<op>_16x2``);
:mod:`clalign.simd.reference` is their numpy reference and :mod:`clalign.simd.harness` runs
them on a device and compares. :func:`variants` lists the SIMD variants a device can build.
"""
from . import reference
from .reference import OPS, WIDTHS


def variants(caps) -> list:
    """``["swar"]`` plus ``"ptx"`` / ``"ptx+s16x2"`` where the device probe allows them."""
    from .harness import variants as _variants
    return _variants(caps)


__all__ = ["reference", "variants", "OPS", "WIDTHS"]
