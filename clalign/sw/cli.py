"""``clalign sw``: Smith-Waterman database search with BLAST+-style options and output.

Hits: every subject with E-value <= ``-evalue`` (blastp 2.12's statistics for the matrix and gap
costs), at most ``-max_target_seqs`` per query, in BLAST+'s order, each with its exact alignment.
``-outfmt``: ``6`` / ``7`` BLAST tabular (optionally followed by column names, e.g.
``"6 qseqid sseqid pident length evalue bitscore qseq sseq"``), ``tsv`` (clalign's columns,
default) or ``json`` (with CIGAR and aligned strings); see :mod:`clalign.output`.
The output file is written atomically (:mod:`clalign.outfile`): an error or a signal leaves no
file, and an existing file is only replaced with ``--force``.
"""
from __future__ import annotations

import io
import os

import click

from ..errors import InputError
from ..output import parse_outfmt, write_json, write_tabular, write_tsv
from ..outfile import atomic_output, plan_outputs

#: Gap costs up to 2^19 each (their sum stays within what the kernels' scoring set-up accepts).
MAX_GAP = 1 << 19
#: BLAST+'s largest -max_target_seqs.
MAX_TARGETS = 2 ** 31 - 1


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


@click.command("sw")
@click.option("-query", "query", required=True, type=click.Path(dir_okay=False),
              help="Query FASTA file (protein).")
@click.option("-db", "db", required=True, type=click.Path(),
              help="Database: a folder made by `clalign makedb` or a FASTA file.")
@click.option("-matrix", "matrix", default="BLOSUM62", show_default=True,
              help="Scoring matrix (BLOSUM45/50/62/80/90, PAM30/70/250; with gap costs BLAST+ has statistics for).")
@click.option("-gapopen", "gapopen", type=click.IntRange(0, MAX_GAP), default=11, show_default=True,
              help="Gap opening penalty (a gap of k residues costs gapopen + k * gapextend).")
@click.option("-gapextend", "gapextend", type=click.IntRange(0, MAX_GAP), default=1, show_default=True,
              help="Gap extension penalty.")
@click.option("-max_target_seqs", "max_target_seqs", type=click.IntRange(1, MAX_TARGETS), default=500, show_default=True,
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
              help="Output file (default or '-': standard output). Written whole or not at all.")
@click.option("--force", is_flag=True, help="Overwrite an existing -out file (never done without it).")
@click.option("--device", "device", default=None,
              help="OpenCL device P:D (see `clalign devices`); several as P:D,P:D split the database.")
@click.option("--verbose", "verbose", is_flag=True, default=False,
              help="Report the kernel choice (intra-task threshold and the rates behind it) on stderr.")
def sw(query, db, matrix, gapopen, gapextend, max_target_seqs, evalue, dbsize, searchsp, outfmt, out, force, device,
       verbose):
    """Smith-Waterman search of protein queries against a database (exact scores)."""
    from .. import cl_early

    cl_early.start(device)   # the device's context while the engines are imported
    from ..data import as_database
    from .report import sw_search

    parse_outfmt(outfmt)
    if not os.path.isfile(query):
        raise InputError("not a regular file" if os.path.exists(query) else "no such query file", query)
    plan_outputs({"-out": out or "-"}, inputs=[query, db], force=force)
    database = as_database(db)

    def report(msg):
        click.echo(msg, err=True)

    results = sw_search(query, database, matrix=matrix, gap_open=gapopen, gap_extend=gapextend,
                        top=max_target_seqs, evalue=evalue, dbsize=dbsize, searchsp=searchsp, device=device,
                        progress=True, report=report,
                        verbose=report if verbose else None)
    text = format_results(results, outfmt, database=db)
    with atomic_output(out, force=force) as fh:
        fh.write(text)
