"""clalign.numba_optional: numba's optional imports refused to numba in the CLI process only."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# stand-ins for the optional modules, found first on the path, so the test sees whether numba
# reached them whether or not the real ones are installed here
_ANY = "class _Any:\n    def __getattr__(self, name):\n        return object\n\n\n"
FAKES = {
    "scipy": '__version__ = "1.11.0"\n',
    "yaml": "def safe_load(f):\n    return {}\n",
    "coverage": _ANY + "types = _Any()\n",
    "colorama": _ANY + ('__version__ = "0.4.6"\ninit = reinit = deinit = lambda *a, **k: None\n'
                        "Fore = Style = Back = _Any()\n"),
}

CHECK = textwrap.dedent("""
    import sys
    from clalign import numba_optional
    if sys.argv[1] == "install":
        numba_optional.install()
        numba_optional.install()    # once only
        assert sum(isinstance(f, numba_optional.NumbaOptional) for f in sys.meta_path) == 1
    import numba
    import numba.core.lowering      # numba's coverage support
    import numba.core.errors        # its colours
    seen = sorted(m for m in numba_optional.OPTIONAL if m in sys.modules)
    import coverage, scipy, yaml    # the program's own imports still find them
    print(",".join(seen) or "-")
""")


def _run(tmp_path, arg, cwd=None):
    for name, text in FAKES.items():
        (tmp_path / f"{name}.py").write_text(text)
    (tmp_path / "check.py").write_text(CHECK)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(tmp_path / "nbcache")}
    r = subprocess.run([sys.executable, str(tmp_path / "check.py"), arg], env=env, cwd=cwd or tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_refused_to_numba_only(tmp_path):
    assert _run(tmp_path, "install") == "-"


def test_numba_reaches_them_without_it(tmp_path):
    # the control: numba does import these where they are installed
    assert _run(tmp_path, "plain") == "colorama,coverage,scipy,yaml"


def test_yaml_kept_for_a_numba_config_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".numba_config.yaml").write_text("")
    assert _run(tmp_path, "install", cwd=work) == "yaml"
