"""-task blastn's preliminary DP on the device (kernels/blast_nucl_gapped.mako, run by
``nucl_device_ungapped.DeviceUngapped``) against ``nucl_gapped.dp_prelim_oriented``: every saved
hit's 7 values where the kernel says it computed them, on random and repetitive data (both
strands, ambiguity runs, subjects of 1 to 9,001 bases), on hand-made hits at segment starts and
ends and at context boundaries, with rings small enough that hits overflow (left to the CPU) and
large enough that none do; a ring off by one fails; then whole searches with the switch on and
off give the golden blastn 2.12 tables."""
import os

import numpy as np
import pytest

from clalign.blast.nucl_gapped import dp_prelim_oriented
from clalign.blast.nucl_search import subject_chunks
from clalign.blast.params import NDP_DONE, NDP_NONE

cl = pytest.importorskip("pyopencl")
from clalign.blast.nucl_device import NuclDeviceWords  # noqa: E402
from clalign.blast.nucl_device_ungapped import DP_COLS  # noqa: E402
from test_blastn_device import _dev  # noqa: E402
from test_blastn_device_ungapped import _cpu, _data, _setup  # noqa: E402


def _ref(st, s_packed, s_len, q_off, s_off, u_s_end, u_score, c):
    """``dp_prelim_oriented`` of one hit (batch query offset, segment subject offsets)."""
    b = st.batch
    qf, qr = st.oriented_query()
    best = np.empty(int(b.lengths.max()) + 2, np.int64)
    a = int(b.offsets[c])
    return dp_prelim_oriented(st.matrix, qf, qr, a, int(b.lengths[c]), s_packed, s_len, q_off - a,
                              s_off, u_s_end, u_score, st.opts.gap_open, st.opts.gap_extend,
                              st.xdrop_gap, np.zeros(2, np.int64), best, np.empty_like(best))


def _words(nt, st, device, band, cells=1 << 20, **override):
    dw = NuclDeviceWords(nt, st, _dev(device),
                         dict({"UNGAPPED": "all", "PRELIM": True}, **override), pipeline=False,
                         hits=True, ungapped_override={"DP_BAND": band, "DP_CELLS": cells})
    assert dw.ung.dp is not None and dw.ung.width == 9 + DP_COLS
    return [dw.pairs(oid) for oid in range(len(nt))]


