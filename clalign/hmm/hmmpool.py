"""A large HMM file read in worker processes (:func:`read_all`), the same models as
:func:`clalign.hmm.hmmfile.read_hmms`.

Why: our reader is Python (~3.7 ms per Pfam-like model on the team VM, ~2 of it converting
numbers), so 1,000 models cost seconds before a search's first launch, and while it runs it
holds the GIL that the database reader's threads need between their compiled calls. The file's
text is cut after lines that end a model (``//``) into one piece per process; each process
parses its piece with the very same code, numbering lines from the piece's first. Any error in
any piece (a ``//`` that was not a model's end, a malformed model, a process that failed) makes
the whole file be read again serially, which raises the error the serial reader raises, so
messages and their order are unchanged.
"""
from __future__ import annotations

import os

from .hmmfile import _read_text, read_hmms_text

#: Files from this many bytes on (~90 Pfam-like models), on machines of at least
#: :data:`MIN_CORES` cores, are read in processes; smaller ones serially (a process starts in
#: ~0.15 s: importing numpy and the reader).
MIN_BYTES = 8 << 20
MIN_CORES = 4
#: Most processes, and fewest bytes per process.
MAX_PROCS = 8
MIN_PIECE = 2 << 20

def _parse_piece(text: str, path, first: int) -> list:
    return list(read_hmms_text(text, path, first, whole=False))


def pieces(text: str, n: int) -> list:
    """[(piece text, number of its first line)]: ``text`` cut after model ends (``//`` lines)
    into up to ``n`` pieces of about equal size."""
    cuts = [0]
    for k in range(1, n):
        at = max(cuts[-1], len(text) * k // n)
        while True:
            at = text.find("\n//", at)
            if at < 0:
                break
            eol = text.find("\n", at + 3)
            eol = len(text) if eol < 0 else eol
            if not text[at + 3:eol].strip(" \t\r"):
                break
            at = eol
        if at < 0 or eol + 1 >= len(text):
            break
        cuts.append(eol + 1)
    cuts.append(len(text))
    out, line = [], 1
    for a, b in zip(cuts[:-1], cuts[1:]):
        out.append((text[a:b], line))
        line += text.count("\n", a, b)
    return out


def _child():
    """A worker process: a piece's text on stdin, its models pickled on stdout."""
    import pickle
    import sys

    path, first = pickle.loads(bytes.fromhex(sys.argv[1]))
    text = sys.stdin.buffer.read().decode("latin-1")
    sys.stdout.buffer.write(pickle.dumps(_parse_piece(text, path, first), protocol=pickle.HIGHEST_PROTOCOL))


def _run(text: str, path, first: int) -> list:
    """One piece in a new process (``python -c``, not multiprocessing: a caller's unguarded
    main script is never imported again); ValueError or TimeoutExpired when it fails."""
    import pickle
    import subprocess
    import sys

    import clalign

    root = os.path.dirname(os.path.dirname(os.path.abspath(clalign.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    arg = pickle.dumps((None if path is None else os.fspath(path), first)).hex()
    p = subprocess.run([sys.executable, "-c", "from clalign.hmm.hmmpool import _child; _child()", arg],
                       input=text.encode("latin-1"), capture_output=True, env=env,
                       timeout=60 + len(text) / 1e5)      # ~30x a piece's parse: else read serially
    if p.returncode != 0:
        raise ValueError(p.stderr.decode(errors="replace")[-300:])
    return pickle.loads(p.stdout)


def read_all(path, procs: int | None = None) -> list:
    """Every model of the HMM file ``path``, in file order (as ``list(read_hmms(path))``)."""
    cores = os.cpu_count() or 1
    text = _read_text(path)
    n = procs or min(MAX_PROCS, cores // 2, len(text) // MIN_PIECE)
    if procs is None and (len(text) < MIN_BYTES or cores < MIN_CORES):
        n = 1
    if n > 1:
        from concurrent.futures import ThreadPoolExecutor

        try:
            with ThreadPoolExecutor(n) as ex:      # threads that wait for the processes
                futs = [ex.submit(_run, t, path, first) for t, first in pieces(text, n)]
                return [h for f in futs for h in f.result()]
        except Exception:      # noqa: BLE001  (read serially: the serial reader's own error)
            pass
    return list(read_hmms_text(text, path))
