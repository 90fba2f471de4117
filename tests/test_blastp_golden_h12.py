"""``blastp`` against the statistics module's golden blastp 2.12 runs (``data/blastp/README.md``,
first section): the bundled proteome without trailing stops, other matrices and gap costs,
``-dbsize``, ``-searchsp`` (plain Karlin-Altschul E-values), ``-evalue 1000`` and -outfmt 7 with
every column the output module knows; rows identical and in order."""
from pathlib import Path

import pytest

from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.options import blastp_options
from clalign.data.database import Database
from clalign.data.fasta import read_fasta

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "blastp"
COLS = ("qseqid", "sseqid", "evalue", "bitscore", "score", "qlen", "slen")
F7 = ("qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score "
      "qlen slen nident positive gaps ppos qcovs qcovhsp sstrand btop qseq sseq").split()


@pytest.fixture(scope="module")
def nostop():
    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    return Database(db.residues, db.offsets, db.ids, db.descriptions, "protein")


CASES = {
    "searchsp_1e8": dict(max_target_seqs=100, evalue=1000, searchsp=100000000),
    "dbsize_5e6": dict(max_target_seqs=100, evalue=1000, dbsize=5000000),
    "matrix_BLOSUM45_15_2": dict(max_target_seqs=30, evalue=1000, matrix="BLOSUM45", gap_open=15, gap_extend=2),
    "matrix_BLOSUM50_13_2": dict(max_target_seqs=30, evalue=1000, matrix="BLOSUM50", gap_open=13, gap_extend=2),
    "matrix_BLOSUM80_10_1": dict(max_target_seqs=30, evalue=1000, matrix="BLOSUM80", gap_open=10, gap_extend=1),
    "matrix_BLOSUM90_10_1": dict(max_target_seqs=30, evalue=1000, matrix="BLOSUM90", gap_open=10, gap_extend=1),
    "matrix_PAM30_9_1": dict(max_target_seqs=30, evalue=1000, matrix="PAM30", gap_open=9, gap_extend=1),
    "matrix_PAM70_10_1": dict(max_target_seqs=30, evalue=1000, matrix="PAM70", gap_open=10, gap_extend=1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_options_equal_blast_plus(name, nostop):
    res = run_blastp(ROOT / "data" / "queries.faa", nostop, blastp_options(**CASES[name]))
    assert tabular_lines(res, columns=COLS) == (GOLD / f"{name}.tsv").read_text().splitlines()


def test_outfmt7_all_fields(nostop):
    res = run_blastp(ROOT / "data" / "queries.faa", nostop,
                     blastp_options(max_target_seqs=50, evalue=1000))
    got = tabular_lines(res, columns=F7, comments=True, database="proteome")
    assert got == (GOLD / "queries_fields.out7").read_text().splitlines()


def test_twenty_queries(nostop, tmp_path, cudasw_fasta):
    ids = set()
    recs = []
    for path in (ROOT / "data" / "queries.faa", Path(cudasw_fasta)):
        for r in read_fasta(path, "protein"):
            if r.id not in ids:
                ids.add(r.id)
                recs.append(r)
    q = tmp_path / "allq.faa"
    q.write_text("".join(f">{r.id} {r.description}\n{r.sequence}\n" for r in recs))
    res = run_blastp(q, nostop, blastp_options(max_target_seqs=500), num_threads=2)
    cols = COLS + ("qstart", "qend", "sstart", "send")
    assert tabular_lines(res, columns=cols) == (GOLD / "sw_golden.tsv").read_text().splitlines()
