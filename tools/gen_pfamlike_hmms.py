#!/usr/bin/env python3
"""Seeded Pfam-like profile HMMs, built and calibrated by pyhmmer from synthetic families.

For a realistic annotation benchmark (many models of Pfam's sizes against a proteome-scale
database) where Pfam itself cannot be downloaded. Family ``k`` (seed ``seed + k``):

* model length M: log-normal with median 150 states (Pfam-A's median is ~150-160) and sigma
  0.75, clipped to [20, 2000], so a few percent exceed 1,000 states as in Pfam;
* an ancestor of M residues drawn from HMMER's amino background; 6-24 members, each the
  ancestor with 20-60 % of its positions substituted (site rates vary: conserved and
  variable columns) and short deletions written as gaps; the members form an MSA;
* ``pyhmmer.plan7.Builder.build_msa`` turns the MSA into a model: HMMER's hmmbuild defaults
  (entropy weighting, priors) and its calibration, so every model has STATS lines.

Families are built in ``--jobs`` processes; the output file lists them in family order.

    python3 -m tools.gen_pfamlike_hmms -n 1000 --seed 1 -o pfamlike.hmm [--jobs 16]
"""
from __future__ import annotations

import argparse
import io
import os
import time

import numpy as np

AMINO = "ACDEFGHIKLMNPQRSTVWY"
#: HMMER's amino background (p7_AminoFrequencies), in AMINO order.
BG = np.array([0.0787945, 0.0151600, 0.0535222, 0.0668298, 0.0397062, 0.0695071, 0.0229198, 0.0590092,
               0.0594422, 0.0963728, 0.0237718, 0.0414386, 0.0482904, 0.0395639, 0.0540978, 0.0683364,
               0.0540687, 0.0673417, 0.0114135, 0.0304133])
BG = BG / BG.sum()


def family_msa(k: int, seed: int):
    """(name, list of aligned member strings) of family ``k``."""
    rng = np.random.default_rng(seed + k)
    M = int(np.clip(round(np.exp(rng.normal(np.log(150.0), 0.75))), 20, 2000))
    anc = rng.choice(20, size=M, p=BG)
    n = int(rng.integers(6, 25))
    rate = rng.beta(2, 5, size=M)                       # per-site substitution propensity
    level = rng.uniform(0.2, 0.6, size=n)               # per-member divergence
    rows = []
    for j in range(n):
        p = np.clip(rate * level[j] / rate.mean(), 0, 0.95)
        seq = anc.copy()
        sub = rng.random(M) < p
        seq[sub] = rng.choice(20, size=int(sub.sum()), p=BG)
        chars = np.array(list(AMINO))[seq]
        for _ in range(int(rng.integers(0, 3))):        # short deletions as gaps
            a = int(rng.integers(0, M))
            chars[a:a + int(rng.integers(1, 6))] = "-"
        rows.append("".join(chars))
    return f"SYNF{k:05d}", rows


def build_one(args):
    k, seed = args
    from pyhmmer.easel import Alphabet, TextMSA, TextSequence
    from pyhmmer.plan7 import Background, Builder

    name, rows = family_msa(k, seed)
    aa = Alphabet.amino()
    msa = TextMSA(name=name.encode(), sequences=[TextSequence(name=f"{name}_{j}".encode(), sequence=r)
                                                 for j, r in enumerate(rows)])
    builder = Builder(aa, seed=seed + k)
    hmm, _, _ = builder.build_msa(msa.digitize(aa), Background(aa))
    buf = io.BytesIO()
    hmm.write(buf)
    return k, hmm.M, buf.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    a = ap.parse_args(argv)
    import multiprocessing

    t0 = time.perf_counter()
    jobs = [(k, a.seed) for k in range(a.n)]
    with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
        built = sorted(pool.imap_unordered(build_one, jobs, chunksize=4))
    with open(a.out, "wb") as fh:
        for _, _, text in built:
            fh.write(text)
    Ms = np.array([m for _, m, _ in built])
    print(f"gen_pfamlike_hmms: {a.n} models, M median {int(np.median(Ms))}, mean {Ms.mean():.0f}, "
          f"max {Ms.max()}, {int((Ms > 1000).sum())} above 1,000; {time.perf_counter() - t0:.1f} s -> {a.out}")


if __name__ == "__main__":
    main()
