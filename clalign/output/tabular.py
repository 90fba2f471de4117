"""BLAST+ tabular output (``-outfmt 6`` and ``7``), number formatting as BLAST+ 2.12 prints it.

Formatting rules (``CAlignFormatUtil::GetScoreString`` and ``CBlastTabularInfo::SetScores`` of
the NCBI C++ toolkit, checked against blastp 2.12 output):

- evalue: ``0.0`` below 1e-180; ``%.2e`` below 0.0009; ``%4.3f`` below 0.1; ``%3.2f`` below 1;
  ``%2.1f`` below 10; else ``%2.0f``;
- bitscore: ``%5.3e`` above 99999; the integer part (``%3ld`` of the truncated value) above 99.9;
  else ``%4.1f``;
- pident ``%.3f``, ppos ``%.2f``; query coverage ``+0.5`` below 99 % then truncated.
"""
from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .columns import QueryTable, rows_of
from .tabular_bytes import table_bytes
from .record import EPS_EVALUE, btop, coverage_percent, covered_percent


def format_evalue(e: float) -> str:
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%4.3f" % e
    if e < 1.0:
        return "%3.2f" % e
    if e < 10.0:
        return "%2.1f" % e
    return "%2.0f" % e


def format_bitscore(b: float) -> str:
    if b > 99999:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b


def _first_word(s: str) -> str:
    return s.split(None, 1)[0] if s.strip() else s


# name -> (label in '# Fields:', value(alignment, context) -> str). ``ctx`` holds per-subject
# query coverage ('qcovs') for the current query.
FIELDS = {
    "qseqid": ("query id", lambda a, c: a.query_id),
    "qacc": ("query acc.", lambda a, c: a.query_id),
    "qaccver": ("query acc.ver", lambda a, c: a.query_id),
    "qlen": ("query length", lambda a, c: str(a.qlen)),
    "sseqid": ("subject id", lambda a, c: a.subject_id),
    "sallseqid": ("subject ids", lambda a, c: a.subject_id),
    "sacc": ("subject acc.", lambda a, c: a.subject_id),
    "saccver": ("subject acc.ver", lambda a, c: a.subject_id),
    "slen": ("subject length", lambda a, c: str(a.slen)),
    "qstart": ("q. start", lambda a, c: str(a.qstart)),
    "qend": ("q. end", lambda a, c: str(a.qend)),
    "sstart": ("s. start", lambda a, c: str(a.sstart)),
    "send": ("s. end", lambda a, c: str(a.send)),
    "qseq": ("query seq", lambda a, c: a.qseq),
    "sseq": ("subject seq", lambda a, c: a.sseq),
    "evalue": ("evalue", lambda a, c: format_evalue(a.evalue)),
    "bitscore": ("bit score", lambda a, c: format_bitscore(a.bitscore)),
    "score": ("score", lambda a, c: str(a.score if a.score > 0 else -1)),
    "length": ("alignment length", lambda a, c: str(a.length)),
    "pident": ("% identity", lambda a, c: "%.3f" % a.pident),
    "nident": ("identical", lambda a, c: str(a.nident)),
    "mismatch": ("mismatches", lambda a, c: str(a.mismatch)),
    "positive": ("positives", lambda a, c: str(a.positive)),
    "gapopen": ("gap opens", lambda a, c: str(a.gapopen)),
    "gaps": ("gaps", lambda a, c: str(a.gaps)),
    "ppos": ("% positives", lambda a, c: "%.2f" % a.ppos),
    "btop": ("BTOP", lambda a, c: a.btop),
    "stitle": ("subject title", lambda a, c: a.subject_title or a.subject_id),
    "salltitles": ("subject titles", lambda a, c: a.subject_title or a.subject_id),
    "sstrand": ("subject strand", lambda a, c: a.sstrand),
    "qcovs": ("% query coverage per subject", lambda a, c: str(c["qcovs"][(a.subject_index, a.subject_id)])),
    "qcovhsp": ("% query coverage per hsp",
                lambda a, c: str(coverage_percent(abs(a.qend - a.qstart) + 1, a.qlen))),
}

