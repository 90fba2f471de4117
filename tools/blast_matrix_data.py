"""Regenerate BLAST+'s built-in data tables from an NCBI C++ toolkit checkout (BLAST+ 2.12 sources).

- ``matrices``: the score matrices compiled into BLAST+ (``src/util/tables/sm_*.c``), which differ
  from the published text files (X row, B/Z/J rows) -> ``clalign/blast/data/matrices.txt``;
- ``karlin``: the gapped Karlin-Altschul/Gumbel parameter rows per matrix and gap costs
  (``src/algo/blast/core/blast_stat.c``, ``*_values`` arrays) -> ``clalign/stats/data/blast_karlin.txt``.

Usage: ``python tools/blast_matrix_data.py matrices|karlin TOOLKIT_CHECKOUT > FILE``.
"""
import re
import sys
from pathlib import Path

NAMES = ("blosum45", "blosum50", "blosum62", "blosum80", "blosum90", "pam30", "pam70", "pam250")


def parse(text):
    """(symbols, default score, scores row-major) from one sm_*.c file."""
    body = re.search(r"\{(.*?)\};", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    nums = [int(t) for t in re.findall(r"-?\d+", body)]
    tail = re.search(r'SNCBIPackedScoreMatrix\s+\w+\s*=\s*\{\s*"([^"]+)"\s*,\s*\w+\s*,\s*(-?\d+)', text)
    syms, default = tail.group(1), int(tail.group(2))
    assert len(nums) == len(syms) ** 2, (len(nums), syms)
    return syms, default, nums


def karlin(root):
    """Rows: matrix, open, extend, lambda, K, H, alpha, beta, C, Alpha, Sigma (INT2_MAX -> inf)."""
    text = (Path(root) / "src/algo/blast/core/blast_stat.c").read_text()
    out = ["# BLAST+ 2.12 gapped Karlin-Altschul and Gumbel parameters (blast_stat.c *_values)",
           "# matrix open extend decline lambda K H alpha beta C Alpha Sigma; first row ungapped"]
    for name in NAMES:
        m = re.search(r"static array_of_8 %s_values\[\w+\]\s*=\s*\{(.*?)\};" % name, text, re.S)
        for row in re.findall(r"\{([^{}]*)\}", m.group(1)):
            vals = [v.strip().replace("(double) INT2_MAX", "inf") for v in row.split(",")]
            out.append(" ".join([name.upper()] + vals))
    print("\n".join(out))


def main(root):
    out = ["# BLAST+ built-in protein matrices (NCBI C++ toolkit src/util/tables/sm_*.c)",
           "# name symbols default, then one row per symbol"]
    for name in NAMES:
        syms, default, nums = parse((Path(root) / "src/util/tables" / f"sm_{name}.c").read_text())
        out.append(f">{name.upper()} {syms} {default}")
        n = len(syms)
        for i in range(n):
            out.append(" ".join(str(v) for v in nums[i * n:(i + 1) * n]))
    print("\n".join(out))


if __name__ == "__main__":
    {"matrices": main, "karlin": karlin}[sys.argv[1]](sys.argv[2])
