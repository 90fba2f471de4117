#!/usr/bin/env python3
"""Compare ``clalign sw`` hits with blastp 2.12 ``-outfmt "6 qseqid sseqid evalue bitscore score ..."``.

For every (query, subject) pair both report, compares clalign's raw score with blastp's best
HSP score (SW is exact, so it is >= blastp's), and for the pairs with the same raw score
whether the evalue and bitscore strings are identical. Prints counts; exit 1 on any mismatch;
``--results FILE`` also writes them as a harness results document (``identical``: no mismatch).

    python3 -m tools.sw_vs_blastp --query allq.faa --db data/proteome.faa.gz \\
        --blastp tests/data/blastp/sw_golden.tsv [--top 500] [--evalue 10]
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def compare(results, blastp_rows):
    """Counts of the comparison (dict) and the list of mismatching pairs."""
    from clalign.output import format_bitscore, format_evalue

    best = {}
    for f in blastp_rows:
        best.setdefault((f[0], f[1]), f)
    ours = {(r.query_id, a.subject_id): a for r in results for a in r.hits}
    both = [k for k in best if k in ours]
    same = [k for k in both if ours[k].score == int(best[k][4])]
    bad = [(k, best[k][2:5], (format_evalue(ours[k].evalue), format_bitscore(ours[k].bitscore), ours[k].score))
           for k in same if (format_evalue(ours[k].evalue), format_bitscore(ours[k].bitscore)) != tuple(best[k][2:4])]
    lower = [k for k in both if ours[k].score < int(best[k][4])]
    return {"blastp_pairs": len(best), "clalign_pairs": len(ours), "both": len(both), "same_score": len(same),
            "identical_strings": len(same) - len(bad), "mismatches": len(bad),
            "clalign_score_below_blastp": len(lower)}, bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--query", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--blastp", required=True, help="blastp -outfmt '6 qseqid sseqid evalue bitscore score ...' file")
    ap.add_argument("--top", type=int, default=500)
    ap.add_argument("--evalue", type=float, default=10.0)
    ap.add_argument("--device", default=None)
    ap.add_argument("--results", default=None, help="also write the counts as a results JSON file")
    a = ap.parse_args(argv)
    from clalign.sw import sw_search

    res = sw_search(a.query, a.db, top=a.top, evalue=a.evalue, device=a.device)
    with open(a.blastp) as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh if line.strip() and not line.startswith("#")]
    counts, bad = compare(res, rows)
    print(json.dumps(counts))
    for b in bad[:20]:
        print("mismatch", b)
    wrong = bool(bad or counts["clalign_score_below_blastp"])
    if a.results:
        from tools.results import save

        save(a.results, [{"family": "sw", "input": os.path.basename(a.query), "values": {"top": a.top},
                          "status": "wrong" if wrong else "ok", "seconds": None, "peer": "blastp",
                          "identical": not wrong, "reason": f"{len(bad)} mismatches" if wrong else "",
                          "mismatch_examples": [list(map(str, b)) for b in bad[:20]], **counts}])
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