# BLAST+'s "std" column set (-outfmt 6 / 7 without a list).
STD_FIELDS = ("qaccver", "saccver", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
              "sstart", "send", "evalue", "bitscore")


def parse_outfmt(spec, extra=("tsv", "json")):
    """(kind, columns) of an ``-outfmt`` value: ``"6"``, ``"7"``, ``"6 qseqid sseqid ..."`` (``std``
    expands to the 12 standard columns) or one of ``extra`` (then columns is None)."""
    text = str(spec).strip()
    if text in extra:
        return text, None
    parts = text.split()
    if not parts or parts[0] not in ("6", "7"):
        raise ParameterError(f"-outfmt {spec!r}: expected 6, 7 (optionally followed by column names) "
                             f"or one of {', '.join(extra)}")
    cols = []
    for name in parts[1:]:
        if name == "std":
            cols.extend(STD_FIELDS)
        elif name in FIELDS:
            cols.append(name)
        else:
            raise ParameterError(f"-outfmt: unknown column {name!r}; supported: std, {', '.join(FIELDS)}")
    return parts[0], tuple(cols) if cols else STD_FIELDS


def write_tabular(fh, results, columns=STD_FIELDS, comments=False, program="BLASTP 2.12.0+",
                  database=""):
    """Write BLAST tabular rows for ``results`` (QueryHits-like: query_id, qlen, hits, title) to
    the text handle ``fh``; ``comments=True`` is -outfmt 7 (BLAST+'s comment lines per query and
    the closing '# BLAST processed N queries'). Hits are written in BLAST+'s order
    (:func:`order_rows`); every column is formatted for all rows at once (:func:`column_values`:
    the ``FIELDS`` getters' text), the aligned strings made only for columns that print them, and
    the lines put together in one byte matrix (:mod:`.tabular_bytes`; line by line where it
    declines)."""
    if not isinstance(results, QueryTable):   # a table's arrays are read as they are
        results = list(results)
    rows, counts = rows_of(results)
    qpos = np.repeat(np.arange(len(results)), counts)
    rows = rows.take(order_rows(rows, qpos))      # qpos stays as it is: results stay in order

    def qlens():
        if isinstance(results, QueryTable):
            return results.qlens[qpos]
        return np.array([r.qlen for r in results], dtype=np.int64)[qpos]

    names = _dedup(columns)
    values = [column_values(rows, c, qpos, qlens) for c in names]
    pick = [names.index(c) for c in columns]
    chunks = _chunks(values, pick, len(rows), counts if comments else None)
    if not comments:
        for text in chunks:
            fh.write(text)
        return
    fields_line = "# Fields: " + ", ".join(FIELDS[c][0] for c in columns) + "\n"
    for r, k, text in zip(results, counts, chunks):
        title = getattr(r, "title", None) or r.query_id
        fh.write(f"# {program}\n# Query: {title}\n# Database: {database}\n")
        if k:
            fh.write(fields_line)
        fh.write(f"# {k} hits found\n")
        fh.write(text)
    fh.write(f"# BLAST processed {len(results)} queries\n")


def _chunks(values, pick, n, counts):
    """The lines' text: all of it in pieces (``counts`` None) or one piece per result (its
    ``counts[i]`` lines)."""
    made = table_bytes(values, pick, n, sizes=counts is not None)
    if made is not None:
        data, sizes = made
        if counts is None:
            return [data.decode("utf-8")]
        b = np.r_[0, np.cumsum(sizes)][np.r_[0, np.cumsum(counts, dtype=np.int64)]].tolist()
        return [data[b[i]:b[i + 1]].decode("utf-8") for i in range(len(counts))]
    cols = [column_text_of(v) for v in values]
    tmpl = "\t".join("{%d}" % k for k in pick) + "\n"
    lines = list(map(tmpl.format, *cols)) if cols else ["\n"] * n
    if counts is None:
        return ["".join(lines[k:k + (1 << 16)]) for k in range(0, len(lines), 1 << 16)]
    b = np.r_[0, np.cumsum(counts)].tolist()
    return ["".join(lines[b[i]:b[i + 1]]) for i in range(len(counts))]


