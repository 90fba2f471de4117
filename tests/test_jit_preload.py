"""runtime.jit: cached numba code loaded ahead of need, never compiled there."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODULE = textwrap.dedent("""
    import numba

    @numba.njit(cache=True)
    def twice(a):
        return 2 * a

    def maker():
        return twice
""")

CHECK = textwrap.dedent("""
    import sys
    import jitmod
    from clalign.runtime.jit import load_cached, preload
    if sys.argv[1] == "fill":
        assert jitmod.twice(3) == 6
    else:
        loaded = load_cached(jitmod.twice)
        print(loaded, len(jitmod.twice.overloads), sum(jitmod.twice.stats.cache_misses.values()))
        preload(["jitmod:twice", "jitmod:maker()", "jitmod:missing", "nomodule:f"]).join()
        assert jitmod.twice(4) == 8
        print(len(jitmod.twice.overloads), sum(jitmod.twice.stats.cache_misses.values()))
""")


def _run(tmp_path, arg):
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "NUMBA_CACHE_DIR": str(tmp_path / "nbcache"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, str(tmp_path / "check.py"), arg], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")


def test_load_cached_loads_what_the_cache_holds_and_compiles_nothing(tmp_path):
    (tmp_path / "jitmod.py").write_text(MODULE)
    (tmp_path / "check.py").write_text(CHECK)
    assert _run(tmp_path, "load")[0] == "0 0 0"      # empty cache: nothing loaded, nothing compiled
    _run(tmp_path, "fill")                           # a process compiles and saves one signature
    out = _run(tmp_path, "load")
    assert out[0] == "1 1 0"                          # loaded from disk, no cache miss
    assert out[1] == "1 0"                            # the call used it; bad names were ignored


def test_skip_blas_probe_restores_numba(tmp_path):
    """The preload's "no BLAS" answer to numba's array-math probe: numba's ensure_blas is the
    real one again afterwards and scipy.linalg was not imported for it (a fresh process: the
    probe runs once per process)."""
    code = textwrap.dedent("""
        import sys
        from clalign.runtime import jit
        jit._skip_blas_probe()
        import numba.np.linalg as la, numba.np.arraymath as am
        assert am.ensure_blas is la.ensure_blas and la.ensure_blas.__name__ == "ensure_blas"
        assert "scipy.linalg" not in sys.modules and not am._HAVE_BLAS
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path,
                   env={**os.environ,
                        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})


def test_preload_leaves_out_specs_an_earlier_preload_was_given(monkeypatch):
    """A command starts the loads before its library call asks for the same ones: the second
    preload gets only what the first was not given."""
    from clalign.runtime import jit

    given = []
    monkeypatch.setattr(jit, "_QUEUED", set())
    monkeypatch.setattr(jit, "_dispatcher", lambda spec: given.append(spec))
    monkeypatch.setattr(jit, "load_cached", lambda disp: 0)
    monkeypatch.setattr(jit, "_skip_blas_probe", lambda: None)
    jit.preload(["m:a", "m:b"]).join()
    jit.preload(["m:b", "m:c", "m:a"]).join()
    assert given == ["m:a", "m:b", "m:c"]


def test_blastn_preload_names_compiled_stages():
    """Every stage ``run_blastn`` preloads exists and is a compiled (deferred) function, with
    and without a device; a renamed stage would be skipped silently by the preload."""
    from clalign.blast.nucl_preload import DEVICE, PRELOAD, PRELOAD_DEVICE
    from clalign.runtime import jit

    for specs in (PRELOAD, PRELOAD_DEVICE):
        assert len(set(specs)) == len(specs)
        for spec in specs:
            # deferred, or its dispatcher once a search in this process has called it
            assert getattr(jit._dispatcher(spec), "py_func", None) in jit._BY_FUNC, spec
    assert set(PRELOAD_DEVICE) == set(PRELOAD) | set(DEVICE)   # plus the device feeders' own


def test_blastn_stage_lists_import_nothing():
    """``clalign blastn`` starts its preload from ``nucl_preload`` before the engine's imports:
    the lists must not pull numpy (or the engine) in."""
    code = ("import sys, clalign.blast.nucl_preload as p; "
            "assert p.stages(None) == p.PRELOAD and p.stages('0:0') == p.PRELOAD_DEVICE; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'numba', 'pyopencl')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout
    assert out.strip() == "[]"
