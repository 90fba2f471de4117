"""BLASTP device phases (``kernels/blast_ungapped.mako``) against the compiled CPU path, which is
itself checked against the plain-Python rule: the same initial HSPs (subject, score, extents,
hit offsets) for real queries x the bundled proteome and for planted homologs, across work-group
sizes, matrix placement, several subject blocks, subjects at block/work-group boundaries and
subjects shorter than a word."""
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import read_queries
from clalign.blast.engine import Subjects, initial_hsps, setup_query
from clalign.blast.options import blastp_options
from clalign.data.database import Database

cl = pytest.importorskip("pyopencl")
from clalign.blast.device import DeviceUngapped  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def proteome():
    return Subjects.from_database(Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein"))


def _same(dev, subjects, codes, opts):
    qs = setup_query(codes, subjects, opts)
    want = initial_hsps(qs, subjects)
    got = dev.initial_hsps(qs)
    assert got.shape == want.shape and np.array_equal(got, want)
    return len(want)


@pytest.mark.parametrize("kernel,wg,local,split", [("sorted", 128, True, 0), ("sorted", 64, False, 0),
                                                   ("subject", 64, True, 0), ("subject", 32, False, 100)])
def test_real_queries(proteome, kernel, wg, local, split):
    dev = DeviceUngapped(proteome, override={"WG": wg, "MATRIX_LOCAL": local, "KERNEL": kernel,
                                             "SPLIT": split}, block_residues=200_000)
    assert len(dev.blocks) > 2
    n = sum(_same(dev, proteome, codes, blastp_options()) for _, _, codes in
            read_queries(ROOT / "data" / "queries.faa")[2:])
    assert n > 50


def test_planted_and_boundaries():
    rng = np.random.default_rng(5)
    q = rng.integers(1, 23, size=257).astype(np.uint8)
    seqs = [rng.integers(1, 23, size=n).astype(np.uint8) for n in (1, 2, 3, 4, 63, 64, 65, 127, 128, 129)]
    for ident in (0.4, 0.7, 0.95):
        s = q.copy()
        flip = rng.random(len(s)) > ident
        s[flip] = rng.integers(1, 23, size=int(flip.sum()))
        seqs.append(np.concatenate([rng.integers(1, 23, size=61).astype(np.uint8), s]))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in seqs])
    subjects = Subjects(np.concatenate(seqs), offsets, [f"s{i}" for i in range(len(seqs))])
    for kernel, split in (("sorted", 0), ("subject", 0), ("subject", 1), ("subject", 64)):
        for block in (64, 300, 1 << 20):
            dev = DeviceUngapped(subjects, override={"WG": 32, "KERNEL": kernel, "SPLIT": split},
                                 block_residues=block)
            assert _same(dev, subjects, q, blastp_options(evalue=1000)) > 0