def _dedup(columns):
    return list(dict.fromkeys(columns))


def order_rows(rows, qpos):
    """The order of ``rows`` (:mod:`.columns`' BlockRows/RecordRows, result ``qpos[i]`` each,
    in result order) that writes each result's hits as :func:`order_hits` orders them: a
    subject's HSPs together in ``hsp_order_key`` order, subjects by their first HSP's
    (E-value, score descending, later subject first), ties in order of first appearance. Rows
    already in that order (a search's usually are) are only checked (:func:`_in_order`)."""
    from ..blast.hsp import lexsort_packed   # np.lexsort, keys packed into int64 words

    n = len(rows)
    if n <= 1:
        return np.arange(n)
    qpos = np.asarray(qpos, dtype=np.int64)
    e, sc = rows.num("evalue"), rows.num("score")
    e = np.where(e < EPS_EVALUE, 0.0, e)
    ss, se, qs, qe, ql = (rows.num(k) for k in ("sstart", "send", "qstart", "qend", "qlen"))
    minus = ss > se
    sidx, g = rows.num("subject_index"), rows.group()
    hsp = [-np.where(minus, ql - qs + 1, qe), np.where(minus, ql - qe, qs), -np.where(minus, ss, se),
           np.where(minus, se, ss), -sc]       # then the E-value (lexsort's order: last key first)
    if not np.isnan(e).any() and _in_order(qpos, g, sidx, e, hsp[::-1]):
        return np.arange(n)
    ev = np.unique(e, return_inverse=True)[1].ravel()   # the order's rank
    pos = np.arange(n)
    o = lexsort_packed([pos] + hsp + [ev, g, qpos])
    change = np.r_[True, (qpos[o][1:] != qpos[o][:-1]) | (g[o][1:] != g[o][:-1])]
    starts = np.flatnonzero(change)
    sizes = np.diff(np.r_[starts, n])
    best = o[starts]
    seen = np.minimum.reduceat(o, starts)
    gorder = lexsort_packed((seen, -sidx[best], -sc[best], ev[best], qpos[best]))
    first = np.cumsum(np.r_[0, sizes[gorder][:-1]])
    at = np.repeat(starts[gorder] - first, sizes[gorder]) + np.arange(n)
    return o[at]


def _in_order(qpos, g, sidx, e, keys):
    """Whether :func:`order_rows`' order of these rows (``qpos`` non-decreasing) is their own:
    each (result, subject group) one run, its rows ascending in (``e``, *``keys``: most
    significant first) and the runs of a result ascending in their first row's (E-value, -score,
    -subject index)."""
    def ascending(cols, pair):       # lexicographic, for the adjacent pairs where ``pair``
        for k in cols:
            a, b = k[:-1], k[1:]
            if (pair & (a > b)).any():
                return False
            pair = pair & (a == b)
        return True

    one_run = (qpos[1:] == qpos[:-1]) & (g[1:] == g[:-1])
    if not ascending([e] + keys, one_run):
        return False
    starts = np.flatnonzero(np.r_[True, ~one_run])
    rq, rg = qpos[starts], g[starts]
    same_q = rq[1:] == rq[:-1]
    if not ascending([e[starts], keys[0][starts], -sidx[starts]], same_q):
        return False
    shared = np.r_[same_q, False] | np.r_[False, same_q]     # runs of results with several
    if not shared.any():
        return True
    span = int(rg.max()) - int(rg.min()) + 1
    if (int(rq[-1]) + 1) * span >= 1 << 62:
        return False
    code = rq[shared] * span + (rg[shared] - int(rg.min()))
    return len(np.unique(code)) == len(code)      # no group in two runs of one result


