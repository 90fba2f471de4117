"""Make the blastn end-to-end golden data (run in this folder; needs BLAST+ 2.12 on PATH).

- genome.fa: bases 1..150,000 of the first record of pyrodigal's bundled
  GCF_001457455.1_NCTC11397_genomic.fna.gz (a real bacterial genome), plus a synthetic 40 kb
  contig (random.seed(7)) with ambiguity codes (single IUPAC codes and N runs) and
  low-complexity stretches (homopolymers, short tandem repeats);
- reads.fa: 36 reads of 150-1,000 bases sampled from both records, 1-5 % substitutions, a few
  1-3 base indels, half reverse-complemented, some with IUPAC codes or N, some with a
  low-complexity stretch DUST masks, one lower-case stretch;
- short.fa: 12 reads of 20-45 bases from the real slice (random.seed(11)), some with one
  substitution, odd ones reverse-complemented;
- golden tables (gdb made by ``makeblastdb -in genome.fa -dbtype nucl -out gdb`` in a temporary
  folder, blastn run there so outfmt 7 says ``# Database: gdb``), file: arguments after
  ``blastn -db gdb``, see GOLDEN below;
- long_megablast.tsv, long_blastn.tsv: ``blastn -task T -query long_reads.fa -subject long.fa
  -outfmt 6`` on the data of :func:`long_subject` (made again by the test, not stored).
"""
import gzip
import os
import random
import subprocess

#: golden file -> blastn arguments (besides -db gdb)
GOLDEN = {
    "megablast.tsv": "-task megablast -query reads.fa -outfmt 6",
    "blastn.tsv": "-task blastn -query reads.fa -outfmt 6",
    "blastn-short.tsv": "-task blastn-short -query short.fa -outfmt 6",
    "mb_plus.tsv": "-task megablast -query reads.fa -strand plus -outfmt 6",
    "mb_minus_pid97.tsv": "-task megablast -query reads.fa -strand minus -perc_identity 97 -outfmt 6",
    "mb_cols.tsv": ("-task megablast -query reads.fa -lcase_masking -dust no -word_size 16 -max_hsps 1 "
                    "-outfmt '6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send "
                    "evalue bitscore score nident gaps qlen slen qseq sseq sstrand btop qcovs'"),
    "bn_1_2.tsv": ("-task blastn -query reads.fa -reward 1 -penalty -2 -gapopen 2 -gapextend 1 "
                   "-evalue 1e-5 -max_target_seqs 1 -outfmt 6"),
    "mb_dbsize.tsv": "-task megablast -query reads.fa -dbsize 1000000000 -outfmt 7",
    "bn_minus.tsv": "-task blastn -query reads.fa -strand minus -outfmt 6",
    "bn_w7.tsv": "-task blastn -query reads.fa -word_size 7 -outfmt 6",
    "bn_searchsp.tsv": "-task blastn -query reads.fa -searchsp 50000000 -outfmt 6",
    "ug_megablast.tsv": "-task megablast -ungapped -query reads.fa -outfmt 6",
    "ug_blastn.tsv": "-task blastn -ungapped -query reads.fa -outfmt 6",
    "ug_blastn-short.tsv": "-task blastn-short -ungapped -query short.fa -outfmt 6",
    "ug_opts.tsv": ("-task blastn -ungapped -query reads.fa -strand plus -perc_identity 90 -max_hsps 2 "
                    "-evalue 1e-3 -outfmt '6 qseqid sseqid pident length mismatch gapopen qstart qend "
                    "sstart send evalue bitscore score nident qseq sseq sstrand'"),
    "ug_mb_w16.tsv": ("-task megablast -ungapped -word_size 16 -dust no -max_target_seqs 1 "
                      "-query reads.fa -outfmt 7"),
}

#: golden file -> (CHUNK_SIZE, blastn arguments besides -db gdb): blastn 2.12 splitting the
#: query batch into chunks (it reads the chunk size from the environment variable CHUNK_SIZE)
SPLIT_GOLDEN = {
    "split300_blastn.tsv": ("300", "-task blastn -query reads.fa -outfmt 6"),
    "split300_megablast.tsv": ("300", "-task megablast -query reads.fa -outfmt 6"),
    "split300_blastn-short.tsv": ("300", "-task blastn-short -query short.fa -outfmt 6"),
    "split300_bn_plus.tsv": ("300", "-task blastn -strand plus -query reads.fa -outfmt 6"),
}

HERE = os.path.dirname(os.path.abspath(__file__))
COMP = str.maketrans("ACGTRYMKWSBDHVNacgtrymkwsbdhvn", "TGCAYRKMWSVHDBNtgcayrkmwsvhdbn")


def real_slice(n=150000):
    import pyrodigal

    path = os.path.join(os.path.dirname(pyrodigal.__file__), "tests", "data",
                        "GCF_001457455.1_NCTC11397_genomic.fna.gz")
    seq, started = [], False
    for line in gzip.open(path, "rt"):
        if line.startswith(">"):
            if started:
                break
            started = True
            continue
        seq.append(line.strip())
        if sum(map(len, seq)) >= n:
            break
    return "".join(seq)[:n].upper()


