"""The one rule for API arguments that take "a sequence or a file": which one was meant.

* ``os.PathLike`` (``pathlib.Path`` ...) is a path.
* ``bytes``, a numpy array of residue codes, or a ``str`` that does not look like a path is a
  sequence.
* A ``str`` looks like a path when it names an existing file or folder, contains a path
  separator, or ends with a sequence/model file suffix (:data:`PATH_SUFFIXES`, e.g. ``.fa``,
  ``.fasta.gz``, ``.hmm``). A path must exist: ``sw_search("queries.fa")`` without that file is
  an :class:`~clalign.errors.InputError` ("no such file"), never a search for the letters
  ``QUERIES.FA``.
* ``None``, numbers, booleans and other objects are a ``TypeError`` naming the argument (an int
  is never taken as a file descriptor).

Arguments that only take a path (a database, an HMM file) go through :func:`as_path`.
"""
from __future__ import annotations

import os

from ..errors import InputError

#: Suffixes that make a str a path (a residue string never has a dot).
PATH_SUFFIXES = (".fa", ".fas", ".fasta", ".faa", ".fna", ".ffn", ".seq", ".pep", ".aa", ".txt",
                 ".hmm", ".gz", ".bz2", ".xz", ".zst", ".npy", ".json", ".db")


def looks_like_path(s: str) -> bool:
    """True when the str ``s`` is to be read as a path (see the module docstring)."""
    if os.sep in s or (os.altsep and os.altsep in s) or s.startswith("~"):
        return True
    if s.lower().endswith(PATH_SUFFIXES):
        return True
    return os.path.exists(s)


def _type_error(x, name, wanted):
    return TypeError(f"{name}: expected {wanted}, got {type(x).__name__} {x!r}"[:200])


def as_path(x, name="path", must_exist=True) -> str:
    """``x`` as a file-system path (str); TypeError for anything that is not a str/PathLike,
    InputError naming it when ``must_exist`` and there is nothing there."""
    if isinstance(x, bytes) or not isinstance(x, (str, os.PathLike)):
        raise _type_error(x, name, "a path (str or os.PathLike)")
    path = os.fspath(x)
    if not path:
        raise InputError(f"{name} is an empty path")
    if "\0" in path:
        raise InputError(f"{name} contains a NUL character", repr(path))
    if must_exist and not os.path.exists(path):
        raise InputError("no such file", path)
    return path


def sequence_or_path(x, name="query"):
    """``("path", str)`` or ``("sequence", x)`` by the rule of the module docstring."""
    if isinstance(x, os.PathLike):
        return "path", as_path(x, name)
    if isinstance(x, str):
        if looks_like_path(x):
            return "path", as_path(x, name)
        if not x.strip():
            raise InputError(f"{name} is an empty sequence")
        return "sequence", x
    if isinstance(x, (bytes, bytearray)) or type(x).__module__ == "numpy":
        return "sequence", as_sequence(x, name)
    raise _type_error(x, name, "a sequence (str, bytes or a 1-D numpy array of codes) or a path")


def as_sequence(x, name="sequence"):
    """``x`` as a sequence (str, bytes or 1-D numpy codes), never a path: list items, records."""
    if isinstance(x, (str, bytes, bytearray)):
        return bytes(x) if isinstance(x, bytearray) else x
    if type(x).__module__ == "numpy" and getattr(x, "ndim", None) == 1:
        return x
    raise _type_error(x, name, "a sequence (str, bytes or a 1-D numpy array of codes)")


def check_codes(codes, size: int, name="query"):
    """A 1-D numpy array of residue codes, all below the alphabet ``size``; InputError otherwise
    (out-of-range codes would index past the kernels' score tables)."""
    import numpy as np

    a = np.asarray(codes)
    if a.ndim != 1 or a.dtype.kind not in "ui":
        raise InputError(f"{name}: residue codes must be a 1-D integer array, got {a.dtype} of shape {a.shape}")
    if a.size and (int(a.min()) < 0 or int(a.max()) >= size):
        raise InputError(f"{name}: residue code {int(a.max()) if a.max() >= size else int(a.min())} "
                         f"is outside the alphabet (0..{size - 1})")
    return a.astype(np.uint8, copy=False)


__all__ = ["looks_like_path", "as_path", "sequence_or_path", "as_sequence", "check_codes", "PATH_SUFFIXES"]