def _formatted(values, fmt):
    """(texts, index): ``fmt(v)`` of each distinct float of ``values`` (bit for bit; formatted
    once) and each value's place in it."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    u, inv = np.unique(v.view(np.int64), return_inverse=True)
    return [fmt(x) for x in u.view(np.float64).tolist()], inv.ravel()


def _percent(part, whole):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(whole > 0, part / np.where(whole > 0, whole, 1) * 100, 0.0)


def column_text(rows, name, qpos=None, qlens=None):
    """The text (or ints, written as ``str`` writes them) of column ``name`` for every row, as the
    ``FIELDS`` getter gives it for each record (:func:`column_values` as lists)."""
    return column_text_of(column_values(rows, name, qpos, qlens))


def column_text_of(value):
    """The list :func:`column_text` makes of a :func:`column_values` answer."""
    kind, v = value
    if kind == "int":
        return v.tolist()
    if kind == "coded":
        texts, idx = v
        return list(map(texts.__getitem__, idx.tolist()))
    return v


def column_values(rows, name, qpos=None, qlens=None):
    """Column ``name`` of every row as (kind, value): ("int", int64 array: each written as ``str``
    writes it), ("coded", (texts, index array): row i's text is ``texts[index[i]]``) or ("text",
    list of str). ``qpos``/``qlens``: each row's result and its query length (qcovs: coverage per
    result and subject; ``qlens`` may be a function that makes them)."""
    if name in _ID_COLUMNS:
        return "coded", rows.text_codes(_ID_COLUMNS[name])
    if name in _INT_COLUMNS:
        return "int", rows.num(name)
    if name == "evalue":
        return "coded", _formatted(rows.num("evalue"), format_evalue)
    if name == "bitscore":
        return "coded", _formatted(rows.num("bitscore"), format_bitscore)
    if name == "score":
        sc = rows.num("score")
        return "int", np.where(sc > 0, sc, -1)
    if name == "mismatch":
        return "int", rows.num("length") - rows.num("nident") - rows.num("gaps")
    if name in ("pident", "ppos"):
        part = rows.num("nident" if name == "pident" else "positive")
        fmt = ("%.3f" if name == "pident" else "%.2f").__mod__
        return "coded", _formatted(_percent(part, rows.num("length")), fmt)
    if name in ("qseq", "sseq", "btop"):
        q, s = rows.aligned()
        return "text", q if name == "qseq" else s if name == "sseq" else list(map(btop, q, s))
    if name in ("stitle", "salltitles"):
        return "text", [t or i for t, i in zip(rows.text("subject_title"), rows.text("subject_id"))]
    if name == "sstrand":
        return "text", rows.text("sstrand")
    if name == "qcovhsp":
        qs, qe, ql = rows.num("qstart"), rows.num("qend"), rows.num("qlen")
        pct = 100.0 * (np.abs(qe - qs) + 1).astype(np.float64) / ql.astype(np.float64)
        return "int", np.where(pct < 99, pct + 0.5, pct).astype(np.int64)
    if name == "qcovs":
        return "int", np.array(_qcovs(rows, qpos, qlens() if callable(qlens) else qlens), dtype=np.int64)
    raise KeyError(name)


_ID_COLUMNS = {"qseqid": "query_id", "qacc": "query_id", "qaccver": "query_id", "sseqid": "subject_id",
               "sallseqid": "subject_id", "sacc": "subject_id", "saccver": "subject_id"}
_INT_COLUMNS = ("qlen", "slen", "qstart", "qend", "sstart", "send", "length", "nident", "positive",
                "gapopen", "gaps")


def _qcovs(rows, qpos, qlens):
    """Per row: the query coverage of all HSPs of its (result, subject), as ``query_coverage``."""
    keys = list(zip(qpos.tolist(), rows.num("subject_index").tolist(), rows.text("subject_id")))
    ranges = {}
    for k, a, b in zip(keys, rows.num("qstart").tolist(), rows.num("qend").tolist()):
        ranges.setdefault(k, []).append((a, b))
    qlen = dict(zip(qpos.tolist(), qlens.tolist()))
    cov = {k: covered_percent(v, qlen[k[0]]) for k, v in ranges.items()}
    return list(map(cov.__getitem__, keys))
