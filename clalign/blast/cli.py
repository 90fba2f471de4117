"""``clalign blastp``: protein BLAST with BLAST+'s option names and output (``-outfmt 6/7``).

Results equal BLAST+ 2.12's ``blastp -comp_based_stats 0`` with the same ``-task`` (blastp or
blastp-fast), ``-seg``/``-soft_masking`` and other options. BLAST+'s own default is
``-comp_based_stats 2`` (composition-based statistics), which changes scores and E-values; it is
not implemented yet, so compare with a BLAST+ run given ``-comp_based_stats 0``.
"""
from __future__ import annotations

import os
import sys

import click

from ..errors import InputError


def _not_yet(option, value, note=""):
    raise InputError(f"{option} {value} is not implemented yet{note}")


def _start_runtime(device):
    """The device's Runtime made on a thread: the OpenCL platform and context (~0.3 s on the
    H100 host, mostly inside the driver) overlap the command's imports and numba's start on the
    search's preload thread (``runtime.jit``). Errors are left to the search, which asks for the
    same Runtime and reports them."""
    from .. import cl_early as early

    early.start(device)     # the driver's platforms and context, while pyopencl is imported

    def make():
        from ..runtime import Runtime

        Runtime.get(device)

    early.ahead("clalign-runtime", make)


def _boolean(option, value) -> bool:
    """A BLAST+ Boolean argument (true/false, t/f, yes/no, 1/0)."""
    v = str(value).strip().lower()
    if v in ("true", "t", "yes", "y", "1"):
        return True
    if v in ("false", "f", "no", "n", "0"):
        return False
    raise InputError(f"{option} {value}: expected true or false")


@click.command("blastp", help="Protein BLAST search; output equals BLAST+ 2.12 blastp "
               "-comp_based_stats 0 with the same options. Note: BLAST+'s default "
               "-comp_based_stats is 2, which is not implemented yet here; give BLAST+ "
               "-comp_based_stats 0 when comparing.")
@click.option("-query", "query", required=True, type=click.Path(dir_okay=False),
              help="Query FASTA file (protein).")
@click.option("-db", "db", required=True, type=click.Path(),
              help="Database: a FASTA file or a folder made by `clalign makedb`.")
@click.option("-out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (default or '-': standard output). Written whole or not at all.")
@click.option("--force", is_flag=True, help="Overwrite an existing -out file (never done without it).")
@click.option("-evalue", "evalue", type=float, default=10.0, show_default=True,
              help="E-value threshold.")
@click.option("-max_target_seqs", "max_target_seqs", type=click.IntRange(min=1), default=500,
              show_default=True, help="Subjects kept per query.")
@click.option("-max_hsps", "max_hsps", type=click.IntRange(min=1), default=None,
              help="HSPs kept per subject (default: all).")
@click.option("-outfmt", "outfmt", default="6", show_default=True,
              help="Output format: 6 (tabular) or 7 (tabular with comments), optionally followed "
                   "by BLAST+ column names ('6 qseqid sseqid evalue').")
@click.option("-num_threads", "num_threads", type=click.IntRange(min=1), default=1,
              show_default=True, help="CPU threads (queries in parallel).")
@click.option("-comp_based_stats", "comp_based_stats", default="0", show_default=True,
              help="Composition-based statistics: 0 only (BLAST+'s default 2 is not implemented yet).")
@click.option("-seg", "seg", default="no", show_default=True,
              help="SEG filtering of the query: 'yes' (window 12, locut 2.2, hicut 2.5), "
                   "'window locut hicut', or 'no'.")
@click.option("-soft_masking", "soft_masking", default="false", show_default=True,
              help="Apply the SEG mask to the lookup table only ('true'); default: masked "
                   "query residues become X for the whole search, as BLAST+'s blastp.")
@click.option("-matrix", "matrix", default="BLOSUM62", show_default=True,
              help="Score matrix (BLAST+'s built-in BLOSUM45/50/62/80/90, PAM30/70/250).")
@click.option("-gapopen", "gapopen", type=click.IntRange(min=0), default=None,
              help="Gap opening cost (default: BLAST+'s for the matrix).")
