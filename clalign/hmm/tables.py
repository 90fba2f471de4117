"""hmmsearch's tabular outputs (``--tblout``/``--domtblout``) with HMMER's name-column widths.

HMMER sizes the target-name column of both tables (``p7_tophits_TabularTargets`` /
``TabularDomains``: ``max(20, longest name)``) and of the ``-o`` report (``p7_tophits_Targets``:
``max(8, longest name)``) from its *whole hit list*, not from the rows it prints. A target
enters that list in ``p7_Pipeline`` when ``P * Z <= E`` with Z as the pipeline knows it at that
moment: unless ``-Z`` fixes it, Z is the number of targets read so far (``p7_pli_NewSeq``), i.e.
the 1-based position ``i`` of the target in the database. So the list holds, besides the
reported hits (``P * Z_total <= E``), targets early in the file with ``P * i <= E``: they are
never printed, but a long name among them widens every row of that query.

pyhmmer, given our filter's survivors with Z fixed to the database size, lists only the
reported hits. :func:`hitlist_name_width` finds the other members whose names could widen the
column (survivors with a longer name than every listed one) by one more pyhmmer pass over just
those, with E loosened to the loosest ``E / i`` among them, and keeps those with ``P * i <= E``.
That is HMMER's list exactly when hmmsearch runs its serial pipeline (``--cpu 0``, and pyhmmer's
own ``hmmsearch``); HMMER's worker threads count Z per thread, which can only shrink the list
(their counts are below ``i``), so on a borderline long name a threaded hmmsearch may print
narrower columns than its own serial run.

:func:`write_table` writes pyhmmer's table and widens the name column to that width.
"""
from __future__ import annotations

import io
from typing import BinaryIO, Callable, Sequence

import numpy as np

#: Narrowest name column of the tables (p7_tophits_TabularTargets/TabularDomains) and the report.
TABLE_MIN_NAMEW = 20
REPORT_MIN_NAMEW = 8


def _name_bytes(name) -> bytes:
    return name if isinstance(name, bytes) else str(name).encode("utf-8", "surrogateescape")


def listed_name_width(hits) -> int:
    """Longest target name (bytes) among all hits of a pyhmmer ``TopHits`` (reported or not)."""
    return max((len(_name_bytes(h.name)) for h in hits), default=0)


def hitlist_name_width(hits, passing: np.ndarray, name_lengths: np.ndarray, E: float, Z: float,
                       z_fixed: bool, search: Callable[[np.ndarray, float], object],
                       name_at: Callable[[int], bytes]) -> int:
    """Longest name (bytes) in HMMER's hit list of one query (see the module doc).

    ``hits``: pyhmmer's TopHits of the survivors (Z fixed to ``Z``); ``passing``: database
    indices of the survivors; ``name_lengths``: name length (bytes) of every database target;
    ``search(indices, E2)``: pyhmmer's pipeline on those targets with reporting threshold E2
    (same Z and other thresholds), returning its TopHits; ``name_at(i)``: name of target i.
    """
    width = listed_name_width(hits)
    if z_fixed or passing.size == 0:
        return width
    cand = passing[np.asarray(name_lengths)[passing] > width]
    if cand.size == 0:
        return width
    position = {}
    for k in cand.tolist():                       # duplicate names: the earliest position
        position.setdefault(name_at(k), k + 1)
    for h in search(cand, E * Z / (int(cand.min()) + 1)):
        name = _name_bytes(h.name)
        i = position.get(name)
        if i is not None and h.pvalue * i <= E:
            width = max(width, len(name))
    return width


def widen(text: bytes, old: int, new: int, header: bool) -> bytes:
    """A pyhmmer table (name column ``old`` wide) with its name column ``new`` wide.

    Data rows and the column-title line take the spaces after the name field; the two rule
    lines of the header (group titles, dashes: right-aligned after '#') right after the '#'.
    """
    pad = new - old
    if pad <= 0:
        return text
    sp = b" " * pad
    lines = text.split(b"\n")
    out = []
    n_head = 0
    for ln in lines:
        if not ln:
            out.append(ln)
        elif ln.startswith(b"#") and header and n_head < 3:
            out.append(ln[:old] + sp + ln[old:] if n_head == 1 else ln[:1] + sp + ln[1:])
            n_head += 1
        else:
            out.append(ln[:old] + sp + ln[old:])
    return b"\n".join(out)


def write_table(fh: BinaryIO, hits, fmt: str, header: bool, name_width: int) -> None:
    """pyhmmer's ``TopHits.write`` (``fmt`` "targets" or "domains") into ``fh``, with the name
    column as wide as HMMER makes it for a hit list whose longest name is ``name_width``."""
    buf = io.BytesIO()
    hits.write(buf, format=fmt, header=header)
    old = max(TABLE_MIN_NAMEW, listed_name_width(hits))
    fh.write(widen(buf.getvalue(), old, max(TABLE_MIN_NAMEW, name_width), header))


def report_name_width(name_width: int) -> int:
    """The ``-o`` report's name column (p7_tophits_Targets: at least 8)."""
    return max(REPORT_MIN_NAMEW, name_width)


__all__: Sequence[str] = ("hitlist_name_width", "listed_name_width", "widen", "write_table", "report_name_width")
