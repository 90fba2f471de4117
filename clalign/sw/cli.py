"""``clalign sw``: Smith-Waterman database search with BLAST+-style options.

Output (``-outfmt tsv``, default): one header line, then per hit
``qseqid  sseqid  score  qlen  slen`` (tab-separated), queries in file order, hits by score
descending with ties in database order. ``-outfmt json``: a list of per-query objects.
The output file is written atomically (:mod:`clalign.outfile`): an error or a signal leaves no
file, and an existing file is only replaced with ``--force``.
"""
from __future__ import annotations

import json
import os

import click

from ..errors import InputError
from ..outfile import atomic_output, plan_outputs

#: Gap costs up to 2^19 each (their sum stays within what the kernels' scoring set-up accepts).
MAX_GAP = 1 << 19
#: BLAST+'s largest -max_target_seqs.
MAX_TARGETS = 2 ** 31 - 1
TSV_COLUMNS = ("qseqid", "sseqid", "score", "qlen", "slen")


def format_tsv(results) -> str:
    lines = ["\t".join(TSV_COLUMNS)]
    for r in results:
        for h in r.hits:
            lines.append(f"{h.query_id}\t{h.subject_id}\t{h.score}\t{h.qlen}\t{h.slen}")
    return "\n".join(lines) + "\n"


def format_json(results) -> str:
    out = [{"query_id": r.query_id, "qlen": r.qlen, "seconds": round(r.seconds, 6),
            "hits": [{"subject_index": h.subject_index, "subject_id": h.subject_id, "score": h.score,
                      "slen": h.slen} for h in r.hits]} for r in results]
    return json.dumps(out, indent=1) + "\n"


@click.command("sw")
@click.option("-query", "query", required=True, type=click.Path(dir_okay=False),
              help="Query FASTA file (protein).")
@click.option("-db", "db", required=True, type=click.Path(),
              help="Database: a folder made by `clalign makedb` or a FASTA file.")
@click.option("-matrix", "matrix", default="BLOSUM62", show_default=True,
              help="Scoring matrix name (BLOSUM45/50/62/80/90, PAM30/70/250) or NCBI-format file.")
@click.option("-gapopen", "gapopen", type=click.IntRange(0, MAX_GAP), default=11, show_default=True,
              help="Gap opening penalty (a gap of k residues costs gapopen + k * gapextend).")
@click.option("-gapextend", "gapextend", type=click.IntRange(0, MAX_GAP), default=1, show_default=True,
              help="Gap extension penalty.")
@click.option("-max_target_seqs", "max_target_seqs", type=click.IntRange(1, MAX_TARGETS), default=10, show_default=True,
              help="Hits reported per query.")
@click.option("-outfmt", "outfmt", type=click.Choice(["tsv", "json"]), default="tsv", show_default=True,
              help="Output format.")
@click.option("-out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (default or '-': standard output). Written whole or not at all.")
@click.option("--force", is_flag=True, help="Overwrite an existing -out file (never done without it).")
@click.option("--device", "device", default=None, help="OpenCL device P:D (see `clalign devices`).")
def sw(query, db, matrix, gapopen, gapextend, max_target_seqs, outfmt, out, force, device):
    """Smith-Waterman search of protein queries against a database (exact scores)."""
    from ..data import as_database
    from .engine import parse_queries, sw_search

    if not os.path.isfile(query):
        raise InputError("not a regular file" if os.path.exists(query) else "no such query file", query)
    plan_outputs({"-out": out or "-"}, inputs=[query, db], force=force)
    queries = parse_queries(query)
    database = as_database(db)

    def report(msg):
        click.echo(msg, err=True)

    results = sw_search(queries, database, matrix=matrix, gap_open=gapopen, gap_extend=gapextend,
                        top=max_target_seqs, device=device, progress=True, report=report)
    text = format_tsv(results) if outfmt == "tsv" else format_json(results)
    with atomic_output(out, force=force) as fh:
        fh.write(text)
