"""The two earlier device designs of BLASTP phases 2-4 (``kernels/blast_ungapped.mako``), kept
as ``KERNEL=subject`` and ``KERNEL=sorted`` for comparison with the default ``blast_chunk``.

'subject': one work-item scans a whole subject (longest subjects first, a long one split into
diagonal buckets of ``SPLIT`` residues) with its diagonal state in global memory, filled per
query. 'sorted': one work-item per residue position emits packed (subject, diagonal, position)
keys with one global atomic per work-group, the host sorts them, and one work-item per diagonal
run applies the two-hit rule and the extension.
"""
from __future__ import annotations

import time

import numpy as np
import pyopencl as cl


def scan_tasks(lens: np.ndarray, split: int):
    """(tasks: subject << 8 | bucket, longest subjects first; buckets per subject) of blast_scan."""
    nb = np.ones(len(lens), dtype=np.uint8) if split == 0 else \
        np.clip((lens + split - 1) // split, 1, 255).astype(np.uint8)
    by_len = np.argsort(-lens, kind="stable").astype(np.int32)
    reps = nb[by_len].astype(np.int64)
    subj = np.repeat(by_len, reps)
    bucket = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    return ((subj.astype(np.int64) << 8) | bucket).astype(np.int32), nb


def _event_seconds(ev):
    ev.wait()
    return (ev.profile.end - ev.profile.start) * 1e-9


def run_scan(dev, blk, qs, b_query, b_matrix, b_present, b_starts, b_qoffs, counter):
    """KERNEL=subject: rows of one query against one block."""
    ctx, queue, mf = dev.rt.ctx, dev.rt.queue, cl.mem_flags
    qlen = len(qs.codes)
    span = blk.lens_host.astype(np.int64) + qlen + 1
    dbase = np.zeros(len(span), dtype=np.int64)
    dbase[1:] = np.cumsum(span[:-1])
    need = int(span.sum())
    if need > blk.diag_size:
        blk.diag = cl.Buffer(ctx, mf.READ_WRITE, 4 * need)
        blk.diag_size = need
    b_dbase = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=dbase)
    nsubj = blk.last - blk.first
    gsize = ((blk.ntasks + dev.wg - 1) // dev.wg) * dev.wg
    capacity = max(1024, nsubj // 4)
    zero = np.zeros(1, dtype=np.uint32)
    while True:
        fill = cl.enqueue_fill_buffer(queue, blk.diag, np.int32(-2 ** 31), 0, 4 * need)
        out = cl.Buffer(ctx, mf.READ_WRITE, 28 * capacity)
        cl.enqueue_copy(queue, counter, zero)
        dev.k_scan.set_args(blk.order, np.int32(blk.ntasks), blk.nbuckets, b_query,
                            np.int32(qlen), blk.res,
                            blk.base, blk.lens, b_dbase, blk.diag, b_present, b_starts,
                            b_qoffs, b_matrix, np.int32(qs.opts.window),
                            np.int32(qs.xdrop_ungapped), np.int32(qs.cutoff_ungapped), out,
                            np.uint32(capacity), counter)
        ev = cl.enqueue_nd_range_kernel(queue, dev.k_scan, (gsize,), (dev.wg,))
        dev.times.two_hit += _event_seconds(ev) + _event_seconds(fill)
        got = np.zeros(1, dtype=np.uint32)
        cl.enqueue_copy(queue, got, counter)
        total = int(got[0])
        if total <= capacity:
            break
        capacity = total
    rows = np.empty((total, 7), dtype=np.int32)
    if total:
        cl.enqueue_copy(queue, rows, out)
    return rows


def run_hits(dev, blk, b_present, b_starts, b_qoffs, counter):
    """KERNEL=sorted, first half: the block's hit keys, sorted on the host."""
    ctx, queue = dev.rt.ctx, dev.rt.queue
    capacity = max(1 << 16, blk.n * 2)
    zero = np.zeros(1, dtype=np.uint32)
    gsize = ((blk.n + dev.wg - 1) // dev.wg) * dev.wg
    while True:
        keys_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * capacity)
        cl.enqueue_copy(queue, counter, zero)
        dev.k_hits.set_args(blk.res, np.int64(blk.n), blk.base, np.int32(blk.last - blk.first),
                            b_present, b_starts, b_qoffs, np.int32(blk.max_slen), keys_buf,
                            np.uint32(capacity), counter)
        ev = cl.enqueue_nd_range_kernel(queue, dev.k_hits, (gsize,), (dev.wg,))
        dev.times.hits += _event_seconds(ev)
        got = np.zeros(1, dtype=np.uint32)
        cl.enqueue_copy(queue, got, counter)
        total = int(got[0])
        if total <= capacity:
            break
        capacity = total
    t0 = time.perf_counter()
    keys = np.empty(total, dtype=np.uint64)
    if total:
        cl.enqueue_copy(queue, keys, keys_buf)
    t1 = time.perf_counter()
    keys.sort()
    t2 = time.perf_counter()
    dev.times.copies += t1 - t0
    dev.times.sort += t2 - t1
    dev.times.counts["hits"] += total
    return keys


def run_two_hit(dev, blk, keys, qs, b_query, b_matrix, counter):
    """KERNEL=sorted, second half: the two-hit rule and extension per diagonal run."""
    ctx, queue, mf = dev.rt.ctx, dev.rt.queue, cl.mem_flags
    t0 = time.perf_counter()
    b_keys = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=keys)
    dev.times.copies += time.perf_counter() - t0
    capacity = max(1024, len(keys) // 8)
    zero = np.zeros(1, dtype=np.uint32)
    gsize = ((len(keys) + dev.wg - 1) // dev.wg) * dev.wg
    while True:
        out = cl.Buffer(ctx, mf.READ_WRITE, 28 * capacity)
        cl.enqueue_copy(queue, counter, zero)
        dev.k_two_hit.set_args(b_keys, np.uint32(len(keys)), b_query, np.int32(len(qs.codes)),
                               blk.res, blk.base, blk.lens, b_matrix, np.int32(blk.max_slen),
                               np.int32(qs.opts.window), np.int32(qs.xdrop_ungapped),
                               np.int32(qs.cutoff_ungapped), out, np.uint32(capacity), counter)
        ev = cl.enqueue_nd_range_kernel(queue, dev.k_two_hit, (gsize,), (dev.wg,))
        dev.times.two_hit += _event_seconds(ev)
        got = np.zeros(1, dtype=np.uint32)
        cl.enqueue_copy(queue, got, counter)
        total = int(got[0])
        if total <= capacity:
            break
        capacity = total
    rows = np.empty((total, 7), dtype=np.int32)
    if total:
        cl.enqueue_copy(queue, rows, out)
    return rows
