"""What a device can do, found out once per device and cached.

Besides the standard OpenCL queries this compiles three tiny kernels on NVIDIA devices (as one
program; three builds only when that fails) to learn whether inline PTX builds at all, whether
Hopper's packed 16-bit integer instructions (``add.s16x2``, ``max.s16x2``, ``max.relu.s16x2``;
sm_90+) are accepted, and whether ``shfl.sync`` is available. Nothing is assumed from the device
name. The results of these compile probes are kept in the kernel cache (``probe.json`` beside
the device's binaries), so later processes build none of them.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, asdict

import pyopencl as cl

_PTX_BASIC = r"""
__kernel void probe(__global uint *o) {
    uint a = o[0], b = o[1], d;
    asm("vmax4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0u));
    o[2] = d;
}
"""
_PTX_S16X2 = r"""
__kernel void probe(__global uint *o) {
    uint a = o[0], b = o[1], d, e, f;
    asm("add.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    asm("max.s16x2 %0, %1, %2;" : "=r"(e) : "r"(d), "r"(b));
    asm("max.relu.s16x2 %0, %1, %2;" : "=r"(f) : "r"(e), "r"(a));
    o[2] = f;
}
"""
_CLANG_VECTORS = r"""
typedef uchar u8x32 __attribute__((ext_vector_type(32)));
__kernel void probe(__global uchar *o) {
    u8x32 a = *(__global const u8x32 *)o;
    u8x32 b = __builtin_shufflevector(a, a, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14,
                                      17, 16, 19, 18, 21, 20, 23, 22, 25, 24, 27, 26, 29, 28, 31, 30);
    *(__global u8x32 *)o = a + b;
}
"""
_PTX_SHFL = r"""
__kernel void probe(__global uint *o) {
    uint a = o[get_local_id(0)], d;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(d) : "r"(a), "r"(0));
    o[get_local_id(0)] = d;
}
"""


@dataclass(frozen=True)
class Capabilities:
    """The probe's findings for one device (all plain values, printable and hashable)."""

    name: str
    platform: str
    vendor: str
    driver: str
    opencl_c: str
    is_gpu: bool
    is_cpu: bool
    is_nvidia: bool
    compute_capability: tuple | None  # (major, minor) via cl_nv_device_attribute_query
    ptx: bool                      # inline PTX compiles (video SIMD such as vmax4)
    ptx_s16x2: bool                # sm_90+ packed 16-bit add/max[.relu]
    ptx_shfl: bool                 # shfl.sync compiles
    subgroups: bool                # cl_khr_subgroups / cl_intel_subgroups
    clang_vectors: bool            # Clang's ext_vector_type(32) + __builtin_shufflevector build (PoCL)
    compute_units: int
    max_work_group: int
    local_mem: int
    global_mem: int
    max_alloc: int
    global_cache: int              # bytes of global memory cache (L2 on GPUs)
    warp: int                      # NVIDIA warp size / preferred work-group multiple guess
    fp64: bool = False             # cl_khr_fp64 (double precision in kernels)

    @property
    def simd_variant(self) -> str:
        return "ptx" if self.ptx else "swar"

    def as_dict(self) -> dict:
        return asdict(self)


def _builds(ctx, src) -> bool:
    with warnings.catch_warnings():
        # NVIDIA's compiler chats about inline asm; only success or failure matters here.
        warnings.simplefilter("ignore")
        try:
            cl.Program(ctx, src).build()
            return True
        except (cl.Error, RuntimeError):
            return False


def _combined(*sources) -> str:
    """The probe kernels in one program (renamed probe0, probe1, ...)."""
    return "".join(src.replace("void probe(", f"void probe{i}(") for i, src in enumerate(sources))


_CACHE: dict = {}


def probe(device, ctx=None) -> Capabilities:
    """The device's capabilities; ``ctx``: a context on ``device`` for the compile probes (else one
    is made: with NVIDIA's driver cache disabled a context costs ~1.9 s on the H100, so a Runtime
    passes its own, docs/perf/cache.md)."""
    key = device.int_ptr
    if key in _CACHE:
        return _CACHE[key]
    plat = device.platform
    vendor = device.vendor.strip()
    is_nvidia = "NVIDIA" in vendor.upper() or "NVIDIA" in plat.name.upper()
    exts = device.extensions.split()
    cc = None
    if "cl_nv_device_attribute_query" in exts:
        try:
            cc = (int(device.compute_capability_major_nv), int(device.compute_capability_minor_nv))
        except (cl.Error, AttributeError):
            cc = None
    from .cache import get_cache

    store = get_cache()
    found = store.load_probe(device)
    if found is not None and set(found) == {"ptx", "ptx_s16x2", "ptx_shfl", "clang_vectors"}:
        ptx, s16, shfl, clang_vectors = (found[k] for k in ("ptx", "ptx_s16x2", "ptx_shfl", "clang_vectors"))
    else:
        ptx = s16 = shfl = False
        if ctx is None:
            ctx = cl.Context([device])
        if is_nvidia:
            # One program holding the three tests first (each NVIDIA build costs ~0.7 s even for
            # a tiny kernel); only when it fails, one build per test to learn which one did.
            ptx = s16 = shfl = _builds(ctx, _combined(_PTX_BASIC, _PTX_S16X2, _PTX_SHFL))
            if not ptx:
                ptx = _builds(ctx, _PTX_BASIC)
                if ptx:
                    s16 = _builds(ctx, _PTX_S16X2)
                    shfl = _builds(ctx, _PTX_SHFL)
        # Not OpenCL C: only Clang-based compilers (PoCL) take it; kernels use it only when this is true.
        clang_vectors = (not is_nvidia) and _builds(ctx, _CLANG_VECTORS)
        store.store_probe(device, {"ptx": ptx, "ptx_s16x2": s16, "ptx_shfl": shfl, "clang_vectors": clang_vectors})
    warp = 32 if is_nvidia else (64 if "AMD" in vendor.upper() and device.type & cl.device_type.GPU else 1)
    caps = Capabilities(
        name=device.name.strip(), platform=plat.name.strip(), vendor=vendor,
        driver=device.driver_version.strip(),
        opencl_c=getattr(device, "opencl_c_version", "OpenCL C 1.0").strip(),
        is_gpu=bool(device.type & cl.device_type.GPU), is_cpu=bool(device.type & cl.device_type.CPU),
        is_nvidia=is_nvidia, compute_capability=cc, ptx=ptx, ptx_s16x2=s16, ptx_shfl=shfl,
        subgroups=("cl_khr_subgroups" in exts or "cl_intel_subgroups" in exts), clang_vectors=clang_vectors,
        compute_units=int(device.max_compute_units), max_work_group=int(device.max_work_group_size),
        local_mem=int(device.local_mem_size), global_mem=int(device.global_mem_size),
        max_alloc=int(device.max_mem_alloc_size), global_cache=int(device.global_mem_cache_size),
        warp=warp, fp64="cl_khr_fp64" in exts,
    )
    _CACHE[key] = caps
    return caps
