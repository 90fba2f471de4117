"""The OpenCL runtime: parameters, rendering, program cache, build errors, device choice, probe."""
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest

from clalign.errors import DeviceError, KernelBuildError, ParameterError
from clalign.runtime import Param, ParamSet, Runtime, choose, probe, render, simd_values
from clalign.runtime import device as devmod
from clalign.runtime import tuning

TEMPLATES = Path(__file__).parent / "templates"
FILL = ParamSet("runtime_fill", (
    Param.int("VALUE", "multiplier", lo=-5, hi=100),
    Param.bool("PLUS_ONE", "add one", default=False),
    Param.choice("MODE", "how to fill", ("once", "twice"), default="once"),
), with_simd=False)


@pytest.fixture(scope="module")
def rt():
    return Runtime.get()


def test_param_validation():
    assert FILL.validate({"VALUE": 3}) == {"VALUE": 3, "PLUS_ONE": False, "MODE": "once"}
    assert FILL.validate({"VALUE": np.int64(7), "PLUS_ONE": 1})["VALUE"] == 7
    for bad in ({"VALUE": 101}, {"VALUE": -6}, {"VALUE": 2.0}, {"VALUE": "3"}, {"VALUE": True},
                {"VALUE": 1, "MODE": "thrice"}, {"VALUE": 1, "PLUS_ONE": 2}, {"VALUE": 1, "EXTRA": 1}, {}):
        with pytest.raises(ParameterError):
            FILL.validate(bad)
    vals = Param.int("W", "width", values=(8, 16))
    assert vals.check(16) == 16
    with pytest.raises(ParameterError, match="not one of"):
        vals.check(12)


def test_simd_params_in_every_set(rt):
    ps = ParamSet("x", (Param.int("N", "n", lo=1),))
    assert ps.names()[:3] == ["SIMD", "PTX_S16X2", "PTX_SHFL"]
    v = simd_values(rt.caps)
    assert v["SIMD"] in ("ptx", "swar")
    with pytest.raises(ParameterError):
        ps.validate({"N": 1, "SIMD": "swar", "PTX_S16X2": True, "PTX_SHFL": False})
    if not rt.caps.ptx:
        with pytest.raises(ParameterError):
            simd_values(rt.caps, "ptx")


def test_choose_order():
    got = choose(FILL, {"VALUE": 1, "MODE": "once"}, {"VALUE": 2}, {"MODE": "twice"})
    assert got == {"VALUE": 2, "PLUS_ONE": False, "MODE": "twice"}


def test_tuning_lookup(rt):
    tuning.register("test_family", [({}, {"A": 1}), ({"is_cpu": True}, {"A": 2}),
                                    ({"name_contains": "no-such-device"}, {"A": 3})])
    assert tuning.lookup("test_family", rt.caps) == {"A": 2 if rt.caps.is_cpu else 1}
    assert tuning.lookup("unknown_family", rt.caps) == {}


def test_render_strict_and_types():
    src = render("runtime_fill.mako", FILL.validate({"VALUE": 4, "PLUS_ONE": True}), (TEMPLATES,))
    assert "4 * gid + 1" in src
    with pytest.raises(ParameterError, match="undefined"):
        render("runtime_undefined.mako", {}, (TEMPLATES,))
    with pytest.raises(ParameterError):
        render("runtime_fill.mako", {"VALUE": 1.5, "PLUS_ONE": False, "MODE": "once"}, (TEMPLATES,))
    with pytest.raises(FileNotFoundError):
        render("no_such_template.mako", {})


def test_program_runs_and_is_cached(rt):
    vals = {"VALUE": 3, "MODE": "twice"}
    p1 = rt.program("runtime_fill.mako", FILL, vals, extra_dirs=(TEMPLATES,))
    p2 = rt.program("runtime_fill.mako", FILL, dict(vals), extra_dirs=(TEMPLATES,))
    assert p1 is p2
    n = 37
    buf = cl.Buffer(rt.ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
    p1.fill(rt.queue, (n,), None, buf)
    out = np.empty(n, np.int32)
    cl.enqueue_copy(rt.queue, out, buf)
    assert np.array_equal(out, 6 * np.arange(n))
    p3 = rt.program("runtime_fill.mako", FILL, {"VALUE": 3}, extra_dirs=(TEMPLATES,))
    assert p3 is not p1


def test_build_error_has_log_and_source(rt, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with pytest.raises(KernelBuildError) as ei:
        rt.build_source("__kernel void broken(__global int *o) { o[0] = undefined_name; }", name="broken.mako")
    err = ei.value
    assert err.source_path and Path(err.source_path).exists()
    assert "undefined_name" in Path(err.source_path).read_text()
    assert "broken.mako" in str(err)


def test_dump_env(rt, tmp_path, monkeypatch):
    monkeypatch.setenv("CLALIGN_DUMP_KERNELS", str(tmp_path))
    render("runtime_fill.mako", FILL.validate({"VALUE": 9}), (TEMPLATES,))
    files = list(tmp_path.glob("runtime_fill-*.cl"))
    assert files and "9 * gid" in files[0].read_text()


def test_device_selection(monkeypatch):
    table = devmod.all_devices()
    assert table, "the test machine must have an OpenCL device (PoCL)"
    p, d, dev = table[0]
    monkeypatch.delenv("CLALIGN_DEVICE", raising=False)
    monkeypatch.delenv("PYOPENCL_CTX", raising=False)
    assert devmod.select_devices(f"{p}:{d}") == [dev]
    assert devmod.select_devices(f"{p}") == [dev]
    assert devmod.select_devices(dev) == [dev]
    assert devmod.select_devices(None) == [devmod.default_device()]
    monkeypatch.setenv("PYOPENCL_CTX", f"{p}:{d}")
    assert devmod.select_devices(None) == [dev]
    monkeypatch.setenv("CLALIGN_DEVICE", "99:0")
    with pytest.raises(DeviceError, match="CLALIGN_DEVICE"):
        devmod.select_devices(None)
    for bad in ("x", "0:a", "1:2:3", ","):
        with pytest.raises(DeviceError):
            devmod.select_devices(bad)


def test_probe_fields(rt):
    c = probe(rt.device)
    assert c is rt.caps
    assert c.compute_units >= 1 and c.local_mem > 0 and c.max_work_group >= 1
    assert c.simd_variant == ("ptx" if c.ptx else "swar")
    if not c.is_nvidia:
        assert not (c.ptx or c.ptx_s16x2 or c.ptx_shfl)


def test_scratch_buffers_reused_per_thread(rt):
    """clalign.runtime.scratch: a name's buffer is kept while it is large enough, grows by
    doubling, holds what was uploaded, and is a different buffer in another thread."""
    import threading

    from clalign.runtime.scratch import scratch

    s = scratch(rt.ctx)
    assert scratch(rt.ctx) is s
    keep = []
    a = s.upload(rt.queue, "x", np.arange(100, dtype=np.int32), keep)
    assert s.upload(rt.queue, "x", np.arange(50, dtype=np.int32), keep) is a and a.size == 400
    b = s.upload(rt.queue, "x", np.arange(150, dtype=np.int32), keep)
    assert b is not a and b.size == 800 and s.buffer("x", 10) is b
    got = np.empty(150, dtype=np.int32)
    cl.enqueue_copy(rt.queue, got, b)
    rt.queue.finish()
    assert np.array_equal(got, np.arange(150)) and s.upload(rt.queue, "e", np.zeros(0), keep).size == 16
    other = []
    t = threading.Thread(target=lambda: other.append(scratch(rt.ctx).buffer("x", 4)))
    t.start()
    t.join()
    assert other[0] is not b
