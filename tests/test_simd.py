"""kernels/simd.mako against its numpy reference (clalign.simd.reference), for every op, both
lane widths and every SIMD variant this device builds (PoCL: swar only): 10^6 random words,
every combination of lane boundary values in adjacent lanes, and carry/borrow-leak words.
The reference itself is pinned by hand-computed values."""
import re

import numpy as np
import pytest

from clalign.errors import ParameterError
from clalign.runtime import Runtime, render
from clalign.simd import harness, reference, variants

N_RANDOM = 1_000_000


@pytest.fixture(scope="module")
def rt(each_device):               # every test device (conftest)
    return Runtime.get()


def _device_cases():
    rt = Runtime.get()
    return [(v, w, op) for v in variants(rt.caps) for w in reference.WIDTHS for op in reference.OPS]


@pytest.mark.parametrize("variant,width,op", _device_cases())
def test_op_matches_reference(rt, variant, width, op):
    prg = harness.program(rt, harness.variant_values(rt.caps, variant))
    n, bad, first = harness.check(rt, prg, op, width, n_random=N_RANDOM, seed=7)
    assert n >= N_RANDOM
    assert bad == 0, f"{variant} cla_{op}_{width}: {bad}/{n} wrong; first (a, b, c, got, want) = {first}"


# Hand-computed values pin the reference to the documented semantics (lanes little-endian).
HAND = [
    ("add", "8x4", (0x01FF7F80, 0x01010101), 0x02008081),
    ("sub", "8x4", (0x00800100, 0x01010101), 0xFF7F00FF),
    ("addus", "8x4", (0xFF7F80FE, 0x01010180), 0xFF8081FF),
    ("subus", "8x4", (0x00800105, 0x01010203), 0x007F0002),
    ("addss", "8x4", (0x7F7F8080, 0x01FF80FF), 0x7F7E8080),
    ("subss", "8x4", (0x807F0080, 0x01FF8101), 0x807F7F80),
    ("maxu", "8x4", (0x00FF7F80, 0x01017F7F), 0x01FF7F80),
    ("maxs", "8x4", (0x00FF7F80, 0x01017F7F), 0x01017F7F),
    ("minu", "8x4", (0x00FF7F80, 0x01017F7F), 0x00017F7F),
    ("mins", "8x4", (0x00FF7F80, 0x01017F7F), 0x00FF7F80),
    ("maxzs", "8x4", (0x80FF7F05, 0x81FE0006), 0x00007F06),
    ("max3zs", "8x4", (0x80FF0105, 0x81FE0206, 0x82FD0307), 0x00000307),
    ("max3u", "16x2", (0x00018000, 0x00027FFF, 0x0003FFFF), 0x0003FFFF),
    ("max3s", "16x2", (0x00018000, 0x00027FFF, 0x0003FFFF), 0x00037FFF),
    ("addmaxs", "16x2", (0x7FFF0005, 0x00010003, 0x80010007), 0x80010008),
    ("addmaxs", "8x4", (0x0000007F, 0x00000001, 0x000000FF), 0x000000FF),
    ("cmpgtu", "8x4", (0x80017F00, 0x7F017F01), 0xFF000000),
    ("cmpgts", "8x4", (0x80017F02, 0x7F007F01), 0x00FF00FF),
    ("cmpgeu", "16x2", (0x80000001, 0x7FFF0002), 0xFFFF0000),
    ("cmpeq", "16x2", (0x12345678, 0x12345679), 0xFFFF0000),
    ("add", "16x2", (0x0001FFFF, 0x00010001), 0x00020000),
    ("subss", "16x2", (0x80007FFF, 0x0001FFFF), 0x80007FFF),
    ("addus", "16x2", (0xFFFF00FF, 0x00010001), 0xFFFF0100),
]


@pytest.mark.parametrize("op,width,args,want", HAND)
def test_reference_hand_values(op, width, args, want):
    got = reference.op(op, width)(*(np.uint32(x) for x in args))
    assert int(got) == want, f"{op}_{width}{tuple(hex(x) for x in args)} = {int(got):#x}, want {want:#x}"


def test_reference_lane_ops():
    assert reference.get_8x4(0x80FF0102, 3) == 0x80 and reference.gets_8x4(0x80FF0102, 3) == -128
    assert reference.gets_8x4(0x80FF0102, 2) == -1 and reference.gets_16x2(0x7FFF8000, 1) == 0x7FFF
    assert reference.set_8x4(0x11223344, 1, 0x1AB) == 0x1122AB44
    assert reference.set_16x2(0x11223344, 1, 0xFFFF) == 0xFFFF3344
    assert reference.splat_8x4(-3) == 0xFDFDFDFD and reference.splat_16x2(0x12345) == 0x23452345
    assert reference.hmaxu_8x4(0x10FF7F80) == 0xFF and reference.hmaxs_8x4(0x10FF7F80) == 0x7F
    assert reference.hmaxs_16x2(0xFFFF8000) == -1 and reference.hmaxu_16x2(0xFFFF8000) == 0xFFFF


