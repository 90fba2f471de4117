"""clalign.hmm.targets.fasta_text / read_block: targets handed to pyhmmer as FASTA text that
Easel reads give the very sequences DigitalSequence builds (block), or None where they would
not; a search through that route writes HMMER's tables."""
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")

from click.testing import CliRunner  # noqa: E402
from pyhmmer.easel import Alphabet  # noqa: E402

from clalign.cli import main  # noqa: E402
from clalign.data import PROTEIN, Database, as_database  # noqa: E402
from clalign.hmm import search, targets  # noqa: E402

PYDATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
FAA = os.path.join(PYDATA, "seqs", "938293.PRJEB85.HG003687.faa")
AMINO = Alphabet.amino()


def _same(blk, ref):
    return len(blk) == len(ref) and all(
        a.name == b.name and bytes(a.sequence) == bytes(b.sequence) for a, b in zip(blk, ref))


def test_text_reads_back_as_the_built_sequences():
    db = as_database(FAA)                       # 2,099 of its proteins end in '*' stops
    t = targets.Targets(db, db.stops)
    for idx in (np.arange(len(db)), np.array([5, 0, 2099, 7, 7, 1000])):
        text = targets.fasta_text(t, idx, AMINO)
        assert text is not None
        assert _same(targets.read_block(text, AMINO), targets.block(t, idx, AMINO, described=False))


def test_every_code_but_gap_and_the_refusals():
    codes = np.array([c for c in range(len(PROTEIN.letters)) if PROTEIN.letters[c] != "-"], dtype=np.uint8)
    db = Database.from_sequences([codes, codes[::-1], codes[3:5]], ids=["a", "b|x", "c.1"])
    t = targets.Targets(db, np.array([0, 2, 0]))
    idx = np.arange(3)
    assert _same(targets.read_block(targets.fasta_text(t, idx, AMINO), AMINO),
                 targets.block(t, idx, AMINO, described=False))
    gap = Database.from_sequences([np.array([0, 1, 2], dtype=np.uint8)], ids=["g"])
    assert targets.fasta_text(targets.Targets(gap, np.zeros(1, np.uint32)), [0], AMINO) is None
    spaced = Database.from_sequences([codes], ids=["two words"])
    assert targets.fasta_text(targets.Targets(spaced, np.zeros(1, np.uint32)), [0], AMINO) is None
    empty = Database.from_sequences([codes, codes[:0]], ids=["x", "e"])
    assert targets.fasta_text(targets.Targets(empty, np.zeros(2, np.uint32)), [1], AMINO) is None
    assert targets.fasta_text(t, idx[:0], AMINO) is None


def test_search_through_text_writes_hmmer_tables(tmp_path, monkeypatch):
    """The first pass of every part goes through the text (counted); the tables are pyhmmer's."""
    calls = []
    real = search._read_block
    monkeypatch.setattr(search, "_read_block", lambda text, abc: calls.append(1) or real(text, abc))
    tbl, dom = str(tmp_path / "c.tbl"), str(tmp_path / "c.domtbl")
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", tbl, "--domtblout", dom, "-o", os.devnull, "--cpu", "2",
                                  "--filter-engine", "opencl", os.path.join(PYDATA, "hmms", "txt", "PF02826.hmm"), FAA])
    assert r.exit_code == 0, r.output
    assert calls

    def rows(p):
        with open(p) as fh:
            return [ln.rstrip("\n") for ln in fh if not ln.startswith("#")]

    assert rows(tbl) == rows(os.path.join(PYDATA, "tables", "PF02826.tbl"))
    assert rows(dom) == rows(os.path.join(PYDATA, "tables", "PF02826.domtbl"))


def test_objects_arm(monkeypatch):
    """CLALIGN_HMM_HANDOFF=objects: no text (every block built from DigitalSequence objects)."""
    db = as_database(FAA)
    monkeypatch.setenv("CLALIGN_HMM_HANDOFF", "objects")
    assert targets.fasta_text(targets.Targets(db, db.stops), [0, 1], AMINO) is None
