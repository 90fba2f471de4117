"""``clalign sw``: Smith-Waterman database search with BLAST+-style options and output.

Hits: every subject with E-value <= ``-evalue`` (blastp 2.12's statistics for the matrix and gap
costs), at most ``-max_target_seqs`` per query, in BLAST+'s order, each with its exact alignment.
``-outfmt``: ``6`` / ``7`` BLAST tabular (optionally followed by column names, e.g.
``"6 qseqid sseqid pident length evalue bitscore qseq sseq"``), ``tsv`` (clalign's columns,
default) or ``json`` (with CIGAR and aligned strings); see :mod:`clalign.output`.
The output file is written atomically (temporary file + rename): an error leaves no file.
"""
from __future__ import annotations

import io
import os
import sys
import tempfile

import click

from ..errors import InputError
from ..output import parse_outfmt, write_json, write_tabular, write_tsv


def format_results(results, outfmt: str, database: str = "") -> str:
    """The text of ``results`` in ``-outfmt`` form (see the module docstring)."""
    kind, cols = parse_outfmt(outfmt)
    buf = io.StringIO()
    if kind == "tsv":
        write_tsv(buf, results)
    elif kind == "json":
        write_json(buf, results)
    else:
        from .. import __version__

        write_tabular(buf, results, cols, comments=kind == "7", program=f"CLALIGN-SW {__version__}",
                      database=database)
    return buf.getvalue()


def write_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(folder):
        raise InputError("output folder does not exist", path)
    fd, tmp = tempfile.mkstemp(prefix=".clalign-sw-", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@click.command("sw")
@click.option("-query", "query", required=True, type=click.Path(dir_okay=False),
              help="Query FASTA file (protein).")
@click.option("-db", "db", required=True, type=click.Path(),
              help="Database: a folder made by `clalign makedb` or a FASTA file.")
@click.option("-matrix", "matrix", default="BLOSUM62", show_default=True,
              help="Scoring matrix (BLOSUM45/50/62/80/90, PAM30/70/250; with gap costs BLAST+ has statistics for).")
@click.option("-gapopen", "gapopen", type=click.IntRange(min=0), default=11, show_default=True,
              help="Gap opening penalty (a gap of k residues costs gapopen + k * gapextend).")
@click.option("-gapextend", "gapextend", type=click.IntRange(min=0), default=1, show_default=True,
              help="Gap extension penalty.")
@click.option("-max_target_seqs", "max_target_seqs", type=click.IntRange(min=1), default=500, show_default=True,
              help="Hits reported per query (the best by E-value, as BLAST+).")
@click.option("-evalue", "evalue", type=float, default=10.0, show_default=True,
              help="Report hits with E-value <= this (blastp 2.12 statistics).")
@click.option("-dbsize", "dbsize", type=click.IntRange(min=0), default=None,
              help="Database length for the statistics (BLAST+ -dbsize; default: the database's residues).")
@click.option("-searchsp", "searchsp", type=click.IntRange(min=0), default=None,
              help="Effective search space (BLAST+ -searchsp; turns off Spouge's correction as blastp does).")
@click.option("-outfmt", "outfmt", default="tsv", show_default=True,
              help='6 or 7 (BLAST tabular, optionally with column names: "6 qseqid sseqid evalue"), tsv or json.')
@click.option("-out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (default: standard output).")
@click.option("--device", "device", default=None, help="OpenCL device P:D (see `clalign devices`).")
def sw(query, db, matrix, gapopen, gapextend, max_target_seqs, evalue, dbsize, searchsp, outfmt, out, device):
    """Smith-Waterman search of protein queries against a database (exact scores)."""
    from ..data import as_database
    from .report import sw_search

    parse_outfmt(outfmt)
    if not os.path.isfile(query):
        raise InputError("no such query file", query)
    database = as_database(db)

    def report(msg):
        click.echo(msg, err=True)

    results = sw_search(query, database, matrix=matrix, gap_open=gapopen, gap_extend=gapextend,
                        top=max_target_seqs, evalue=evalue, dbsize=dbsize, searchsp=searchsp, device=device,
                        progress=True, report=report)
    text = format_results(results, outfmt, database=db)
    if out:
        write_atomic(out, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
