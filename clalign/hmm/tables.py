"""hmmsearch's tabular outputs (``--tblout``/``--domtblout``) with HMMER's name-column widths.

HMMER sizes the target-name column of both tables (``p7_tophits_TabularTargets`` /
``TabularDomains``: ``max(20, longest name)``) and of the ``-o`` report (``p7_tophits_Targets``:
``max(8, longest name)``) from its *whole hit list*, not from the rows it prints. A target
enters that list in ``p7_Pipeline`` when ``P * Z <= E`` with Z as the pipeline knows it at that
moment: unless ``-Z`` fixes it, Z is the number of targets read so far (``p7_pli_NewSeq``), i.e.
the 1-based position ``i`` of the target in the database. So the list holds, besides the
reported hits (``P * Z_total <= E``), targets early in the file with ``P * i <= E``: they are
never printed, but a long name among them widens every row of that query.

pyhmmer, given our filter's survivors with Z fixed to the database size, would list only the
reported hits. So the OpenCL search runs pyhmmer on the survivors with E loosened to
:func:`wide_threshold` (the loosest ``E / i`` among them): its list holds every member of
HMMER's, and :func:`serial_list_width` keeps those with ``P * i <= E`` for the width and names
the reported ones; pyhmmer then runs again, with the true E, on those few targets only, for
the hits that are written (every stage depends only on the target and Z, so they are one
search's). The filter counts come from the wide pass (they do not depend on E). That is
HMMER's list exactly when hmmsearch runs its serial pipeline (``hmmsearch --cpu 0``, pyhmmer's
``Pipeline.search_hmm``). HMMER's worker threads count Z per thread (each counts only the
targets it read), so a threaded run lists *more* (P * j <= E with j < i) and which targets
depends on how the blocks fell to the threads: its columns can be wider than the serial run's.
Seen once: 14 bundled models x 572,100 proteins on the 16-core H100 host, one model's columns
27 wide under ``hmmsearch --cpu 16`` and ``pyhmmer.hmmsearch(cpus=16)``, 20 wide serially
(pyhmmer ``search_hmm`` on that host, ``hmmsearch --cpu 0`` and ``--cpu 16`` on a 2-core
machine). No single output can equal every threaded run; clalign writes the serial one.

:func:`write_table` writes pyhmmer's table and widens the name column to that width.
"""
from __future__ import annotations

import io
from typing import BinaryIO, Callable, Sequence


#: Narrowest name column of the tables (p7_tophits_TabularTargets/TabularDomains) and the report.
TABLE_MIN_NAMEW = 20
REPORT_MIN_NAMEW = 8


def _name_bytes(name) -> bytes:
    return name if isinstance(name, bytes) else str(name).encode("utf-8", "surrogateescape")


def listed_name_width(hits) -> int:
    """Longest target name (bytes) among all hits of a pyhmmer ``TopHits`` (reported or not)."""
    return max((len(_name_bytes(h.name)) for h in hits), default=0)


def wide_threshold(E: float, Z: float, first: int) -> float:
    """Reporting threshold E' of a pass (Z fixed) whose hit list holds every member of HMMER's
    serial list among targets at 1-based positions >= ``first``: P * i <= E implies
    P * Z <= E * Z / first = E'."""
    return E * Z / max(1, int(first))


def serial_list_width(wide_hits, position: Callable[[bytes], int], E: float, Z: float):
    """(longest name of HMMER's serial hit list, names of the targets HMMER reports) from the
    hits of a pass run with :func:`wide_threshold` (see the module doc). ``position(name)``:
    the 1-based database position of the target of that name (the earliest, for duplicates)."""
    width, reported = 0, set()
    for h in wide_hits:
        name = _name_bytes(h.name)
        p = h.pvalue
        if p * Z <= E:
            reported.add(name)
        if len(name) > width and p * position(name) <= E:
            width = len(name)
    return width, reported


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


__all__: Sequence[str] = ("wide_threshold", "serial_list_width", "listed_name_width", "widen", "write_table",
                          "report_name_width")
