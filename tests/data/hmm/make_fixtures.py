"""Regenerate the small HMM fixtures of this folder (see README.md). Run from any directory."""
import gzip
import os
import re

import pyhmmer

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data", "hmms", "txt", "PF02826.hmm")
NODES = 12


def truncated_3f():
    """PF02826 (Pfam 33.1, HMMER3/f) cut to its first NODES nodes; the last node gets the
    original last node's transition line (HMMER's end-of-model form)."""
    lines = open(SRC).read().splitlines()
    hmm_i = next(i for i, ln in enumerate(lines) if ln.startswith("HMM "))
    head = [re.sub(r"^LENG\s+\d+", f"LENG  {NODES}", ln) for ln in lines[:hmm_i]]
    head = [ln for ln in head if not ln.startswith(("CKSUM", "MAXL"))]
    first = next(i for i in range(hmm_i, len(lines)) if lines[i].split()[:1] == ["1"])
    body = lines[hmm_i:first]                           # HMM, names, [COMPO], node-0 insert and transitions
    nodes = lines[first:]
    out = head + body
    for k in range(NODES):
        out += nodes[3 * k:3 * k + 3]
    out[-1] = [ln for ln in lines if ln.strip()][-2]    # the original last transition line
    return out + ["//"]


def downgrade(lines, version):
    """The same model written in an older 3/x format (fields as p7_hmmfile.c reads them)."""
    out = []
    for ln in lines:
        if ln.startswith("HMMER3/f"):
            ln = "HMMER3/" + version + ln[8:]
        if version < "f" and ln.startswith("MM "):
            continue
        if version < "e" and ln.startswith("CONS "):
            continue
        toks = ln.split()
        if toks and toks[0].isdigit() and len(toks) == 26:   # match line: k, 20 values, MAP CONS RF MM CS
            annot = toks[21:]
            if version < "f":
                annot = annot[:3] + annot[4:]                 # drop MM
            if version < "e":
                annot = annot[:1] + annot[2:]                 # drop CONS
            ln = ln[:ln.index(toks[20]) + len(toks[20])] + "".join(f" {a:>6s}" if i == 0 else f" {a}"
                                                                  for i, a in enumerate(annot))
        if version == "a" and ln.startswith("STATS LOCAL"):
            kind, a, b = toks[2], toks[3], toks[4]
            if kind == "MSV":
                continue
            if kind == "VITERBI":
                out.append(f"STATS LOCAL VLAMBDA {b}")
                out.append(f"STATS LOCAL VMU     {a}")
                continue
            if kind == "FORWARD":
                out.append(f"STATS LOCAL FTAU    {a}")
                continue
        out.append(ln)
    return out


if __name__ == "__main__":
    base = truncated_3f()
    for v in "abcdef":
        text = "\n".join(downgrade(base, v)) + "\n"
        with open(os.path.join(HERE, f"tiny.3{v}.hmm"), "w") as fh:
            fh.write(text)
    with open(os.path.join(HERE, "tiny.3f.hmm"), "rb") as fh, gzip.open(os.path.join(HERE, "tiny.3f.hmm.gz"), "wb") as gz:
        gz.write(fh.read())
