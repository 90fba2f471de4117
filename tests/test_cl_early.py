"""Contexts made early (``clalign.cl_early``): the runtime takes the one made for its device and
it works; a spec that names no device, or another device, leaves the usual path (and its
errors) as they were. Each case runs in a fresh interpreter (one early start per process)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CLALIGN_DEVICE", None)
    env.pop("PYOPENCL_CTX", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_runtime_takes_the_early_context_and_it_works():
    out = _run("""
import numpy as np
from clalign import cl_early
assert cl_early.start("0:0")
import pyopencl as cl
from clalign.runtime import Runtime
cl_early.wait()
made = set(cl_early._MADE.values())
assert len(made) == 1
rt = Runtime.get("0:0")
assert rt.ctx.int_ptr in made and not cl_early._MADE
a = np.arange(1000, dtype=np.int32)
buf = cl.Buffer(rt.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
prg = cl.Program(rt.ctx, "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }").build()
prg.twice(rt.queue, (1000,), None, buf)
b = np.empty_like(a)
cl.enqueue_copy(rt.queue, b, buf)
assert np.array_equal(b, 2 * a)
assert not cl_early.start("0:0")   # once per process
print("ok")
""")
    assert out.strip() == "ok"


@pytest.mark.parametrize("spec,started", [("x", False), ("0:0:0", False), ("7:0", True), ("0:99", True)])
def test_other_specs_leave_the_usual_path(spec, started):
    out = _run(f"""
from clalign import cl_early
from clalign.errors import DeviceError
assert cl_early.start({spec!r}) is {started}
from clalign.runtime import Runtime
cl_early.wait()
assert not cl_early._MADE
try:
    Runtime.get({spec!r} or "99:0")
except DeviceError as exc:
    print("DeviceError", exc)
""")
    assert out.startswith("DeviceError") and "\\n" not in out.strip()


def test_env_spec_and_a_context_for_another_device_is_not_taken():
    out = _run("""
import os
os.environ["CLALIGN_DEVICE"] = "0:0"
from clalign import cl_early
assert cl_early.start(None)
cl_early.wait()
assert len(cl_early._MADE) == 1
class Other:            # a device that is not the one the context was made for
    int_ptr = 12345
assert cl_early.take(Other()) is None and len(cl_early._MADE) == 1
print("ok")
""")
    assert out.strip() == "ok"


def test_default_device_context_is_taken():
    """No spec and no environment variable: the context of the device ``default_device`` picks."""
    out = _run("""
from clalign import cl_early
assert cl_early.start(None)
from clalign.runtime import Runtime
from clalign.runtime.device import default_device
cl_early.wait()
made = dict(cl_early._MADE)
assert list(made) == [default_device().int_ptr]
rt = Runtime.get(None)
assert rt.ctx.int_ptr == made[rt.device.int_ptr] and not cl_early._MADE
print("ok")
""")
    assert out.strip() == "ok"


def test_spec_items_and_default_choice():
    """The one reading of a device spec item and of the default choice (used by the runtime's
    ``parse_spec``/``default_device`` and by the early thread)."""
    from clalign.cl_early import parse_index, pick_default

    assert parse_index(" 1:2 ") == (1, 2) and parse_index("3") == (3, 0)
    assert parse_index("x") is None and parse_index("0:0:0") is None and parse_index("") is None
    gpu, cpu, acc = 4, 2, 8
    assert pick_default([("a", cpu, 0), ("b", gpu, 66), ("c", gpu, 132), ("d", gpu, 132)]) == "c"
    assert pick_default([("a", acc, 0), ("b", cpu, 0), ("c", cpu, 0)]) == "b"
    assert pick_default([("a", acc, 0)]) == "a" and pick_default([]) is None
