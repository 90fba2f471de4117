"""The S-lane database blocks written on the device (kernels/hmm_layout.mako,
clalign.hmm.layout_dev) against the host fill (clalign.hmm.layout.fill_host): the same bytes
for every residue group, column count, row cap and SSV pieces, empty sequences included."""
import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

from clalign.data import Database  # noqa: E402
from clalign.hmm import engine as E  # noqa: E402
from clalign.hmm.layout import build_blocks, default_cap, plan_blocks, split_long  # noqa: E402
from clalign.hmm.layout_dev import fill_device, upload_residues  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")     # every test device (conftest)


def _db(seed=3, n=300):
    rng = np.random.default_rng(seed)
    lens = np.concatenate([rng.integers(0, 80, n), [0, 0, 1, 500, 333, 17]])
    return Database.from_sequences([rng.integers(0, 28, int(k)).astype(np.uint8) for k in lens])


def _device_bytes(blocks, residues):
    rt = Runtime.get()
    q = rt.queue
    data = fill_device(rt, q, blocks, upload_residues(rt.ctx, q, residues))
    out = np.empty(blocks.size, dtype=np.uint8)
    if out.size:
        cl.enqueue_copy(q, out, data)
    q.finish()
    return out


@pytest.mark.parametrize("rg", [1, 4, 8, 16])
@pytest.mark.parametrize("C,spc,capped", [(4, 2, False), (32, 3, True), (128, 1, True), (8, 6, False)])
def test_device_fill_equals_host_fill(rg, C, spc, capped):
    db = _db()
    res, off, lens, order = (np.asarray(a) for a in (db.residues, db.offsets, db.lengths, db.order))
    cap = default_cap(lens, spc) if capped else None
    host = build_blocks(res, off, lens, order, C, spc, rg, cap)
    plan = plan_blocks(off, lens, order, C, spc, rg, cap)
    assert plan.data is None and plan.size == host.data.size
    for a in ("off", "rows", "col_start", "ids"):
        assert np.array_equal(getattr(plan, a), getattr(host, a)), a
    assert np.array_equal(_device_bytes(plan, res), host.data)


def test_device_fill_of_ssv_pieces():
    """Pieces of long sequences (pseudo sequences inside the residue array) fill the same."""
    db = _db(seed=5)
    res, off, lens = (np.asarray(a) for a in (db.residues, db.offsets, db.lengths))
    p = split_long(off, lens, 64, 20)
    host = build_blocks(res, p.offsets, p.lengths, p.order, 16, 2, 16)
    plan = plan_blocks(p.offsets, p.lengths, p.order, 16, 2, 16)
    assert np.array_equal(_device_bytes(plan, res), host.data)


def test_search_layouts_share_one_residue_upload():
    """Two geometries of one layout cache: each filled on the device, the residues uploaded once;
    scores equal the host-filled blocks' (the blocks passed in)."""
    db = _db(seed=7, n=120)
    seqs = [db.sequence(i) for i in range(len(db))]
    prof = E.as_profile(_model())
    cache = {}
    for S in (4, 8):
        got = E.msv_scores(prof, db, S=S, kernel="slane")
        r = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, "msv", S=S, kernel="slane",
                      cache=cache, balance=False, spc=2)
        assert r.blocks.data is None and r.blocks.slots is not None
        host = build_blocks(db.residues, db.offsets, db.lengths, db.order, r.blocks.C, 2, r.blocks.rg)
        r2 = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, "msv", S=S, kernel="slane",
                       blocks=host, spc=2)
        assert np.array_equal(r.raw, r2.raw), S
        assert got.size == len(seqs)
    assert sum(1 for k in cache if isinstance(k, tuple) and k[0] == "residues") == 1


def _model():
    import pyhmmer

    rng = pyhmmer.easel.Randomness(11)
    return pyhmmer.plan7.HMM.sample(pyhmmer.easel.Alphabet.amino(), 40, rng)


def _slot_order_by_sorting(lengths, order, C, spc, cap):
    """The slot order as np.lexsort((round, column, block)) gives it (plan_blocks computes it)."""
    n = order.size
    desc = lengths[order[::-1]] + 1
    starts = [0]
    while starts[-1] < n:
        k = spc if cap is None else max(1, min(spc, int(cap) // int(desc[starts[-1]])))
        starts.append(min(n, starts[-1] + C * k))
    starts = np.asarray(starts)
    q = n - 1 - np.arange(n)
    blk = np.searchsorted(starts, q, side="right") - 1
    rank = q - starts[blk]
    rnd, p = rank // C, rank % C
    col = np.where(rnd % 2 == 0, p, C - 1 - p)
    return order[np.lexsort((rnd, col, blk))]


@pytest.mark.parametrize("n,C,spc,cap", [(1, 4, 2, None), (7, 4, 2, None), (8, 4, 2, None), (9, 4, 2, None),
                                         (33, 4, 3, None), (500, 8, 5, 600), (1000, 32, 4, None), (999, 16, 7, 900)])
def test_plan_slot_order_is_the_sorted_deal(n, C, spc, cap):
    """Blocks whose last round is full or partial, with an even and an odd number of full rounds."""
    rng = np.random.default_rng(n)
    lens = rng.integers(0, 1200, n)
    order = np.argsort(lens, kind="stable")
    off = np.concatenate([[0], np.cumsum(lens)])
    plan = plan_blocks(off, lens, order, C, spc, 4, cap)
    assert np.array_equal(plan.ids.astype(np.int64), _slot_order_by_sorting(lens, order, C, spc, cap))
