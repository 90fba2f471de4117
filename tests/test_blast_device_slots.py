"""The device's buffer slots: an ``Arena`` (a query's arrays in named regions of one buffer,
one copy, sub-buffers made per allocation only), and the chunk kernel's ``Slot``: all blocks'
rows read back in one rectangular read, an output buffer too small for a block replaced and
every block redone, with the CPU path's rows."""
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import read_queries
from clalign.blast.engine import Subjects, initial_hsps, setup_query
from clalign.blast.options import blastp_options
from clalign.data.database import Database

cl = pytest.importorskip("pyopencl")
ROOT = Path(__file__).resolve().parents[1]


def test_arena_layout_and_growth():
    """Regions at aligned offsets behind the head, the host image (zeros in the head and gaps)
    equal to the device buffer after one copy; arrays that fit keep the buffer and its
    sub-buffers, a larger one replaces them (the old kept alive)."""
    from clalign.blast.device_chunk import Arena, sub_align
    from clalign.runtime import Runtime

    rt = Runtime.get(None)
    align = sub_align(rt)
    arena = Arena(rt.ctx, align, cl.mem_flags.READ_WRITE, heads=3)
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.array([7, 8, 9], dtype=np.uint8),
              "c": np.arange(6, dtype=np.int32).reshape(2, 3)[:, 1]}   # a strided view
    assert arena.fit({k: v.nbytes for k, v in arrays.items()})
    assert list(arena.offsets) == ["a", "b", "c"] and arena.offsets["a"] >= 3 * align
    assert all(o % align == 0 for o in arena.offsets.values()) and len(arena.head_subs) == 3
    host = arena.pack(arrays)
    for name, a in arrays.items():
        o = arena.offsets[name]
        assert np.array_equal(host[o:o + a.nbytes].view(a.dtype), a)
        assert arena.sub[name].size >= a.nbytes
    used = np.zeros(host.nbytes, bool)
    for name, a in arrays.items():
        used[arena.offsets[name]:arena.offsets[name] + a.nbytes] = True
    assert not host[~used].any()
    queue = cl.CommandQueue(rt.ctx)
    cl.enqueue_copy(queue, arena.buf, host)
    back = np.empty_like(host)
    cl.enqueue_copy(queue, back, arena.buf)
    assert np.array_equal(back, host)
    buf, subs = arena.buf, arena.sub
    assert not arena.fit({"a": 4, "b": 1, "c": 8}) and arena.buf is buf and arena.sub is subs
    assert arena.fit({"a": 4, "b": 100, "c": 8}) and arena.buf is not buf
    assert arena.caps["b"] >= 100 and arena._retired[-1][0] is buf


def test_slot_output_replaced_when_too_small():
    """A slot whose blocks have room for the least rows: a launch finding more replaces the
    output buffer and redoes every block (the others' rows were in the old buffer); the rows
    equal the compiled CPU path's, query after query on the one slot."""
    from clalign.blast import device as dmod

    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    s = Subjects.from_database(db)
    subjects = Subjects(s.residues[:s.offsets[400]], s.offsets[:401], list(db.ids[:400]))
    dev = dmod.DeviceUngapped(subjects, override={"KERNEL": "chunk", "WG": 64},
                              block_residues=60_000)
    assert len(dev.blocks) > 2
    slot = dev._slots.get()
    step = slot.align // 4
    slot._make_out(step)
    dev._slots.put(slot)
    opts = blastp_options(evalue=1000)   # more initial HSPs: hundreds per block
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
