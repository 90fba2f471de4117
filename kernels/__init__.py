"""OpenCL C kernel templates (Mako), installed as the package ``clalign.kernels``.

Each engine's templates are named after it (``sw_*.mako``, ``msv_*.mako`` ...);
``simd.mako`` is the packed-SIMD library every kernel includes.
"""
