"""The persistent kernel-binary cache (clalign.runtime.cache): hits across processes, corrupt
entries rebuilt, concurrent fillers, the off switch, the size bound and ``clalign cache``.
Assertions are on the cache's own counters, never on time."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest
from click.testing import CliRunner

from clalign.cli import main as cli_main
from clalign.runtime import Param, ParamSet, Runtime
from clalign.runtime import cache as cachemod

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).parent / "templates"
FILL = ParamSet("runtime_fill", (
    Param.int("VALUE", "multiplier", lo=-5, hi=100),
    Param.bool("PLUS_ONE", "add one", default=False),
    Param.choice("MODE", "how to fill", ("once", "twice"), default="once"),
), with_simd=False)

#: A child process: build the fill kernel for each VALUE in argv, check what it computes and
#: print the cache's counters as JSON.
CHILD = r"""
import json, sys
import numpy as np, pyopencl as cl
from clalign.runtime import Param, ParamSet, Runtime
from clalign.runtime.cache import get_cache
FILL = ParamSet("runtime_fill", (Param.int("VALUE", "m", lo=-5, hi=100), Param.bool("PLUS_ONE", "p", default=False),
                Param.choice("MODE", "m", ("once", "twice"), default="once")), with_simd=False)
rt = Runtime.get()
for v in map(int, sys.argv[2:]):
    prg = rt.program("runtime_fill.mako", FILL, {"VALUE": v}, extra_dirs=(sys.argv[1],))
    buf = cl.Buffer(rt.ctx, cl.mem_flags.WRITE_ONLY, 4 * 16)
    prg.fill(rt.queue, (16,), None, buf)
    out = np.empty(16, np.int32)
    cl.enqueue_copy(rt.queue, out, buf)
    assert np.array_equal(out, v * np.arange(16)), out
print(json.dumps(get_cache().counters.as_dict()))
"""


def _child(cache_dir, values, extra_env=None, wait=True):
    env = {**os.environ, "CLALIGN_CACHE_DIR": str(cache_dir),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("CLALIGN_NO_CACHE", None)
    env.update(extra_env or {})
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(TEMPLATES), *map(str, values)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return _finish(proc) if wait else proc


def _finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def store(tmp_path):
    """A fresh process cache in tmp_path for in-process tests; the environment's afterwards."""
    c = cachemod.configure(root=tmp_path / "kc", enabled=True, max_bytes=1 << 30)
    yield c
    cachemod.configure()


def _fresh_program(values):
    """Build through a new Runtime (an empty in-memory cache) on the default device."""
    rt = Runtime(Runtime.get().device)
    return rt, rt.program("runtime_fill.mako", FILL, values, extra_dirs=(TEMPLATES,))


def _run(rt, prg, n=16):
    buf = cl.Buffer(rt.ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
    prg.fill(rt.queue, (n,), None, buf)
    out = np.empty(n, np.int32)
    cl.enqueue_copy(rt.queue, out, buf)
    return out


def test_second_process_builds_nothing(tmp_path):
    first = _child(tmp_path, [5, 6])
    assert first["builds"] == 2 and first["stores"] == 2 and first["hits"] == 0
    second = _child(tmp_path, [5, 6])
    assert second["builds"] == 0 and second["hits"] == 2 and second["stores"] == 0
    assert second["rejected"] == 0
    assert first["probe_loads"] == 0 and second["probe_loads"] == 1      # no probe builds either


def test_probe_results_kept_and_bad_file_ignored(store, monkeypatch):
    probemod = importlib.import_module("clalign.runtime.probe")    # the module, not the function

    dev = Runtime.get().device
    want = probemod.probe(dev)
    path = store.device_dir(dev) / cachemod.PROBE_FILE
    path.unlink(missing_ok=True)
    loads = store.counters.probe_loads
    monkeypatch.setattr(probemod, "_CACHE", {})
    assert probemod.probe(dev) == want and store.counters.probe_loads == loads    # computed, stored
    assert path.exists()
    monkeypatch.setattr(probemod, "_CACHE", {})
    assert probemod.probe(dev) == want and store.counters.probe_loads == loads + 1    # loaded
    for bad in ("{not json", json.dumps({"device": {}, "results": {"ptx": True}}),
                json.dumps({"device": cachemod.device_identity(dev), "results": {"ptx": 1}})):
        path.write_text(bad)
        monkeypatch.setattr(probemod, "_CACHE", {})
        assert probemod.probe(dev) == want and store.counters.probe_loads == loads + 1


def test_two_processes_filling_at_once_both_succeed(tmp_path):
    procs = [_child(tmp_path, [7, 8, 9], wait=False) for _ in range(2)]
    for got in map(_finish, procs):
        assert got["builds"] + got["hits"] == 3 and got["rejected"] == 0
    after = _child(tmp_path, [7, 8, 9])
    assert after["builds"] == 0 and after["hits"] == 3
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_disabled_by_environment(tmp_path):
    got = _child(tmp_path, [4], {"CLALIGN_NO_CACHE": "1"})
    assert got["builds"] == 1 and got["stores"] == 0 and got["hits"] == 0
    assert not list(tmp_path.rglob("*.clbin"))


def test_disabled_by_configure(tmp_path):
    c = cachemod.configure(root=tmp_path, enabled=False)
    try:
        rt, prg = _fresh_program({"VALUE": 11})
        assert np.array_equal(_run(rt, prg), 11 * np.arange(16))
        assert c.counters.builds == 1 and c.counters.stores == 0 and not list(tmp_path.rglob("*.clbin"))
    finally:
        cachemod.configure()


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other_key", "empty"])
def test_corrupt_entry_is_rebuilt_and_replaced(store, damage):
    vals = {"VALUE": 12, "MODE": "twice"}
    _fresh_program(vals)
    (entry,) = [p for p, _, _ in store.entries()]
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(len(blob)))
    elif damage == "empty":
        entry.write_bytes(b"")
    else:                       # a whole, valid entry of another program under this name
        _fresh_program({"VALUE": 13})
        other = [p for p, _, _ in store.entries() if p != entry][0]
        entry.write_bytes(other.read_bytes())
    builds = store.counters.builds
    rt, prg = _fresh_program(vals)
    assert np.array_equal(_run(rt, prg), 24 * np.arange(16))
    assert store.counters.rejected == 1 and store.counters.builds == builds + 1
    assert rt.build_note().startswith(", 1 kernel builds")
    hits = store.counters.hits
    rt, prg = _fresh_program(vals)          # replaced by a good entry
    assert store.counters.hits == hits + 1 and store.counters.rejected == 1
    assert rt.build_note() == ", 1 kernels from the cache"
    assert np.array_equal(_run(rt, prg), 24 * np.arange(16))


