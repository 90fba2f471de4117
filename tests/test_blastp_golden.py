"""``blastp`` output identical, line for line, to BLAST+ 2.12's (golden files, see
``data/blastp/README.md``): bundled queries x bundled proteome, and planted homologs (25-95 %
identity, long subjects, one beyond 90,000 residues) with -max_target_seqs/-max_hsps/-evalue
variants. Also the same rows from a prepared database as from the FASTA it was made from.
"""
from pathlib import Path

import pytest

from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.options import blastp_options
from clalign.data.database import makedb

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "blastp"
CASES = {
    "queries_proteome": ("data/queries.faa", "data/proteome.faa.gz", dict(max_target_seqs=500)),
    "synth": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
              dict(max_target_seqs=500)),
    "synth_top5_hsp1": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
                        dict(max_target_seqs=5, max_hsps=1)),
    "synth_e1e-5": ("tests/data/blastp/synth_queries.faa", "tests/data/blastp/synth_db.faa.gz",
                    dict(max_target_seqs=500, evalue=1e-5)),
    "odd_proteome": ("tests/data/blastp/odd_queries.faa", "data/proteome.faa.gz",
                     dict(max_target_seqs=500)),
    "blastdb_prot_e1000": ("tests/data/blastdb/prot.fa", "tests/data/blastdb/prot.fa",
                           dict(max_target_seqs=500, evalue=1000)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_blastp_equals_blast_plus(name):
    query, db, kw = CASES[name]
    got = list(tabular_lines(run_blastp(ROOT / query, ROOT / db, blastp_options(**kw))))
    want = (GOLD / f"{name}.tsv").read_text().splitlines()
    assert got == want


def test_prepared_database_same_rows(tmp_path):
    query, db, kw = CASES["queries_proteome"]
    prepared = makedb(ROOT / db, tmp_path / "prot", quiet=True)
    got = list(tabular_lines(run_blastp(ROOT / query, prepared.path, blastp_options(**kw),
                                        num_threads=2)))
    assert got == (GOLD / "queries_proteome.tsv").read_text().splitlines()