def synthetic(rng, n=40000):
    s = [rng.choice("ACGT") for _ in range(n)]
    for _ in range(30):
        s[rng.randrange(n)] = rng.choice("RYMKWSBDHVN")
    for _ in range(4):
        p = rng.randrange(n - 50)
        s[p:p + rng.randint(5, 40)] = "N" * rng.randint(5, 40)
    for unit in ("A", "CA", "GAT", "T"):
        p = rng.randrange(n - 200)
        rep = (unit * 200)[:rng.randint(40, 120)]
        s[p:p + len(rep)] = rep
    return "".join(s)[:n]


def long_subject(folder):
    """A 5,300,000-base random subject (numpy PCG64 seed 3; BLAST+ searches it in two chunks
    meeting at 4,999,900-5,000,000) and 12 reads of 200-800 bases around the chunk boundary
    (random.seed(2), 2 % substitutions, odd ones reverse-complemented) in ``folder``."""
    import numpy as np

    n = 5_300_000
    g = np.frombuffer(b"ACGT", dtype=np.uint8)[np.random.default_rng(3).integers(0, 4, n)].tobytes().decode()
    with open(os.path.join(folder, "long.fa"), "w") as fh:
        fh.write(">long1 synthetic\n" + "".join(g[i:i + 80] + "\n" for i in range(0, n, 80)))
    r = random.Random(2)
    with open(os.path.join(folder, "long_reads.fa"), "w") as fh:
        for k, c in enumerate([4999700, 4999850, 4999900, 4999950, 4999990, 5000000, 5000050,
                               5000100, 4999600, 100000, 5200000, 4999980]):
            m = r.randint(200, 800)
            a = c - m // 2
            q = "".join(r.choice("ACGT") if r.random() < 0.02 else x for x in g[a:a + m])
            if k % 2:
                q = q.translate(COMP)[::-1]
            fh.write(f">b{k}\n{q}\n")


def mutate(rng, r, rate):
    out = []
    for c in r:
        x = rng.random()
        if x < rate:
            out.append(rng.choice("ACGT"))
        elif x < rate + 0.002:
            continue
        elif x < rate + 0.004:
            out.append(c + rng.choice("ACGT"))
        else:
            out.append(c)
    return "".join(out)


def main():
    rng = random.Random(7)
    g1, g2 = real_slice(), synthetic(rng)
    with open(os.path.join(HERE, "genome.fa"), "w") as fh:
        for name, s in (("NZ_slice GCF_001457455.1 first 150 kb", g1), ("synth1 synthetic contig", g2)):
            fh.write(f">{name}\n" + "".join(s[i:i + 80] + "\n" for i in range(0, len(s), 80)))
    reads = []
    for k in range(36):
        g = g1 if k % 3 else g2
        n = rng.randint(150, 1000)
        p = rng.randrange(len(g) - n)
        r = mutate(rng, g[p:p + n], rng.uniform(0.01, 0.05))
        if k % 5 == 0:
            q = rng.randrange(len(r) - 60)
            r = r[:q] + (rng.choice(["A", "TG", "CAG"]) * 40)[:rng.randint(30, 60)] + r[q:]
        if k % 7 == 0:
            for _ in range(3):
                q = rng.randrange(len(r))
                r = r[:q] + rng.choice("RYKMSWN") + r[q + 1:]
        if k % 11 == 0:
            q = rng.randrange(len(r) - 30)
            r = r[:q] + "N" * 6 + r[q + 6:]
        if k == 4:
            q = rng.randrange(len(r) - 40)
            r = r[:q] + r[q:q + 30].lower() + r[q + 30:]
        if k % 2:
            r = r.translate(COMP)[::-1]
        reads.append(r)
    with open(os.path.join(HERE, "reads.fa"), "w") as fh:
        for k, r in enumerate(reads):
            fh.write(f">read{k} sampled\n{r}\n")
    import shlex
    import shutil
    import tempfile
    short = random.Random(11)
    g = g1
    with open(os.path.join(HERE, "short.fa"), "w") as fh:
        for k in range(12):
            n = short.randint(20, 45)
            p = short.randrange(len(g) - n)
            r = list(g[p:p + n])
            if k % 3 == 0:
                r[short.randrange(n)] = short.choice("ACGT")
            r = "".join(r)
            if k % 2:
                r = r.translate(COMP)[::-1]
            fh.write(f">short{k}\n{r}\n")
    tmp = tempfile.mkdtemp()
    try:
        for f in ("genome.fa", "reads.fa", "short.fa"):
            shutil.copy(os.path.join(HERE, f), tmp)
        subprocess.run(["makeblastdb", "-in", "genome.fa", "-dbtype", "nucl", "-out", "gdb"],
                       cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        for name, args in GOLDEN.items():
            with open(os.path.join(HERE, name), "w") as fh:
                subprocess.run(["blastn", "-db", "gdb"] + shlex.split(args), cwd=tmp, check=True,
                               stdout=fh)
        for name, (chunk, args) in SPLIT_GOLDEN.items():
            with open(os.path.join(HERE, name), "w") as fh:
                subprocess.run(["blastn", "-db", "gdb"] + shlex.split(args), cwd=tmp, check=True,
                               stdout=fh, env=dict(os.environ, CHUNK_SIZE=chunk))
        long_subject(tmp)
        for task in ("megablast", "blastn"):
            with open(os.path.join(HERE, f"long_{task}.tsv"), "w") as fh:
                subprocess.run(["blastn", "-task", task, "-query", "long_reads.fa", "-subject",
                                "long.fa", "-outfmt", "6"], cwd=tmp, check=True, stdout=fh)
    finally:
        shutil.rmtree(tmp)

if __name__ == "__main__":
    main()
