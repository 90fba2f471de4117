"""Host side of ``kernels/blast_chunk.mako``: BLASTP phases 2-4 in one work-group-local launch.

Per block of subjects (uploaded once, ``device.DeviceUngapped``) the tasks are runs of whole
consecutive subjects of about ``TASK`` residues (a longer subject alone), longest first. Per
query the runtime places the diagonal state -- ``qlen + window`` ints rounded up to WG -- in
local memory when it fits beside a hit buffer of at least ``MIN_CAP`` entries (by default the
full CAP_MAX: on the H100 a state that shrank the hit buffer cost more rounds than global
memory's cached state costs), else in a per-work-group slice of global memory, and gives the hit buffer what local memory is left (at
most ``CAP_MAX`` entries). The presence bits go to local memory when they take at most a
sixteenth of it (on the H100's 48 KiB they stay global: measured as fast, and the hit buffer
gets the room). With ``BALANCE`` the hit buffer is two buffers of CAP entries (staging and
bins). ``GROUPS`` work-groups per compute unit loop over the tasks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..errors import InputError
from ..runtime import choose
from ..runtime.tuning import lookup
from .params import BLAST_CHUNK, chunk_qbits

#: Least rows reserved for a block's initial HSPs (more when the block is long; a launch that
#: finds more is repeated with room for all).
MIN_OUT_ROWS = 1 << 14


def _static_local(wg: int, pv_words: int, pv_local: bool) -> int:
    """Bytes of local memory the kernel declares besides its two dynamic buffers: the matrix,
    the scan buffer (int2), six int arrays of WG, three ints, the presence bits when local, and
    256 bytes of slack for the compiler."""
    return 28 * 28 * 4 + wg * 8 + 6 * wg * 4 + 12 + (4 * pv_words if pv_local else 0) + 256


@dataclass
class ChunkTasks:
    """Tasks of one block: int32 stream start, end and first subject, longest first."""

    start: cl.Buffer
    end: cl.Buffer
    subj: cl.Buffer
    base32: cl.Buffer
    count: int


def make_tasks(ctx, base: np.ndarray, lens: np.ndarray, task: int) -> ChunkTasks:
    """Runs of consecutive subjects whose starts fall in the same ``task``-residue window."""
    mf = cl.mem_flags
    n = len(lens)
    tid = base // task
    first = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]]) if n else np.zeros(0, np.int64)
    last = np.r_[first[1:], n] - 1
    start = base[first]
    end = base[last] + lens[last]
    order = np.argsort(-(end - start), kind="stable")
    buf = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                              hostbuf=np.ascontiguousarray(a, dtype=np.int32) if len(a) else
                              np.zeros(1, np.int32))
    return ChunkTasks(buf(start[order]), buf(end[order]), buf(first[order]), buf(base),
                      len(first))


class ChunkKernel:
    """Programs (state local / global) and per-query launch of blast_chunk."""

    def __init__(self, rt, override=None):
        self.rt = rt
        caps = rt.caps
        pv_words = (1 << 15) // 32
        pv_local = 4 * pv_words <= caps.local_mem // 16
        base = choose(BLAST_CHUNK, {"PV_LOCAL": pv_local}, lookup(BLAST_CHUNK.family, caps), override)
        base["QBITS"] = chunk_qbits(base["WG"])
        self.values = BLAST_CHUNK.validate(base)
        self.wg = self.values["WG"]
        self.avail = caps.local_mem - _static_local(self.wg, pv_words, self.values["PV_LOCAL"])
        if self.avail < 4 * 32:
            raise InputError(f"{caps.name}: too little local memory for blast_chunk at WG={self.wg}")
        self.groups = max(1, caps.compute_units) * self.values["GROUPS"]
        self._kernels = {}
        self._global_state = None

    def kernel(self, state_local: bool):
        k = self._kernels.get(state_local)
        if k is None:
            prg = self.rt.program("blast_chunk.mako", BLAST_CHUNK,
                                  {**self.values, "STATE_LOCAL": state_local})
            k = self._kernels[state_local] = cl.Kernel(prg, "blast_chunk")
        return k

    def placement(self, qlen: int, window: int):
        """(nstate, state in local memory?, hit buffer entries) for one query."""
        wg, v = self.wg, self.values
        if qlen >= (1 << v["QBITS"]):
            raise InputError(f"queries of {qlen} residues are too long for the device path "
                             f"(at most {(1 << v['QBITS']) - 1} at WG={wg})")
        nstate = -(-(qlen + max(window, 0) + 1) // wg) * wg
        words = self.avail // 4
        per = 2 if v["BALANCE"] else 1                # hit buffer words per entry
        if v["STATE"] == "local" or (v["STATE"] == "auto" and nstate + per * v["MIN_CAP"] <= words):
            cap = min(v["CAP_MAX"], (words - nstate) // per)
            if cap < 32:
                raise InputError(f"the diagonal state of a {qlen}-residue query does not fit in "
                                 "local memory (STATE=local)")
            return nstate, True, cap
        return nstate, False, min(v["CAP_MAX"], words // per)

    def run(self, blk, qs, b_query, b_matrix, b_present, b_starts, b_qoffs, times):
        """Initial HSP rows (block subject indices) of one query against one block."""
        ctx, queue, mf = self.rt.ctx, self.rt.queue, cl.mem_flags
        qlen, window = len(qs.codes), int(qs.opts.window)
        nstate, local, cap = self.placement(qlen, window)
        big = -(-(blk.n + 1) // nstate) * nstate
        if big + qlen >= 2 ** 31:
            raise InputError("block too long for the device path's diagonal numbering")
        if local:
            state = cl.LocalMemory(4 * nstate)
        else:
            need = 4 * nstate * self.groups
            if self._global_state is None or self._global_state.size < need:
                self._global_state = cl.Buffer(ctx, mf.READ_WRITE, need)
            state = self._global_state
        k = self.kernel(local)
        tasks = blk.chunk
        capacity = max(MIN_OUT_ROWS, blk.n >> 8)
        counters = cl.Buffer(ctx, mf.READ_WRITE, 16)
        while True:
            out = cl.Buffer(ctx, mf.READ_WRITE, 28 * capacity)
            cl.enqueue_copy(queue, counters, np.zeros(4, dtype=np.uint32))
            k.set_args(tasks.start, tasks.end, tasks.subj, np.int32(tasks.count), counters,
                       blk.res, tasks.base32, blk.lens, b_query, np.int32(qlen), b_present,
                       b_starts, b_qoffs, b_matrix, np.int32(window), np.int32(qs.xdrop_ungapped),
                       np.int32(qs.cutoff_ungapped), state, np.int32(nstate), np.int32(big),
                       cl.LocalMemory(4 * cap * (2 if self.values["BALANCE"] else 1)), np.int32(cap), out, np.uint32(capacity))
            ev = cl.enqueue_nd_range_kernel(queue, k, (self.wg * self.groups,), (self.wg,))
            ev.wait()
            times.two_hit += (ev.profile.end - ev.profile.start) * 1e-9
            got = np.zeros(4, dtype=np.uint32)
            cl.enqueue_copy(queue, got, counters)
            total = int(got[1])
            if total <= capacity:
                break
            capacity = total
        times.counts["hits"] += int(got[2])
        times.counts["extensions"] = times.counts.get("extensions", 0) + int(got[3])
        rows = np.empty((total, 7), dtype=np.int32)
        if total:
            cl.enqueue_copy(queue, rows, out)
        return rows
