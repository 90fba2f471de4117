"""Make the gapped-extension golden files (see README.md): reads sampled from synthetic contigs,
searched with blastn 2.12 (megablast and -task blastn), one outfmt 6 line per read kept."""
import os
import random
import subprocess
import sys
import tempfile

COMP = str.maketrans("ACGTRYKMSWBDHVN", "TGCAYRMKSWVHDBN")
COLS = "qseqid sseqid qstart qend sstart send gaps mismatch score btop"
#: (file name, task, reward, penalty, gap open, gap extend); 0/0: linear gaps (greedy only)
RUNS = [("megablast", "megablast", 1, -2, 0, 0), ("blastn", "blastn", 2, -3, 5, 2),
        ("mb_2_3_0_0", "megablast", 2, -3, 0, 0), ("mb_1_2_2_2", "megablast", 1, -2, 2, 2),
        ("mb_2_3_5_2", "megablast", 2, -3, 5, 2), ("bn_1_3_2_2", "blastn", 1, -3, 2, 2),
        ("bn_2_7_4_2", "blastn", 2, -7, 4, 2)]


def mutate(rng, seq, sub, indel, amb):
    out = []
    i = 0
    while i < len(seq):
        r = rng.random()
        if r < indel / 2:                      # deletion of 1-3 bases
            i += rng.randint(1, 3)
            continue
        if r < indel:                          # insertion of 1-3 bases
            out.append("".join(rng.choice("ACGT") for _ in range(rng.randint(1, 3))))
        c = seq[i]
        if rng.random() < sub:
            c = rng.choice([b for b in "ACGT" if b != c])
        elif rng.random() < amb:
            c = rng.choice("NRYKMSW")
        out.append(c)
        i += 1
    return "".join(out)


def contig(rng, n):
    s = [rng.choice("ACGT") for _ in range(n)]
    for _ in range(12):                        # homopolymer and dinucleotide runs (gap placement)
        p = rng.randrange(n - 20)
        unit = rng.choice(["A", "C", "G", "T", "AC", "AG", "CT"])
        run = (unit * 10)[:rng.randint(6, 12)]
        s[p:p + len(run)] = run
    for _ in range(8):                         # ambiguity codes in the subject
        s[rng.randrange(n)] = rng.choice("NRYKMSW")
    return "".join(s)


def main(out="."):
    rng = random.Random(11)
    contigs = [contig(rng, 6000), contig(rng, 4000)]
    reads = []
    for k in range(160):
        c = rng.randrange(2)
        ref = contigs[c]
        n = rng.randint(150, 1000)
        p = rng.randrange(-40, len(ref) - n + 40)
        seg = ref[max(p, 0):p + n]
        r = mutate(rng, seg, rng.choice([0.0, 0.01, 0.03, 0.05]), rng.choice([0.0, 0.005, 0.01, 0.02]),
                   rng.choice([0.0, 0.0, 0.005]))
        if p < 0:                              # runs past the contig's start: random head
            r = "".join(rng.choice("ACGT") for _ in range(-p)) + r
        if rng.random() < 0.5:
            r = r.translate(COMP)[::-1]
        reads.append(r)
    for k in range(60):                        # harder: 5-12 % substitutions, 1-4 % indels
        ref = contigs[rng.randrange(2)]
        n = rng.randint(150, 1000)
        p = rng.randrange(0, len(ref) - n)
        r = mutate(rng, ref[p:p + n], rng.uniform(0.05, 0.12), rng.uniform(0.01, 0.04), 0.0)
        if rng.random() < 0.5:
            r = r.translate(COMP)[::-1]
        reads.append(r)
    long_ctg = contig(rng, 120000)             # >= 90,000 bases: BLAST+ cuts the traceback window
    for k in range(16):
        n = rng.randint(300, 1000)
        p = rng.randrange(20000, len(long_ctg) - n)
        r = mutate(rng, long_ctg[p:p + n], rng.choice([0.01, 0.03]), rng.choice([0.005, 0.01]), 0.0)
        if rng.random() < 0.5:
            r = r.translate(COMP)[::-1]
        reads.append(r)
    contigs.append(long_ctg)
    with open(f"{out}/gapped_subject.fa", "w") as f:
        for i, c in enumerate(contigs):
            f.write(f">ctg{i + 1}\n{c}\n")
    with open(f"{out}/gapped_reads.fa", "w") as f:
        for i, r in enumerate(reads):
            f.write(f">r{i + 1}\n{r}\n")
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "ctg")
    subprocess.run(["makeblastdb", "-dbtype", "nucl", "-in", f"{out}/gapped_subject.fa", "-out", db],
                   check=True, capture_output=True)
    for name, task, reward, penalty, gopen, gext in RUNS:
        res = subprocess.run(["blastn", "-task", task, "-query", f"{out}/gapped_reads.fa", "-db", db,
                              "-reward", str(reward), "-penalty", str(penalty), "-gapopen", str(gopen),
                              "-gapextend", str(gext), "-dust", "no", "-outfmt", f"6 {COLS}"],
                             check=True, capture_output=True, text=True).stdout
        with open(f"{out}/gapped_{name}.tsv", "w") as f:
            f.write(res)


if __name__ == "__main__":
    main(*sys.argv[1:])
