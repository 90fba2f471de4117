#!/usr/bin/env python3
"""The user's other choice, as a whole process: ``pyhmmer.hmmsearch(cpus=N)`` reading the FASTA
and the HMM file itself, writing ``--tblout``. Timed from the outside by the benchmarks (start-up
and FASTA reading included); prints its own split on stderr.

    python3 -m tools.pyhmmer_hmmsearch HMMFILE SEQDB.fa --cpus 16 --tblout OUT.tbl [--domtblout OUT.dom]
"""
import argparse
import sys
import time


def main(argv=None):
    t0 = time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hmmfile")
    ap.add_argument("seqdb")
    ap.add_argument("--cpus", type=int, default=0)
    ap.add_argument("--tblout", default=None)
    ap.add_argument("--domtblout", default=None)
    a = ap.parse_args(argv)
    import pyhmmer
    from pyhmmer.easel import Alphabet, SequenceFile
    from pyhmmer.plan7 import HMMFile

    aa = Alphabet.amino()
    with SequenceFile(a.seqdb, digital=True, alphabet=aa) as sf:
        seqs = sf.read_block()
    with HMMFile(a.hmmfile) as hf:
        hmms = list(hf)
    t1 = time.perf_counter()
    out = open(a.tblout, "wb") if a.tblout else None
    dom = open(a.domtblout, "wb") if a.domtblout else None
    for i, hits in enumerate(pyhmmer.hmmsearch(hmms, seqs, cpus=a.cpus)):
        if out is not None:
            hits.write(out, format="targets", header=(i == 0))
        if dom is not None:
            hits.write(dom, format="domains", header=(i == 0))
    for fh in (out, dom):
        if fh is not None:
            fh.close()
    t2 = time.perf_counter()
    print(f"pyhmmer_hmmsearch: {len(hmms)} models x {len(seqs)} sequences, cpus={a.cpus}: read {t1 - t0:.2f} s, "
          f"search {t2 - t1:.2f} s, total {t2 - t0:.2f} s (in process)", file=sys.stderr)


if __name__ == "__main__":
    main()