def _check(nt, st, got, want):
    """The saved hits equal the CPU's and every computed DP equals the reference: (hits,
    computed, mismatches)."""
    n = done = bad = 0
    for oid in range(len(nt)):
        s = np.ascontiguousarray(nt.packed(oid))
        for (off, ln), g, w in zip(subject_chunks(int(nt.lengths[oid])), got[oid], want[oid]):
            assert g.shape[1] == 7 + DP_COLS and np.array_equal(g[:, :7], w)
            sp = s[off // 4:(off + ln + 3) // 4]
            for r in g.tolist():
                n += 1
                assert r[14] in (NDP_DONE, NDP_NONE)
                if r[14] == NDP_DONE:
                    done += 1
                    bad += tuple(r[7:14]) != _ref(st, sp, ln, r[0], r[1], r[3] + r[4], r[5], r[6])
    return n, done, bad


@pytest.mark.parametrize("nquery,repeats", [(12, False), (60, False), (40, True)])
def test_prelim_equals_reference(each_device, tmp_path, nquery, repeats):
    qf, db = _data(tmp_path, seed=31 + nquery, nquery=nquery, repeats=repeats)
    nt, st = _setup(qf, db, "small", 8, 11, dust=not repeats)
    want = _cpu(nt, st)
    counts = {}
    for band in (8, 16, 32, 1024):
        got = _words(nt, st, each_device, band, BLOCK_BASES=4096)
        n, done, bad = _check(nt, st, got, want)
        assert n > 10 and bad == 0
        counts[band] = done
    assert counts[8] < counts[32] and counts[1024] == n     # some overflow; none at 1024
    done = {}
    for cells in (256, 2048, 1 << 20):       # the cell budget: rows over it left to the CPU
        got = _words(nt, st, each_device, 1024, cells, BLOCK_BASES=4096)
        n, done[cells], bad = _check(nt, st, got, want)
        assert bad == 0
    assert done[256] < done[2048] <= done[1 << 20] == n


def _hand_rows(rng, nt, st, dw, a, e):
    """nw_spec-like rows (block-local segment, word index, q_off, s_off, q_start, s_start,
    length, score, context, tag) of hits at segment and context starts and ends."""
    b = st.batch
    rows = []
    for g in range(a, e):
        s_len = int(dw.seg[3][g])
        for c in range(len(b.offsets)):
            q_len, qa = int(b.lengths[c]), int(b.offsets[c])
            if q_len < 12 or s_len < 12:
                continue
            for qo in sorted({0, 1, 2, 3, 5, q_len // 2, q_len - 12, q_len - 9, q_len - 1}):
                for so in sorted({0, 1, 2, 3, 4, 7, s_len // 2, s_len - 12, s_len - 9,
                                  s_len - 4, s_len - 1}):
                    length = int(rng.integers(1, 1 + min(q_len - qo, s_len - so, 40)))
                    back = int(rng.integers(0, 1 + min(qo, so, 6)))
                    rows.append((g - a, 0, qa + qo, so, qa + qo - back, so - back, length + back,
                                 int(rng.integers(5, 60)), c, -1))
    return np.array(rows, np.int32)


def _hand_check(device, tmp_path, band):
    """The kernel run directly on :func:`_hand_rows`: (rows, computed, mismatches)."""
    qf, db = _data(tmp_path, seed=5, nquery=8)
    nt, st = _setup(qf, db, "small", 8, 11)
    dw = NuclDeviceWords(nt, st, _dev(device),
                         {"UNGAPPED": "all", "PRELIM": True, "BLOCK_BASES": 1 << 20},
                         pipeline=False, hits=True,
                         ungapped_override={"DP_BAND": band, "DP_LAUNCH": 64, "DP_WG": 32})
    (a, e), = dw.blocks
    lane = dw.lanes[0]
    blk = dw.block(a, e, lane)
    rows = _hand_rows(np.random.default_rng(band), nt, st, dw, a, e)
    rows = rows[:len(rows) // 32 * 32 - 5]          # several rows per work-item, a ragged end
    assert len(rows) > 64 * 4
    out = lane.upload("test_rows", rows)
    res = np.empty((len(rows), DP_COLS), np.int32)
    cl.enqueue_copy(lane.queue, res, dw.ung._prelim(out, len(rows), blk, lane))
    done = bad = 0
    for r, got in zip(rows.tolist(), res.tolist()):
        g = r[0] + a
        byte, s_len = int(dw.seg[2][g]), int(dw.seg[3][g])
        sp = np.ascontiguousarray(nt.data[byte:byte + (s_len + 3) // 4])
        assert got[7] in (NDP_DONE, NDP_NONE)
        if got[7] == NDP_DONE:
            done += 1
            bad += tuple(got[:7]) != _ref(st, sp, s_len, r[2], r[3], r[5] + r[6], r[7], r[8])
    return len(rows), done, bad


def test_pass_hands_on_what_the_workers_use(each_device, tmp_path):
    """nd_pass keeps a saved row when its piece was kept (tag -1: nw_redo's, else keep[tag])
    and its DP was left to the CPU or reaches its context's gapped cutoff (a computed row
    below it makes no HSP): hand-made rows, random tags and keep flags, cutoffs around the
    scores; the rows handed on are exactly those, with their results."""
    qf, db = _data(tmp_path, seed=5, nquery=8)
    nt, st = _setup(qf, db, "small", 8, 11)
    dw = NuclDeviceWords(nt, st, _dev(each_device),
                         {"UNGAPPED": "all", "PRELIM": True, "BLOCK_BASES": 1 << 20},
                         pipeline=False, hits=True, ungapped_override={"DP_BAND": 16})
    (a, e), = dw.blocks
    lane, ung = dw.lanes[0], dw.ung
    blk = dw.block(a, e, lane)
    rng = np.random.default_rng(3)
    rows = _hand_rows(rng, nt, st, dw, a, e)
    rows[:, 9] = rng.integers(-1, 40, len(rows))
    rows[::7, 9] = 0                   # piece 0 not kept, some of nw_redo's rows (-1)
    rows[1::7, 9] = -1
    keep = (rng.random(40) < 0.6).astype(np.uint8)
    keep[0] = 0
    res = np.empty((len(rows), DP_COLS), np.int32)
    cl.enqueue_copy(lane.queue, res, ung._prelim(lane.upload("test_rows", rows), len(rows), blk, lane))
    done = res[:, 7] == NDP_DONE
    assert 0 < done.sum() < len(rows)
    cutoff = rng.integers(int(np.median(res[done, 0])) - 3, int(np.median(res[done, 0])) + 3,
                          len(st.batch.lengths)).astype(np.int32)
    ung.b_gapped = cl.Buffer(dw.rt.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                             hostbuf=cutoff)
    for use_keep in (False, True):
        lane.write(lane.counters, np.zeros(4, np.uint32))
        job = {"out": lane.upload("test_rows", rows), "saved": len(rows), "blk": blk,
               "b_keep": lane.upload("test_keep", keep) if use_keep else None}
        got = ung._passed(job, lane)
        tag = rows[:, 9]
        want = ~done | (res[:, 0] >= cutoff[rows[:, 8]])
        if use_keep:
            want &= (tag < 0) | (keep[np.maximum(tag, 0)] == 1)
        want = np.hstack([rows[want, :9], res[want]]).astype(np.int64)
        assert 0 < len(want) < len(rows)
        order = lambda m: m[np.lexsort(m.T[::-1])]
        assert np.array_equal(order(got), order(want))


@pytest.mark.parametrize("band", [16, 1024])
def test_prelim_hand_made_hits_at_boundaries(each_device, tmp_path, band):
    n, done, bad = _hand_check(each_device, tmp_path, band)
    assert bad == 0
    assert done == n if band == 1024 else 0 < done < n


def test_ring_off_by_one_fails(each_device, tmp_path, monkeypatch):
    """The kernel with a ring one cell shorter than its band (cell b at b mod BAND - 1): some
    computed DP differs."""
    import clalign.runtime as runtime

    source = runtime._source

    def mutated(template, *args, **kw):
        src = source(template, *args, **kw)
        if template == "blast_nucl_gapped.mako":
            assert src.count("(b) & (8 - 1)") == 1
            src = src.replace("(b) & (8 - 1)", "(b) % (8 - 1)")
        return src

    monkeypatch.setattr(runtime, "_source", mutated)
    assert _hand_check(each_device, tmp_path, 8)[2] > 0


def test_prelim_rows_takes_computed_results(tmp_path):
    """``prelim_rows`` takes the precomputed columns where the status says computed (garbage
    there changes the HSPs), computes the rows marked NONE itself (garbage there does not)."""
    from clalign.blast.nucl_stages_nb import prelim_hsps

    qf, db = _data(tmp_path, seed=12, nquery=30)
    nt, st = _setup(qf, db, "small", 8, 11)
    changed = 0
    for oid, chunks in enumerate(_cpu(nt, st)):
        s = np.ascontiguousarray(nt.packed(oid))
        for (off, ln), w in zip(subject_chunks(int(nt.lengths[oid])), chunks):
            if not len(w):
                continue
            sp = s[off // 4:(off + ln + 3) // 4]
            want = prelim_hsps(st, w, sp, ln)
            pre = np.array([_ref(st, sp, ln, r[0], r[1], r[3] + r[4], r[5], r[6]) + (NDP_DONE,)
                            for r in w.tolist()], np.int64)
            assert np.array_equal(prelim_hsps(st, np.hstack([w, pre]), sp, ln), want)
            junk = np.full_like(pre, 7)
            junk[:, 7] = NDP_NONE
            assert np.array_equal(prelim_hsps(st, np.hstack([w, junk]), sp, ln), want)
            junk[:, 0] = 10 ** 6
            junk[:, 7] = NDP_DONE
            changed += not np.array_equal(prelim_hsps(st, np.hstack([w, junk]), sp, ln), want)
    assert changed


SEARCH = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


@pytest.mark.parametrize("prelim", [True, False])
@pytest.mark.parametrize("task,query,name,threads", [
    ("blastn", "reads.fa", "blastn.tsv", 1), ("blastn", "reads.fa", "blastn.tsv", 3),
    ("blastn-short", "short.fa", "blastn-short.tsv", 2)])
def test_search_equals_blastn(each_device, prelim, task, query, name, threads):
    """Whole searches with the device's DP on and off: the golden blastn 2.12 tables."""
    from clalign.blast.blastn import run_blastn, tabular_lines
    from clalign.blast.nucl_setup import BlastnOptions
    from clalign.runtime.tuning import trial

    times = {}
    with trial("blastn_scan", {"UNGAPPED": "blastn", "PRELIM": prelim}):
        res = run_blastn(os.path.join(SEARCH, query), os.path.join(SEARCH, "genome.fa"),
                         BlastnOptions(task=task), device=_dev(each_device), num_threads=threads,
                         times=times)
    with open(os.path.join(SEARCH, name)) as fh:
        assert tabular_lines(res) == fh.read().splitlines()
    assert ("device_prelim" in times) == prelim
