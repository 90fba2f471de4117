"""Regenerate the blastp golden files of ``tests/data/blastp/`` (needs BLAST+ 2.12 on PATH).

The synthetic database plants homologs of the queries (25-95 % identity, with insertions and
deletions, some inside long subjects, one beyond 90,000 residues where BLAST+ narrows the
subject window) among 300 background proteins with ``tools/gen_protein_db.py``'s length model and
uniform random residues. It is seeded, so the FASTA is the same on every run. Usage: ``python3 -m tools.blastp_golden``.
"""
from __future__ import annotations

import gzip
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "blastp"
from tools.gen_protein_db import generate

LETTERS = "ARNDCQEGHILKMFPSTWYV"
BASE = ["-task", "blastp", "-comp_based_stats", "0", "-seg", "no"]
# name -> (query file, database FASTA, extra options)
RUNS = {
    "queries_proteome": ("data/queries.faa", "data/proteome.faa.gz", ["-max_target_seqs", "500"]),
    "synth": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
              ["-max_target_seqs", "500"]),
    "synth_top5_hsp1": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
                        ["-max_target_seqs", "5", "-max_hsps", "1"]),
    "synth_e1e-5": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
                    ["-max_target_seqs", "500", "-evalue", "1e-5"]),
    # all X (skipped), 2 residues, lower case with '*' U O inside, trailing '*'
    "odd_proteome": ("tests/data/blastp/odd_queries.faa", "data/proteome.faa.gz", ["-max_target_seqs", "500"]),
    # U O J B Z X, lower case, trailing '*', lengths 1..5003; many weak HSPs per subject pair
    "blastdb_prot_e1000": ("tests/data/blastdb/prot.fa", "tests/data/blastdb/prot.fa",
                           ["-max_target_seqs", "500", "-evalue", "1000"]),
}


def _read(path):
    recs, name, seq = [], None, []
    op = gzip.open if str(path).endswith(".gz") else open
    with op(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if name:
                    recs.append((name, "".join(seq)))
                name, seq = line[1:].split()[0], []
            else:
                seq.append(line.strip())
    recs.append((name, "".join(seq)))
    return recs


def mutate(rng, seq, identity):
    """A homolog: each residue kept with p = identity, else substituted; 3 % indels."""
    out = []
    for c in seq:
        r = rng.random()
        if r < 0.015:
            continue
        if r < 0.03:
            out.append("".join(rng.choice(list(LETTERS), size=int(rng.integers(1, 5)))))
        out.append(c if rng.random() < identity else str(rng.choice(list(LETTERS))))
    return "".join(out)


def synth(seed=10):
    rng = np.random.default_rng(seed)
    queries = _read(ROOT / "data" / "queries.faa")[:3]
    cud = _read(ROOT / "tests" / "data" / "cudasw" / "cudasw_queries.fasta")  # the repository's copy
    queries += [cud[i] for i in (1, 5)]  # two longer CUDASW++ queries
    lengths, residues = generate(300, seed)
    bg = ["".join(rng.choice(list(LETTERS), size=n)) for n in lengths.tolist()]
    db = [(f"bg{i + 1}", s) for i, s in enumerate(bg)]
    k = 0
    for qi, (qname, qseq) in enumerate(queries):
        for ident in (0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95):
            k += 1
            h = mutate(rng, qseq, ident)
            if k % 5 == 0:      # inside a long subject
                flank = "".join(rng.choice(list(LETTERS), size=int(rng.integers(3000, 9000))))
                h = flank[:len(flank) // 2] + h + flank[len(flank) // 2:]
            db.insert(int(rng.integers(0, len(db))), (f"hom{k}_q{qi + 1}_id{int(ident * 100)}", h))
    giant = "".join(rng.choice(list(LETTERS), size=95000))
    h = mutate(rng, queries[0][1], 0.7)
    db.append(("giant_q1", giant[:60000] + h + giant[60000:]))
    return queries, db


def write(path, recs, gz=False):
    text = "".join(f">{name}\n" + "".join(seq[i:i + 60] + "\n" for i in range(0, len(seq), 60))
                   for name, seq in recs)
    if gz:  # mtime 0: the same bytes on every run
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(text.encode())
    else:
        Path(path).write_text(text)


def main():
    queries, db = synth()
    write(OUT / "synth_queries.faa", queries)
    write(OUT / "synth_db.faa.gz", db, gz=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (qf, dbf, extra) in RUNS.items():
            plain = Path(tmp) / (Path(dbf).name.replace(".gz", ""))
            if not plain.exists():
                op = gzip.open if dbf.endswith(".gz") else open
                plain.write_text(op(ROOT / dbf, "rt").read())
                subprocess.run(["makeblastdb", "-in", str(plain), "-dbtype", "prot", "-out",
                                str(plain)], check=True, stdout=subprocess.DEVNULL)
            cmd = ["blastp", "-query", str(ROOT / qf), "-db", str(plain), "-outfmt", "6"] + BASE + extra
            res = subprocess.run(cmd, check=True, capture_output=True, text=True)
            if res.stderr.strip():
                print(f"{name}: blastp says: {res.stderr.strip()}")
            (OUT / f"{name}.tsv").write_text(res.stdout)
            print(name, len(res.stdout.splitlines()), "lines:", " ".join(cmd[:1] + cmd[5:]))


if __name__ == "__main__":
    main()
