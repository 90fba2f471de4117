"""Regenerate dust_queries.fa / dust_blastn.txt (DUST masks as BLAST+ 2.12 blastn computes them).

Usage (here, BLAST+ 2.12 on PATH): python make_dust_golden.py
blastn -query dust_queries.fa -subject <tiny subject> -outfmt 11 writes the masks of each
query in its archive; queries that DUST masks entirely are left out of the archive (BLAST+
drops them), for those dustmasker -outfmt interval gives the interval (it agrees with blastn
on queries without N; its generator for N runs on across queries, blastn's restarts per query),
a query with N masked whole by dustmasker is written ``*`` (unknown, not checked).
"""
import random
import re
import subprocess
import tempfile


def queries():
    rng = random.Random(7)

    def rnd(n):
        return "".join(rng.choice("ACGT") for _ in range(n))
    out = []
    for _ in range(110):
        parts = []
        for _ in range(rng.randint(1, 5)):
            k = rng.random()
            if k < 0.3:
                parts.append(rnd(rng.randint(0, 120)))
            elif k < 0.45:
                parts.append(rng.choice("ACGTN") * rng.randint(1, 100))
            elif k < 0.6:
                parts.append(rnd(rng.randint(1, 3)) * rng.randint(2, 40))
            elif k < 0.75:
                parts.append(rnd(rng.randint(2, 8)) * rng.randint(2, 20))
            elif k < 0.85:
                u = rnd(rng.randint(3, 12)) * rng.randint(2, 12)
                parts.append("".join(c if rng.random() > 0.1 else rng.choice("ACGTNRY") for c in u))
            else:
                parts.append("".join(rng.choice("AT") if rng.random() < .8 else rng.choice("CGN")
                                     for _ in range(rng.randint(10, 150))))
        s = "".join(parts) or "A"
        out.append(s.lower() if rng.random() < 0.2 else s)
    out += ["ACGT", "AAAAC", "A" * 64, "A" * 65, "A" * 66 + rnd(30), rnd(40) + "ACG" * 60 + rnd(40),
            rnd(20) + "N" * 70 + rnd(20), rnd(50) + "A" * 63 + "C" + "A" * 90 + rnd(50),
            rnd(30) + "NA" * 25 + rnd(30), rnd(64) + "TTAGGG" * 30]
    return out


def main():
    qs = queries()
    with open("dust_queries.fa", "w") as f:
        for i, s in enumerate(qs):
            f.write(f">q{i}\n{s}\n")
    with tempfile.NamedTemporaryFile("w", suffix=".fa") as subj:
        subj.write(">subject\nACGTAGCTAGCTAGCATCGATCGATCGATCGTACGTAGCTAGCTAGCTAGCATGCTAC\n")
        subj.flush()
        asn = subprocess.run(["blastn", "-query", "dust_queries.fa", "-subject", subj.name,
                              "-outfmt", "11"], check=True, capture_output=True, text=True).stdout
    masks = {}
    for sec in re.findall(r"\n    masks \{(.*?)\n    ka-blocks", asn, re.S):
        for m in re.finditer(r'from (\d+),\s*to (\d+),\s*id local str "Query_(\d+)"', sec):
            masks.setdefault(int(m.group(3)) - 1, set()).add((int(m.group(1)), int(m.group(2))))
    dm = subprocess.run(["dustmasker", "-in", "dust_queries.fa", "-outfmt", "interval"],
                        check=True, capture_output=True, text=True).stdout
    whole = {}
    for block in dm.split(">")[1:]:
        lines = block.strip().split("\n")
        i = int(lines[0][1:])
        ivs = [tuple(map(int, x.split(" - "))) for x in lines[1:]]
        if ivs == [(0, len(qs[i]) - 1)]:
            whole[i] = ivs if "N" not in qs[i].upper() else "*"
    with open("dust_blastn.txt", "w") as f:
        for i in range(len(qs)):
            ivs = sorted(masks.get(i, ())) or whole.get(i, [])
            text = ivs if ivs == "*" else " ".join(f"{a}-{b}" for a, b in ivs)
            f.write(f"q{i}\t{text}\n")


if __name__ == "__main__":
    main()