def test_key_covers_source_options_and_device(store):
    dev = Runtime.get().device
    k = store.key("__kernel void f() {}", (), dev)
    assert k != store.key("__kernel void f() { }", (), dev)
    assert k != store.key("__kernel void f() {}", ("-cl-fast-relaxed-math",), dev)
    ident = cachemod.device_identity(dev)
    assert {"platform", "platform_version", "device", "driver", "clalign"} <= set(ident)


def test_size_bound_evicts_least_recently_used(store):
    for v in (20, 21, 22):
        _fresh_program({"VALUE": v})
    sizes = [s for _, s, _ in store.entries()]
    assert len(sizes) == 3
    oldest = store.entries()[0][0]
    store.max_bytes = sum(sizes) - 1          # one entry too many
    _fresh_program({"VALUE": 23})
    left = [p for p, _, _ in store.entries()]
    assert oldest not in left and store.counters.evicted >= 2 and len(left) <= 2


def test_cli_info_and_clear(tmp_path, monkeypatch):
    root = tmp_path / "kc"
    monkeypatch.setenv("CLALIGN_CACHE_DIR", str(root))
    cachemod.configure()
    try:
        _fresh_program({"VALUE": 30})
        (root / "notes.txt").write_text("the user's file")
        (root / "other").mkdir()
        (root / "other" / "data.json").write_text("{}")     # another part of clalign's files
        runner = CliRunner()
        res = runner.invoke(cli_main, ["cache", "info", "--json"])
        assert res.exit_code == 0, res.output
        info = json.loads(res.output)
        assert info["location"] == str(root) and info["entries"] == 1 and info["bytes"] > 0
        assert info["devices"][0]["device"] == Runtime.get().device.name.strip() and len(info["devices"]) == 1
        res = runner.invoke(cli_main, ["cache", "info"])
        assert res.exit_code == 0 and str(root) in res.output and "entries:  1" in res.output
        res = runner.invoke(cli_main, ["cache", "clear"])
        assert res.exit_code == 0 and "removed 1" in res.output
        assert not list(root.rglob("*.clbin")) and (root / "notes.txt").exists()
        assert (root / "other" / "data.json").exists()
    finally:
        cachemod.configure()


def test_unwritable_cache_still_builds(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    c = cachemod.configure(root=blocker, enabled=True)
    try:
        rt, prg = _fresh_program({"VALUE": 14})
        assert np.array_equal(_run(rt, prg), 14 * np.arange(16))
        assert c.counters.builds == 1 and c.counters.stores == 0 and c.counters.write_errors >= 1
    finally:
        cachemod.configure()


def test_is_ready_sees_memory_and_disk(store):
    vals = {"VALUE": 40}
    rt = Runtime(Runtime.get().device)
    assert not rt.is_ready("runtime_fill.mako", FILL, vals, extra_dirs=(TEMPLATES,))
    rt.program("runtime_fill.mako", FILL, vals, extra_dirs=(TEMPLATES,))
    assert rt.is_ready("runtime_fill.mako", FILL, vals, extra_dirs=(TEMPLATES,))
    other = Runtime(rt.device)                                 # another process, as far as memory goes
    assert other.is_ready("runtime_fill.mako", FILL, vals, extra_dirs=(TEMPLATES,))
    assert not other.is_ready("runtime_fill.mako", FILL, {"VALUE": 41}, extra_dirs=(TEMPLATES,))


def test_rendered_sources_kept_checked_and_cleared(store, monkeypatch):
    """A rendered kernel source is kept beside the binaries and read back by a later render
    (no Mako); a damaged entry is rendered again and replaced; ``clear`` removes them."""
    rmod = importlib.import_module("clalign.runtime.render")

    vals = FILL.validate({"VALUE": 21})
    src = rmod.render("runtime_fill.mako", vals, (str(TEMPLATES),))
    files = list((store.root / rmod.RENDERED).glob("*.cl"))
    assert len(files) == 1

    def no_mako(extra=()):
        raise AssertionError("rendered again")

    monkeypatch.setattr(rmod, "_lookup", no_mako)
    assert rmod.render("runtime_fill.mako", vals, (str(TEMPLATES),)) == src
    monkeypatch.undo()
    files[0].write_text(files[0].read_text().replace("21", "22"))
    assert rmod.render("runtime_fill.mako", vals, (str(TEMPLATES),)) == src
    assert rmod._load_rendered(files[0]) == src
    store.clear()
    assert not (store.root / rmod.RENDERED).exists()
