#!/usr/bin/env python3
"""Per-model costs of ``clalign hmmsearch`` with many models, in one process (this machine).

Runs :func:`clalign.hmm.search.hmmsearch` on HMMFILE x DB and prints the wall time, the stage
sums of its ``stats`` (device MSV stage, MSV kernels, bias + Viterbi stage, pyhmmer), the
number of distinct MSV programs the search asked for, and per model: wall / models. Writes
``--tblout`` (to compare runs). ``--slane`` forces the GPU code path on a CPU OpenCL device
(S-lane MSV kernels, kernel plan, byte-based MSV test: what a GPU runs, slowly); ``--viterbi
device|pyhmmer`` sets ``CLALIGN_HMM_VITERBI``; ``--profile N`` prints cProfile's N costliest
calls (cumulative).

    python3 -m tools.bench_hmm_models HMMFILE DB [--models 200] [--slane] [--viterbi device]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hmmfile")
    ap.add_argument("db")
    ap.add_argument("--models", type=int, default=0, help="first N models of the file only (0: all)")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--slane", action="store_true")
    ap.add_argument("--viterbi", choices=("device", "pyhmmer"), default=None)
    ap.add_argument("--tblout", default=None)
    ap.add_argument("--profile", type=int, default=0)
    a = ap.parse_args(argv)
    if a.viterbi:
        os.environ["CLALIGN_HMM_VITERBI"] = a.viterbi
    hmmfile = a.hmmfile
    if a.models:
        import tempfile

        text = open(hmmfile, "rb").read().split(b"//\n")
        fh = tempfile.NamedTemporaryFile(suffix=".hmm", delete=False)
        fh.write(b"//\n".join(text[:a.models]) + b"//\n")
        fh.close()
        hmmfile = fh.name
    if a.slane:
        import importlib

        never = (lambda caps, override=None: False)
        for name in ("engine", "kernel_choice", "kernel_plan"):
            try:
                importlib.import_module(f"clalign.hmm.{name}").use_striped = never
            except ImportError:          # an older tree (before the kernel plan), for comparisons
                pass
    from clalign.hmm.search import hmmsearch
    from clalign.hmm.tables import write_table
    from clalign.runtime import Runtime

    prof = cProfile.Profile() if a.profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    search = hmmsearch(hmmfile, a.db, cpus=a.cpu, engine="opencl")
    out = open(a.tblout, "wb") if a.tblout else None
    n = 0
    for i, res in enumerate(search):
        n += 1
        if out is not None:
            write_table(out, res.hits, "targets", i == 0, res.name_width)
    if prof:
        prof.disable()
    wall = time.perf_counter() - t0
    if out is not None:
        out.close()
    st = search.stats
    rt = Runtime.get(None)
    progs = {tuple(sorted(v.get("values", {}).items())) for v in getattr(search, "layout", [])}
    print(f"bench_hmm_models: {n} models x {st.sequences} sequences ({st.residues} residues), {rt.label}: "
          f"wall {wall:.2f} s ({wall / max(1, n) * 1e3:.1f} ms per model); database {st.load_seconds:.2f} s; "
          f"device MSV stage {st.device_seconds:.2f} s (kernels {st.kernel_seconds:.2f} s); "
          f"bias+Viterbi stage {st.vit_seconds:.2f} s; pyhmmer {st.pyhmmer_seconds:.2f} s summed; "
          f"{len(progs)} planned MSV programs{rt.build_note()}")
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(a.profile)
        print(buf.getvalue())


if __name__ == "__main__":
    main()
