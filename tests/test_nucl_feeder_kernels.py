"""The BLASTN feeder's queue-ahead kernels against numpy: nw_key_sums, nw_key_bases and nw_offsets
(the binning histogram's exclusive sum and each key's first offset, on the device), nw_hist / nw_scatter / nw_cuts reading
their row count from a counter buffer while launched over a larger bound (their report: the
counters, the keys' bounds, the cuts), and nscan_order leaving out the rows of an overflowed
output. Sizes around work-group and tile multiples."""
import numpy as np
import pytest

from clalign.blast.params import BLASTN_SCAN, BLASTN_UNGAPPED, LANE_COUNTERS, NW_KEYS
from clalign.runtime import Runtime

cl = pytest.importorskip("pyopencl")


def _rt(spec):
    return Runtime.get("0:0" if spec == "default" else spec)


def _ung_prg(rt, wg, tile=1024, hash_=True):
    v = {p.name: p.default for p in BLASTN_UNGAPPED.all()}
    v.update(WG=wg, TILE=tile, HASH=hash_)
    return rt.program("blast_nucl_ungapped.mako", BLASTN_UNGAPPED, v)


def _run(rt, prg, name, args, n, wg):
    k = cl.Kernel(prg, name)
    k.set_args(*args)
    cl.enqueue_nd_range_kernel(rt.queue, k, (max(1, -(-n // wg)) * wg,), (wg,)).wait()


def _buf(rt, a):
    a = np.ascontiguousarray(a)
    return cl.Buffer(rt.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=a if a.nbytes else np.zeros(4, np.uint8))


def _get(rt, buf, n, dtype=np.uint32):
    out = np.empty(n, dtype)
    if n:
        cl.enqueue_copy(rt.queue, out, buf)
    return out


def _sum(rt, prg, b_counts, ngroups, b_report, wg):
    """The histogram's exclusive sum as DeviceUngapped.bin runs it (three kernels)."""
    _run(rt, prg, "nw_key_sums", (b_counts, np.uint32(ngroups), b_report), NW_KEYS, wg)
    _run(rt, prg, "nw_key_bases", (b_report,), wg, wg)
    _run(rt, prg, "nw_offsets", (b_counts, np.uint32(ngroups), b_report), NW_KEYS * ngroups, wg)


@pytest.mark.parametrize("wg", [32, 64])
@pytest.mark.parametrize("ngroups", [1, 2, 3, 31, 33])
def test_nw_offsets_equal_numpy_cumsum(each_device, wg, ngroups):
    rt = _rt(each_device)
    prg = _ung_prg(rt, wg)
    rng = np.random.default_rng(ngroups * 7 + wg)
    counts = rng.integers(0, 50, NW_KEYS * ngroups).astype(np.uint32)
    counts[rng.random(len(counts)) < 0.5] = 0
    b_counts = _buf(rt, counts)
    b_report = _buf(rt, np.full(LANE_COUNTERS + NW_KEYS + 1, 7, np.uint32))
    _sum(rt, prg, b_counts, ngroups, b_report, wg)
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    assert np.array_equal(_get(rt, b_counts, len(counts)), offsets[:-1])
    report = _get(rt, b_report, LANE_COUNTERS + NW_KEYS + 1)
    assert np.array_equal(report[LANE_COUNTERS:], offsets[::ngroups])
    assert (report[:LANE_COUNTERS] == 7).all()                 # the counters' place untouched


def _key(q, s):
    """The hash store's key (kernel key_of, HASH)."""
    from clalign.blast.params import BLASTN_UNGAPPED as P
    mul = {p.name: p.default for p in P.all()}["HASH_MUL"]
    return ((s - q).astype(np.uint32) * np.uint32(mul)) % np.uint32(NW_KEYS)


@pytest.mark.parametrize("wg,tile", [(32, 1024), (64, 1024)])
@pytest.mark.parametrize("n,cap", [(0, 100), (1, 1), (1023, 1024), (1024, 1025), (1025, 3000),
                                   (2049, 2049), (3000, 5000)])
def test_binning_reads_its_count_from_the_device(each_device, wg, tile, n, cap):
    """nw_hist, nw_offsets, nw_scatter and nw_cuts launched over ``cap`` rows with ``n`` in a
    counter: the stable key order of the first n rows, the keys' bounds, every window's cut
    (0 past n), as a host counting sort and cut rule give them, behind the counters."""
    rt = _rt(each_device)
    prg = _ung_prg(rt, wg, tile)
    rng = np.random.default_rng(n + cap)
    words = np.zeros((cap, 4), np.int32)
    words[:, 0] = np.sort(rng.integers(0, 4000, cap))          # block positions (one segment)
    words[:, 2] = rng.integers(0, 300, cap)
    words[:, 3] = words[:, 0] + rng.integers(0, 3, cap)
    words[n:] = rng.integers(-5, 5, (cap - n, 4))              # past the count: never read
    counters = np.array([0, 0, 0, n], np.uint32)
    ngroups = -(-cap // tile)
    piece, gap = 32, 5
    nwin = -(-cap // piece)
    b_words, b_ctr = _buf(rt, words), _buf(rt, counters)
    b_counts = _buf(rt, np.zeros(NW_KEYS * ngroups, np.uint32))
    b_perm = _buf(rt, np.full(max(cap, 1), 0xFFFFFFFF, np.uint32))
    at = LANE_COUNTERS + NW_KEYS + 1
    b_report = _buf(rt, np.full(at + nwin, 99, np.uint32))
    b_pos0 = _buf(rt, np.zeros(1, np.uint32))
    b_segoff = _buf(rt, np.zeros(1, np.int32))
    dlen = np.int32(512)
    _run(rt, prg, "nw_hist", (b_words, np.uint32(cap), b_ctr, np.uint32(3), dlen, b_counts,
                              np.uint32(ngroups)), ngroups * wg, wg)
    _sum(rt, prg, b_counts, ngroups, b_report, wg)
    _run(rt, prg, "nw_scatter", (b_words, np.uint32(cap), b_ctr, np.uint32(3), dlen, b_counts,
                                 np.uint32(ngroups), b_perm), ngroups * wg, wg)
    _run(rt, prg, "nw_cuts", (b_words, b_perm, b_pos0, np.int32(1), b_segoff, dlen,
                              np.uint32(cap), b_ctr, np.uint32(3), np.uint32(piece),
                              np.int32(gap), b_report, np.uint32(nwin)), max(nwin, 1), wg)
    key = _key(words[:n, 2], words[:n, 3])
    perm = np.argsort(key, kind="stable")
    base = np.searchsorted(key[perm], np.arange(NW_KEYS + 1))
    report = _get(rt, b_report, at + nwin)
    assert np.array_equal(report[:LANE_COUNTERS], counters)
    assert np.array_equal(report[LANE_COUNTERS:at], base)
    assert np.array_equal(_get(rt, b_perm, n), perm)
    want = np.zeros(nwin, np.uint32)
    skey, spos = key[perm], words[perm, 3]
    for m in range(nwin):
        for j in range(max(m * piece, 1), min(m * piece + piece, n)):
            if skey[j] != skey[j - 1] or spos[j] - spos[j - 1] >= gap:
                want[m] = j
                break
    assert np.array_equal(report[at:], want)


@pytest.mark.parametrize("wg", [32, 128])
@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("cap", [1, 63, 64, 65, 200])
def test_nscan_order_leaves_out_rows_past_cap(each_device, wg, width, cap):
    """Runs written at any start (some past cap: an overflowed stage) are moved to their prefix
    sums' places; no row at or past cap is read or written."""
    rt = _rt(each_device)
    v = {p.name: p.default for p in BLASTN_SCAN.all()}
    v.update(WG=wg, EXT=0, WIDTH=8, WORD=8, STEP=1)
    prg = rt.program("blast_nucl.mako", BLASTN_SCAN, v)
    rng = np.random.default_rng(cap * width + wg)
    ngroups = 9
    counts = rng.integers(0, 40, ngroups).astype(np.uint32)
    starts = np.zeros(ngroups, np.uint32)
    np.cumsum(counts[rng.permutation(ngroups)][:-1], out=starts[1:])   # atomics' any order
    starts = starts[rng.permutation(ngroups)]
    total = int(counts.sum())
    rows = max(total, cap)
    src = rng.integers(0, 1 << 30, rows * width).astype(np.uint32)
    runs = np.column_stack([starts, counts]).astype(np.uint32)
    b_src, b_runs = _buf(rt, src[:cap * width]), _buf(rt, runs)   # the buffer holds cap rows
    b_dest = _buf(rt, np.zeros(ngroups, np.uint32))
    b_dst = _buf(rt, np.full(cap * width + 8, 0xABCD, np.uint32))
    _run(rt, prg, "nscan_dest", (b_runs, np.uint32(ngroups), b_dest), wg, wg)
    _run(rt, prg, "nscan_order", (b_src, b_dst, b_runs, b_dest, np.int32(width), np.uint32(cap)),
         ngroups * wg, wg)
    dest = np.zeros(ngroups, np.int64)
    np.cumsum(counts[:-1], out=dest[1:])
    want = np.full(cap * width + 8, 0xABCD, np.uint32)
    for g in range(ngroups):
        for r in range(int(counts[g])):
            s, d = int(starts[g]) + r, int(dest[g]) + r
            if s < cap and d < cap:
                want[d * width:(d + 1) * width] = src[s * width:(s + 1) * width]
    assert np.array_equal(_get(rt, b_dst, len(want)), want)