def test_inputs_cover_boundaries_and_leaks():
    """The check data holds every boundary pair in every lane, and a plain 32-bit add (which
    leaks carries between lanes) or a non-saturating add is caught by it."""
    for width, bits in reference.WIDTHS.items():
        a, b, c = harness.check_inputs("add", width, n_random=0)
        la, lb = reference.unpack(a, bits), reference.unpack(b, bits)
        for lane in range(32 // bits):
            pairs = set(zip(la[:, lane].tolist(), lb[:, lane].tolist()))
            assert pairs >= {(x, y) for x in harness.BOUNDARY[width] for y in harness.BOUNDARY[width]}
        assert np.any((a + b) != reference.op("add", width)(a, b))           # carry leak detected
        assert np.any(reference.op("add", width)(a, b) != reference.op("addus", width)(a, b))
        a3, b3, c3 = harness.check_inputs("max3s", width, n_random=0)
        lc = reference.unpack(c3, bits)[:, 0]
        assert set(lc.tolist()) >= set(harness.BOUNDARY3[width])


def _defined_functions(src):
    return set(re.findall(r"inline\s+(?:uint|int)\s+(cla_\w+)\s*\(", src))


@pytest.mark.parametrize("simd,s16", [("swar", False), ("ptx", False), ("ptx", True)])
def test_every_name_rendered_once(simd, s16):
    """Every function of the brief exists in every variant, guarded against double inclusion."""
    src = render("simd_test.mako", {"SIMD": simd, "PTX_S16X2": s16, "PTX_SHFL": False})
    names = _defined_functions(src)
    for w in reference.WIDTHS:
        for op in reference.OPS:
            assert f"cla_{op}_{w}" in names
    assert src.count("#ifndef CLA_SIMD_H") == 2 and src.count("#define CLA_SIMD_H") == 2
    if simd == "swar":
        assert "asm(" not in src
    else:
        assert ("vmax2.s32.s32.s32" in src) != s16 and ("vmin2.u32.u32.u32" in src) != s16
        assert ("max.relu.s16x2" in src) == s16 and ("add.s16x2" in src) == s16


def test_parameter_validation(rt):
    good = harness.variant_values(rt.caps, "swar")
    assert good == {"SIMD": "swar", "PTX_S16X2": False, "PTX_SHFL": False}
    for bad in ({**good, "SIMD": "avx"}, {**good, "SIMD": None}, {**good, "SIMD": 1},
                {**good, "PTX_S16X2": True}, {**good, "PTX_SHFL": True}, {**good, "EXTRA": 1}):
        with pytest.raises(ParameterError):
            rt.program("simd_test.mako", harness.TEST_PARAMS, bad)
    with pytest.raises(ParameterError, match="unknown SIMD variant"):
        harness.variant_values(rt.caps, "neon")
    if not rt.caps.ptx:
        assert variants(rt.caps) == ["swar"]
        for v in ("ptx", "ptx+s16x2"):
            with pytest.raises(ParameterError):
                harness.variant_values(rt.caps, v)


def test_bench_kernels_compute_the_chain(rt):
    """The throughput kernels of tools/device_simd.py compute what they claim (checked against
    a numpy simulation of the chain for a few work-items and one op of each kind)."""
    import pyopencl as cl

    iters, n = 8, 64
    prg = harness.bench_program(rt, harness.variant_values(rt.caps, "swar"), iters)
    inp = np.random.default_rng(3).integers(0, 1 << 32, size=5 * n, dtype=np.uint64).astype(np.uint32)
    mf = cl.mem_flags
    din = cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=inp)
    dout = cl.Buffer(rt.ctx, mf.WRITE_ONLY, 4 * n)
    for name in ("addss_8x4", "max3zs_16x2", "get_16x2", "gets_8x4", "set_8x4", "set_16x2", "hmaxs_8x4", "imad"):
        getattr(prg, f"b_{name}")(rt.queue, (n,), (n,), din, dout)
        got = np.empty(n, dtype=np.uint32)
        cl.enqueue_copy(rt.queue, got, dout)
        np.testing.assert_array_equal(got, harness.simulate_chain(name, inp, n, iters), err_msg=name)
    with pytest.raises(ParameterError):
        harness.bench_program(rt, harness.variant_values(rt.caps, "swar"), 6)
    with pytest.raises(ParameterError):
        harness.bench_program(rt, harness.variant_values(rt.caps, "swar"), 8, only="nop_8x4")