@click.option("-gapextend", "gapextend", type=click.IntRange(min=0), default=None,
              help="Gap extension cost (default: BLAST+'s for the matrix).")
@click.option("-word_size", "word_size", type=click.IntRange(min=2), default=None,
              help="Word size: 2-5 (default 3), or 6 or 7 with the compressed-alphabet "
                   "lookup (default 6 for -task blastp-fast).")
@click.option("-threshold", "threshold", type=click.FloatRange(min=0), default=None,
              help="Neighbourhood word score threshold (default: BLAST+'s for the matrix, 11 for "
                   "BLOSUM62; 21 for -task blastp-fast).")
@click.option("-window_size", "window_size", type=click.IntRange(min=0), default=None,
              help="Two-hit window (default: BLAST+'s for the matrix, 40 for BLOSUM62).")
@click.option("-dbsize", "dbsize", type=click.IntRange(min=0), default=0,
              help="Effective database length for E-values (default: the real one).")
@click.option("-searchsp", "searchsp", type=click.IntRange(min=0), default=0,
              help="Effective search space (then plain Karlin-Altschul E-values, as BLAST+).")
@click.option("--device", "device", default=None,
              help="OpenCL device P:D (see `clalign devices`) for the word-hit, two-hit and ungapped "
                   "phases; default: all phases on the CPU.")
@click.option("-task", "task", type=click.Choice(["blastp", "blastp-fast"]), default="blastp",
              show_default=True, help="Task: blastp, or blastp-fast (word size 6, threshold 21, "
                                      "compressed-alphabet lookup; on the CPU even with --device).")
@click.option("--stage-process/--no-stage-process", "stage_process", default=None,
              help="With --device and -num_threads > 1: run the gapped stages in a second process "
                   "(its own interpreter lock and numba start); --no-stage-process keeps them on "
                   "threads of this one. Same results. Default: a second process where the "
                   "machine has the cores for it and the search few queries "
                   "(STAGE_PROCESS_MIN_CPUS, STAGE_PROCESS_MAX_QUERIES in clalign.blast.blastp).")
def blastp(query, db, out, force, evalue, max_target_seqs, max_hsps, outfmt, num_threads,
           comp_based_stats, seg, soft_masking, matrix, gapopen, gapextend, word_size, threshold,
           window_size, dbsize, searchsp, device, task, stage_process):
    if device is not None:
        _start_runtime(device)
    from ..output import parse_outfmt
    from ..outfile import atomic_output, plan_outputs
    from .blastp import run_blastp, tabular_lines
    from .options import blastp_options
    from .seg import parse_seg

    if str(comp_based_stats) not in ("0", "F", "f"):
        _not_yet("-comp_based_stats", comp_based_stats,
                 " (BLAST+'s default is 2; clalign implements 0: run BLAST+ with -comp_based_stats 0 to compare)")
    seg_params = parse_seg(seg)
    soft = _boolean("-soft_masking", soft_masking)
    kind, columns = parse_outfmt(outfmt, extra=())
    if not os.path.isfile(query):
        raise InputError("no such query file", query)
    plan_outputs({"-out": out or "-"}, inputs=[query, db], force=force)
    opts = blastp_options(matrix=matrix, word_size=word_size, threshold=threshold,
                          window=window_size, gap_open=gapopen, gap_extend=gapextend,
                          evalue=evalue, max_target_seqs=max_target_seqs,
                          max_hsps=max_hsps or 0, dbsize=dbsize, searchsp=searchsp, task=task,
                          seg=seg_params, soft_masking=soft)
    if device is not None and not opts.device_ok:
        print(f"clalign: note: word size {opts.word_size}"
              f"{' (compressed alphabet)' if opts.compressed else ''}"
              f"{', one-hit' if opts.window == 0 else ''} runs on the CPU: the device kernels "
              "take word size 3 with the two-hit rule", file=sys.stderr)
        device = None
    results = run_blastp(query, db, opts, num_threads=num_threads, device=device,
                         stage_process=stage_process)
    lines = tabular_lines(results, columns=columns, comments=kind == "7",
                          database=db)      # as given, as BLAST+ prints it ("# Database: sub/db")
    text = "".join(line + "\n" for line in lines)
    with atomic_output(out, force=force) as fh:
        fh.write(text)
