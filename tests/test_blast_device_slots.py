"""The chunk kernel's buffer slots (``device_chunk.pack``, ``Slot``): a query's arrays packed
behind zeroed counters in one upload, all blocks' rows read back in one rectangular read, and an
output buffer too small for a block replaced, every block redone, with the CPU path's rows."""
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import read_queries
from clalign.blast.device_chunk import pack
from clalign.blast.engine import Subjects, initial_hsps, setup_query
from clalign.blast.options import blastp_options
from clalign.data.database import Database

ROOT = Path(__file__).resolve().parents[1]


def test_pack_layout():
    """Zeros in the head and between arrays, each array whole from an aligned offset."""
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.array([7, 8, 9], dtype=np.uint8),
              "c": np.arange(6, dtype=np.int32).reshape(2, 3)[:, 1]}   # a strided view
    host, spans = pack(arrays, 48, 32)
    assert spans == {"a": (64, 20), "b": (96, 3), "c": (128, 8)} and host.nbytes == 136
    for name, (o, n) in spans.items():
        assert o % 32 == 0
        assert np.array_equal(host[o:o + n].view(arrays[name].dtype), arrays[name])
    used = np.zeros(host.nbytes, bool)
    for o, n in spans.values():
        used[o:o + n] = True
    assert not host[~used].any()
    host, spans = pack({}, 16, 64)
    assert spans == {} and host.nbytes == 16 and not host.any()


def test_slot_output_replaced_when_too_small():
    """A slot whose blocks have room for the least rows: a launch finding more replaces the
    output buffer and redoes every block (the others' rows were in the old buffer); the rows
    equal the compiled CPU path's, query after query on the one slot."""
    pytest.importorskip("pyopencl")
    from clalign.blast import device as dmod

    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    s = Subjects.from_database(db)
    subjects = Subjects(s.residues[:s.offsets[400]], s.offsets[:401], list(db.ids[:400]))
    dev = dmod.DeviceUngapped(subjects, override={"KERNEL": "chunk", "WG": 64},
                              block_residues=40_000)
    assert len(dev.blocks) > 2
    slot = dev._slots.get()
    step = slot.align // 4
    slot._make_out(step)
    dev._slots.put(slot)
    opts = blastp_options()
    codes = [c for _, _, c in read_queries(ROOT / "data" / "queries.faa")]
    codes.append(subjects.residues[subjects.offsets[50]:subjects.offsets[51]])   # a self hit
    most = 0
    for c in codes:
        qs = setup_query(c, subjects, opts)
        want = initial_hsps(qs, subjects)
        assert np.array_equal(dev.initial_hsps(qs), want)
        firsts = [blk.first for blk in dev.blocks]
        per_block = np.bincount(np.searchsorted(firsts, want[:, 0], side="right") - 1,
                                minlength=len(dev.blocks))
        most = max(most, int(per_block.max()))
    assert dev._slots.made == 1 and most > step and slot.stride >= most
