"""``blastp -db`` on databases made by BLAST+'s makeblastdb (read by clalign.data.blastdb):
the same rows as from the FASTA they were made from (v4, v5, multi-volume; letters U O J B Z X,
lower case, trailing '*'), and subject ids as blastp 2.12 prints them with and without
-parse_seqids (golden files of tests/data/blastdb)."""
from pathlib import Path

import pytest

from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.options import blastp_options

DATA = Path(__file__).resolve().parent / "data" / "blastdb"
COLS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart", "qend", "sstart",
        "send", "evalue", "bitscore", "score", "slen")


@pytest.mark.parametrize("name", ["prot_v4", "prot_v5", "prot_mv", "prot_ps_v5"])
def test_blast_database_same_rows_as_fasta(name):
    opts = blastp_options(max_target_seqs=500, evalue=1000)
    fasta = tabular_lines(run_blastp(DATA / "prot.fa", DATA / "prot.fa", opts), columns=COLS)
    assert len(fasta) > 11
    blastdb = tabular_lines(run_blastp(DATA / "prot.fa", DATA / "db" / name, opts), columns=COLS)
    if name.startswith("prot_ps"):   # -parse_seqids: same hits, BLAST+'s sseqid form
        fasta = [r.split("\t", 2)[0] + "\t" + r.split("\t", 2)[2] for r in fasta]
        blastdb = [r.split("\t", 2)[0] + "\t" + r.split("\t", 2)[2] for r in blastdb]
    assert blastdb == fasta


@pytest.mark.parametrize("name", ["ids", "ids_ps"])
def test_subject_ids_as_blastp(name):
    opts = blastp_options(max_target_seqs=500, max_hsps=1, evalue=1e-5)
    rows = tabular_lines(run_blastp(DATA / "golden" / "q.fa", DATA / "db" / name, opts),
                         columns=("slen", "sseqid"))
    rows.sort(key=lambda r: int(r.split("\t")[0]))
    want = ["\t".join(r.split("\t")[:2]) for r in (DATA / "golden" / f"{name}.tsv").read_text().splitlines()]
    assert rows == want


@pytest.mark.parametrize("name", ["prot_v4", "prot_mv"])
def test_blast_database_on_the_device(name):
    """The device path: one-volume databases fill their subject blocks straight from the .psq
    (``protein_stream``), multi-volume ones from the copied residues; both give the FASTA's rows."""
    cl = pytest.importorskip("pyopencl")
    dev = cl.get_platforms()[0].get_devices()[0]
    opts = blastp_options(max_target_seqs=500, evalue=1000)
    fasta = tabular_lines(run_blastp(DATA / "prot.fa", DATA / "prot.fa", opts), columns=COLS)
    got = tabular_lines(run_blastp(DATA / "prot.fa", DATA / "db" / name, opts, num_threads=2,
                                   device=dev), columns=COLS)
    assert got == fasta


def test_bad_residue_code_on_the_device_path(tmp_path):
    """The device starts from the .psq before the reader has checked it: a code outside
    NCBIstdaa still ends the search with the reader's one-line error, nothing hangs."""
    import shutil

    from clalign.errors import InputError

    cl = pytest.importorskip("pyopencl")
    dev = cl.get_platforms()[0].get_devices()[0]
    for f in (DATA / "db").glob("prot_v4.*"):
        shutil.copy(f, tmp_path / f.name)
    psq = tmp_path / "prot_v4.psq"
    raw = bytearray(psq.read_bytes())
    raw[5] = 200
    psq.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="not NCBIstdaa"):
        list(run_blastp(DATA / "prot.fa", tmp_path / "prot_v4", blastp_options(), num_threads=2,
                        device=dev))
