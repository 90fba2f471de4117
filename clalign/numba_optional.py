"""Modules numba imports at its start but a clalign command never needs, refused to numba.

numba's import tries ``scipy`` (only to check its version), ``yaml`` (to read a
``.numba_config.yaml``), ``coverage`` (to report compiled lines to a running coverage
measurement) and ``colorama`` (coloured error messages). Where they are installed (the H100 host
has scipy, coverage and yaml), importing them takes 0.2-0.3 s of Python under the interpreter lock,
in the middle of a command's start, while the device's set-up waits for the same lock
(docs/perf/blastp.md, run H1). :func:`install` puts a finder first on ``sys.meta_path`` that
answers "not installed" to numba's and llvmlite's own imports of those modules, and to nobody
else; a module already imported is left alone, and so is yaml where numba would find a config
file to read. Only the command-line program installs it: a program that uses numba itself may
want scipy there (numba's ``np.linalg`` support).

This module imports nothing beyond the standard library's ``os`` and ``sys``.
"""
from __future__ import annotations

import os
import sys

#: the modules refused to numba (top-level names)
OPTIONAL = frozenset(("scipy", "yaml", "coverage", "colorama"))
#: the importers they are refused to (top-level package of the importing module)
IMPORTERS = ("numba", "llvmlite")
_MACHINERY = ("importlib", "_frozen_importlib")


class NumbaOptional:
    """The ``sys.meta_path`` finder (the module docstring)."""

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in OPTIONAL or name in sys.modules:
            return None
        if top == "yaml" and os.path.isfile(".numba_config.yaml"):
            return None
        if _importer().partition(".")[0] in IMPORTERS:
            raise ModuleNotFoundError(f"No module named {name!r} (not offered to numba by "
                                      "clalign)", name=name)
        return None


def _importer() -> str:
    """The module whose code runs the import now being resolved (import machinery skipped)."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith(_MACHINERY):
        f = f.f_back
    return "" if f is None else f.f_globals.get("__name__", "")


def install():
    """Put :class:`NumbaOptional` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, NumbaOptional) for f in sys.meta_path):
        sys.meta_path.insert(0, NumbaOptional())
