"""The tools' one way to write results: ``clalign.runtime.harness`` documents (JSON, dated by the
clock), so ``clalign tune`` and the tuning table read every benchmark's output the same way.

A whole-program comparison with a peer (BLAST+, HMMER, pyhmmer) carries ``identical``; its speed
ratio counts only when the outputs are identical (``ratio_valid``)."""
from __future__ import annotations

import sys

from clalign.runtime.harness import result_doc, write_results


def peer_row(family: str, input_name: str, seconds, peer: str, peer_seconds, identical, **extra) -> dict:
    """One clalign-vs-peer row: the ratio peer/clalign is marked invalid unless the outputs match."""
    ratio = round(peer_seconds / seconds, 3) if seconds and peer_seconds else None
    ok = bool(identical)
    return {"family": family, "input": input_name, "values": {}, "status": "ok" if ok else "wrong",
            "seconds": seconds, "reason": "" if ok else f"output differs from {peer}", "peer": peer,
            "peer_seconds": peer_seconds, "identical": ok, "ratio": ratio, "ratio_valid": ok and ratio is not None,
            **extra}


def save(path, rows: list, caps=None, **extra) -> None:
    """Write ``rows`` to ``path`` as a results document (the command line recorded)."""
    write_results(path, result_doc(caps, " ".join([sys.executable] + sys.argv), rows, **extra))
    print(f"results: {path}", file=sys.stderr)
