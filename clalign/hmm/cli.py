"""``clalign hmmsearch``: HMMER's hmmsearch with the MSV filter on an OpenCL device.

Same argument order and option names as HMMER (``hmmsearch [options] <hmmfile> <seqdb>``).
Outputs are written atomically (:mod:`clalign.outfile`): on an error or a signal none is left,
and an existing output file is only replaced with ``--force``.
"""
from __future__ import annotations

import os
import sys

import click

from ..outfile import atomic_output, plan_outputs
from .options import CLICK_TYPES, DEFAULTS, SearchOptions
from .choice import ENGINES


@click.command("hmmsearch", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("hmmfile", type=click.Path(dir_okay=False))
@click.argument("seqdb", type=click.Path())
@click.option("-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Direct the main (human-readable) output to this file, not stdout.")
@click.option("--tblout", type=click.Path(dir_okay=False), default=None,
              help="Save parseable table of per-sequence hits (HMMER's format).")
@click.option("--domtblout", type=click.Path(dir_okay=False), default=None,
              help="Save parseable table of per-domain hits (HMMER's format).")
@click.option("-E", "evalue", type=CLICK_TYPES["E"], default=DEFAULTS.E, show_default=True,
              help="Report sequences <= this E-value threshold.")
@click.option("--domE", "dom_evalue", type=CLICK_TYPES["domE"], default=DEFAULTS.domE, show_default=True,
              help="Report domains <= this E-value threshold.")
@click.option("--incE", "inc_evalue", type=CLICK_TYPES["incE"], default=DEFAULTS.incE, show_default=True,
              help="Consider sequences <= this E-value threshold as significant.")
@click.option("--incdomE", "incdom_evalue", type=CLICK_TYPES["incdomE"], default=DEFAULTS.incdomE,
              show_default=True,
              help="Consider domains <= this E-value threshold as significant.")
@click.option("--F1", "f1", type=CLICK_TYPES["F1"], default=DEFAULTS.F1, show_default=True,
              help="MSV filter threshold: promote hits with P <= F1.")
@click.option("-Z", "z", type=CLICK_TYPES["Z"], default=None,
              help="Number of comparisons done, for E-value calculation (default: number of sequences).")
@click.option("--cpu", "cpu", type=CLICK_TYPES["cpus"], default=0,
              help="Number of CPU threads for the post-MSV stages (pyhmmer). Default: all cores.")
@click.option("--device", "device", default=None,
              help="OpenCL device(s) for the MSV filter, as P:D (see `clalign devices`).")
@click.option("--filter-engine", "engine", type=click.Choice(ENGINES), default="auto", show_default=True,
              help="Who runs the MSV filter: the OpenCL device, pyhmmer's SSE code on the host (then the "
                   "whole search runs in pyhmmer), or auto: the faster of the two by measured rate.")
@click.option("--force", is_flag=True, help="Overwrite existing output files (never done without it).")
@click.option("--noali", is_flag=True, help="Accepted for compatibility: alignments are never shown.")
def hmmsearch(hmmfile, seqdb, output, tblout, domtblout, evalue, dom_evalue, inc_evalue, incdom_evalue, f1, z,
              cpu, device, engine, force, noali):
    """Search profile HMM(s) in HMMFILE against the sequence database SEQDB.

    SEQDB is a protein FASTA file (plain or gzip) or a database prepared with
    `clalign makedb`. The MSV filter runs on the OpenCL device; the sequences that pass it go
    through HMMER's remaining stages (pyhmmer), so hits, scores and E-values are hmmsearch's.
    """
    from .. import cl_early
    from .choice import remembered

    opts = SearchOptions(E=evalue, domE=dom_evalue, incE=inc_evalue, incdomE=incdom_evalue, F1=f1, Z=z, cpus=cpu)
    on_device = engine == "opencl" or (engine == "auto" and remembered(device, opts.threads) == "opencl") or (
        device is not None and engine != "pyhmmer")
    if on_device:
        # the device's context while the engine is imported ('auto' only where this machine's
        # choice is remembered as OpenCL: a CPU-only machine, which chooses pyhmmer, makes none)
        cl_early.start(device)
    plan_outputs({"-o": output or "-", "--tblout": tblout, "--domtblout": domtblout}, inputs=[hmmfile, seqdb], force=force)
    if on_device:        # the database read begins before the runtime and the search are imported
        from .startup import Loading

        Loading.early(seqdb)
    import time

    from .hmmtext import RAW
    from .search import hmmsearch as run_search, write_report
    from .tables import write_table

    t0 = time.perf_counter()
    search = run_search(hmmfile, seqdb, options=opts, device=device, progress=True, engine=engine)
    wanted = [output] + [p for p in (tblout, domtblout) if p]
    with atomic_output(wanted, force=force, binary=True) as fhs:   # all outputs in place, or none
        main_fh = fhs[0]
        tbl_fh = fhs[1] if tblout else None
        dom_fh = fhs[-1] if domtblout else None
        results = []
        for i, res in enumerate(search):
            results.append(res)
            if tbl_fh is not None:
                write_table(tbl_fh, res.hits, "targets", i == 0, res.name_width)
            if dom_fh is not None:
                write_table(dom_fh, res.hits, "domains", i == 0, res.name_width)
        argv = " ".join(["clalign", "hmmsearch"] + sys.argv[2:]) if len(sys.argv) > 1 else "clalign hmmsearch"
        trailer = _trailer(hmmfile, seqdb, argv)
        for fh in (tbl_fh, dom_fh):
            if fh is not None:
                fh.write(trailer.encode(*RAW))
        text = write_report(results, search.stats, hmmfile=hmmfile, seqdb=seqdb, output=output, tblout=tblout,
                            domtblout=domtblout, options=opts)
        main_fh.write(text.encode(*RAW))   # model names/descriptions as the file's bytes, as HMMER
    st = search.stats
    on_device = not st.engine.startswith("pyhmmer")
    passed = (f"{st.device_pass} passed the device MSV filter ({st.past_msv} past HMMER's MSV test)" if on_device
              else f"{st.past_msv} passed the MSV filter")
    tcups = f" ({st.cells / st.kernel_seconds / 1e12:.3g} TCUPS in the kernels)" if st.kernel_seconds else ""
    vit = f"bias, Viterbi and Forward filters on the device {st.vit_seconds:.2f} s, " if st.vit_seconds else ""
    stages = (f"device MSV stage {st.device_seconds:.2f} s summed over its threads{tcups}, {vit}"
              f"pyhmmer stages {st.pyhmmer_seconds:.2f} s "
              f"summed over models{_builds(device)}" if on_device else
              f"pyhmmer {st.pyhmmer_seconds:.2f} s summed over tasks")
    click.echo(f"clalign hmmsearch: {st.models} model(s), {st.sequences} sequences, {st.residues} residues; "
               f"MSV filter: {st.engine}; {passed}; {time.perf_counter() - t0:.2f} s (database "
               f"{st.load_seconds:.2f} s, {stages})", err=True)


def _builds(device):
    """', N kernel builds (X s)' for the summary line, when the runtime built any."""
    try:
        from ..runtime import Runtime

        rt = Runtime.get(device)
    except Exception:      # the summary must never fail the search
        return ""
    return rt.build_note()


def _trailer(hmmfile, seqdb, argv):
    """HMMER's tabular-output trailer (# Program ... # [ok]), naming clalign as the program."""
    import time

    from .. import __version__

    return ("#\n"
            "# Program:         clalign hmmsearch\n"
            f"# Version:         {__version__} (MSV filter on OpenCL; post-MSV stages by HMMER via pyhmmer)\n"
            "# Pipeline mode:   SEARCH\n"
            f"# Query file:      {hmmfile}\n"
            f"# Target file:     {seqdb}\n"
            f"# Option settings: {argv}\n"
            f"# Current dir:     {os.getcwd()}\n"
            f"# Date:            {time.ctime()}\n"
            "# [ok]\n")
