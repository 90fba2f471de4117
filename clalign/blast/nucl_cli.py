"""``clalign blastn``: nucleotide BLAST with BLAST+'s option names and tabular output.

Output equals BLAST+ 2.12 ``blastn`` for ``-task megablast`` (default) and ``-task blastn``
/ ``blastn-short``, gapped or ``-ungapped``; ``-task dc-megablast`` is refused with a one-line
error.
"""
from __future__ import annotations

import os

import click

from ..errors import InputError, ParameterError


def _yes_no(name, value):
    v = str(value).lower()
    if v in ("yes", "true", "1"):
        return True
    if v in ("no", "false", "0"):
        return False
    raise ParameterError(f"{name}: 'yes' or 'no' (DUST with other settings is not implemented), not {value!r}")


@click.command("blastn", help="Nucleotide BLAST search; output equals BLAST+ 2.12 blastn "
               "(-task megablast, blastn, blastn-short).")
@click.option("-query", "query", required=True, type=click.Path(dir_okay=False),
              help="Query FASTA file (nucleotide).")
@click.option("-db", "db", required=True, type=click.Path(),
              help="Database: a FASTA file, a `clalign makedb -dbtype nucl` folder or a "
                   "makeblastdb nucleotide database.")
@click.option("-out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (default or '-': standard output). Written whole or not at all.")
@click.option("--force", is_flag=True, help="Overwrite an existing -out file.")
@click.option("-task", "task", default="megablast", show_default=True,
              help="megablast, blastn or blastn-short (dc-megablast: not implemented).")
@click.option("-evalue", "evalue", type=float, default=10.0, show_default=True, help="E-value threshold.")
@click.option("-word_size", "word_size", type=click.IntRange(min=4), default=None, help="Word size (default: the task's).")
@click.option("-reward", "reward", type=click.IntRange(min=1), default=None, help="Match reward (default: the task's).")
@click.option("-penalty", "penalty", type=click.IntRange(max=-1), default=None, help="Mismatch penalty (default: the task's).")
@click.option("-gapopen", "gapopen", type=click.IntRange(min=0), default=None, help="Gap opening cost.")
@click.option("-gapextend", "gapextend", type=click.IntRange(min=0), default=None, help="Gap extension cost.")
@click.option("-dust", "dust", default="yes", show_default=True, help="DUST the query (level 20, window 64, linker 1): yes or no.")
@click.option("-lcase_masking", "lcase_masking", is_flag=True, help="Mask lower-case query letters at the lookup.")
@click.option("-strand", "strand", type=click.Choice(["both", "plus", "minus"]), default="both",
              show_default=True, help="Query strands to search.")
@click.option("-max_target_seqs", "max_target_seqs", type=click.IntRange(min=1), default=500,
              show_default=True, help="Subjects kept per query.")
@click.option("-max_hsps", "max_hsps", type=click.IntRange(min=1), default=None, help="HSPs kept per subject.")
@click.option("-outfmt", "outfmt", default="6", show_default=True,
              help="6 or 7, optionally followed by BLAST+ column names ('6 qseqid sseqid evalue').")
@click.option("-num_threads", "num_threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="CPU threads: subjects and their pieces are searched concurrently.")
@click.option("-dbsize", "dbsize", type=click.IntRange(min=0), default=0, help="Effective database length.")
@click.option("-searchsp", "searchsp", type=click.IntRange(min=0), default=0, help="Effective search space.")
@click.option("-perc_identity", "perc_identity", type=click.FloatRange(0, 100), default=0.0,
              help="Minimum percent identity of reported HSPs.")
@click.option("-ungapped", "ungapped", is_flag=True, help="Ungapped search: no gapped extension (E-values per HSP, as blastn).")
@click.option("--device", "device", default=None,
              help="OpenCL device P:D (see `clalign devices`) for the scan, lookup and "
                   "mini-extension, and for -task blastn/blastn-short the diagonal test and "
                   "ungapped extension (the tuning table may keep CPU devices on the CPU path).")
def blastn(query, db, out, force, task, evalue, word_size, reward, penalty, gapopen, gapextend,
           dust, lcase_masking, strand, max_target_seqs, max_hsps, outfmt, num_threads, dbsize,
           searchsp, perc_identity, ungapped, device):
    from .. import cl_early

    if device is not None:
        cl_early.start(device)   # the device's context while the engine is imported
    from ..runtime.gcpause import paused
    from ..runtime.jit import preload
    from .nucl_preload import stages

    # no full collections from here (runtime.gcpause): numba's import now runs beside the
    # engine's, before run_blastn's own pause, and the two imports made one without it
    with paused():
        # numba's import and the set-up's cache loads, which the query set-up (DUST first) and
        # so the device's first block wait for, while this thread imports the engine
        loader = preload(stages(device))
        from ..output import parse_outfmt
        from ..outfile import atomic_output, plan_outputs
        from .blastn import run_blastn, tabular_text
        from .nucl_setup import BlastnOptions

        kind, columns = parse_outfmt(outfmt, extra=())
        if not os.path.isfile(query):
            raise InputError("no such query file", query)
        dust_on = _yes_no("-dust", dust)
        opts = BlastnOptions(task=task, word_size=word_size or 0, reward=reward or 0, penalty=penalty or 0,
                             gap_open=-1 if gapopen is None else gapopen,
                             gap_extend=-1 if gapextend is None else gapextend,
                             evalue=evalue,
                             dust=dust_on, lcase_masking=lcase_masking, strand=strand,
                             max_target_seqs=max_target_seqs, max_hsps=max_hsps or 0, dbsize=dbsize,
                             searchsp=searchsp, perc_identity=perc_identity, ungapped=ungapped)
        plan_outputs({"-out": out or "-"}, inputs=[query, db], force=force)
        results = run_blastn(query, db, opts, num_threads=num_threads, device=device, table=True)
        text = tabular_text(results, columns=columns, comments=kind == "7", database=db)
    with atomic_output(out, force=force) as fh:
        fh.write(text)
    loader.join()    # no load left running past the command (in-process callers)
