"""Regenerate ``clalign/blast/data/matrices.txt`` from an NCBI C++ toolkit checkout.

BLAST+ scores with matrices compiled into it (``src/util/tables/sm_*.c``, unchanged since 2006, so
the same in BLAST+ 2.12), which differ from the published text files (X row, B/Z/J rows).
Usage: ``python3 -m tools.blast_matrix_data TOOLKIT_CHECKOUT > clalign/blast/data/matrices.txt``.
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
    main(sys.argv[1])
