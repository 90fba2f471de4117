"""Where clalign keeps what it remembers per machine (programs, rates, choices), found without
importing pyopencl or numpy: ``clalign hmmsearch`` reads its remembered filter choice there
before it starts the device's context (:mod:`clalign.cl_early`) and imports the rest."""
from __future__ import annotations

import os
from pathlib import Path


def default_root() -> Path:
    """``CLALIGN_CACHE_DIR`` or the platform's user cache folder (``.../clalign/kernels``)."""
    env = os.environ.get("CLALIGN_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("clalign", appauthor=False)) / "kernels"
    except ImportError:          # platformdirs is a dependency; keep working without it
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "clalign" / "kernels"
