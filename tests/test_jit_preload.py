"""runtime.jit: cached numba code loaded ahead of need, never compiled there."""
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
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "NUMBA_CACHE_DIR": str(tmp_path / "nbcache"),
           "PATH": "/usr/bin:/bin"}
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
