"""One device's share of a Smith-Waterman search: its queues, scratch buffers and kernels.

A :class:`Worker` scores one query against one uploaded :class:`~clalign.sw.batch.Batch`: the
long subjects go to the intra-task kernel on a second queue, concurrently with the first pass
(inter-task or vector kernel) over the others, whose saturated lanes are rescored at wider lanes
until every score is exact. Several workers may share a device (and a context): each has its own
queues and buffers.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pyopencl as cl

from ..errors import InputError
from .batch import plan_batches, upload_batch
from .intratask import INTRA_TEMPLATE, STRIPED_TEMPLATE, intra_values, launch_intratask, striped_lanes, striped_vec
from .params import INTRA_PARAMS, STRIPED_PARAMS, SW_PARAMS, SWV_PARAMS
from .passes import INTER_TEMPLATE, VECTOR_TEMPLATE, run_intertask, run_vector
from .scoring import INT32_MAX
from .threshold import choose_threshold, device_rates


def event_seconds(ev) -> float:
    """Profiled duration of a finished command; 0 where the driver has no profile for it (NVIDIA
    answered PROFILING_INFO_NOT_AVAILABLE once with two worker threads on one context; the
    times only feed diagnostics, never results)."""
    try:
        ev.wait()
        return (ev.profile.end - ev.profile.start) * 1e-9
    except (cl.Error, cl.RuntimeError):
        return 0.0


class ScoreOverflowError(InputError):
    """A score reached the 32-bit range: reported instead of returning a wrapped number."""


class Worker:
    """Queues, scratch buffers and kernel objects of one device slot."""

    def __init__(self, rt, plan):
        self.rt = rt
        self.caps = rt.caps
        self.ctx = rt.ctx
        self.plan = plan
        self.queue = rt.new_queue()
        # one queue per query in flight (Worker.begin's slot): the next query's first pass starts
        # on the device while the current one's longest lanes finish
        self.queues = [self.queue, rt.new_queue()]
        self.copyq = rt.new_queue()         # uploads of the next batch
        self.longq = rt.new_queue()         # intra-task kernel, concurrent with the first pass
        self._scratch: dict = {}
        self._kernels: dict = {}
        self._matT: dict = {}
        self._thresholds: dict = {}         # lengths digest -> threshold (the rates are fixed per worker)
        self.kernel_seconds = 0.0
        self.intra_seconds = 0.0
        self.cells = 0
        self.busy_seconds = 0.0
        self.last_passes: list = []         # (width, subjects) of the last query, for tests/diagnostics
        self.last_kernels: list = []        # kernel family of each entry of last_passes
        self.resident = None                # (Database, Batch) kept while the database is one batch

    # -- resources ----------------------------------------------------------------------
    def scratch(self, name, nbytes):
        """A scratch buffer of at least nbytes, reused between passes."""
        cur = self._scratch.get(name)
        if cur is None or cur.size < nbytes:
            cur = self._scratch[name] = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, max(16, int(nbytes)))
        return cur

    def kernel(self, prg, name):
        """This worker's kernel object (its own, so that set_args never races another worker)."""
        key = (id(prg), name)
        k = self._kernels.get(key)
        if k is None:
            k = self._kernels[key] = (cl.Kernel(prg, name), prg)
        return k[0]

    def vector_matrix(self, lane):
        """The transposed matrix for the vector kernel (uint8 biased for u8 lanes, int16)."""
        buf = self._matT.get(lane)
        if buf is None:
            sc = self.plan.scoring
            mt = np.ascontiguousarray(sc.scores.T)
            mt = (mt - sc.smin).astype(np.uint8) if lane == "u8" else mt.astype(np.int16)
            buf = self._matT[lane] = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                                               hostbuf=mt)
        return buf

    def launch(self, knl, gsize, lsize, wait, batch, slot=0, block=True):
        """Run a first-pass or rescoring kernel on slot ``slot``'s queue and read the batch's scores
        back: blocking (its profiled time goes to ``kernel_seconds``), or not (a :class:`Launched`
        to wait for later)."""
        q = self.queues[slot]
        ev = cl.enqueue_nd_range_kernel(q, knl, (gsize,), (lsize,), wait_for=wait)
        out = np.empty(batch.n, dtype=np.int32)
        copy = cl.enqueue_copy(q, out, batch.score_buffer(slot), wait_for=[ev], is_blocking=block)
        if not block:
            q.flush()
            return Launched(ev, copy, out)
        self.kernel_seconds += event_seconds(ev)
        return out

    # -- batches ------------------------------------------------------------------------
    def batch_limit(self) -> int:
        """Residues per batch: the override, else what half the device memory holds."""
        lim = self.plan.batch_residues
        if lim is None:
            L = 2 if self.plan.kernel == "vector" else 32 // self.plan.first_width
            # two residue slots, strip boundaries (one set per query in flight), lane tables
            per_res = 2 + 8.0 * self.pipeline_depth() / L + 0.3
            lim = int(self.caps.global_mem * 0.5 / per_res)
            lim = min(lim, int(self.caps.max_alloc * L / 8 * 0.9), self.caps.max_alloc, 2 ** 31 - 1)
        return max(1, int(lim))

    def plan_batches(self, db, start=0, stop=None):
        """[(start, stop)] of the database range ``start:stop`` in batches this device holds."""
        if stop is None:
            stop = len(db)
        if start == 0 and stop == len(db):
            return plan_batches(db, self.batch_limit())
        return [(a + start, b + start) for a, b in plan_batches(_Slice(db, start, stop), self.batch_limit())]

    def threshold_for(self, lengths, report=None) -> int:
        """Subjects longer than this go to the intra-task kernel: the override, else the cost
        model on these lengths with the device's measured rates (:mod:`clalign.sw.threshold`)."""
        if self.plan.long_threshold is not None:
            return self.plan.long_threshold
        L = np.ascontiguousarray(lengths)
        key = (L.dtype.str, L.size, hashlib.blake2b(L.view(np.uint8), digest_size=16).digest())
        thr = self._thresholds.get(key)
        if thr is None:          # a search asks several times (plan, programs, upload): sorting 570,000 lengths once
            thr = choose_threshold(L, device_rates(self, report), self.plan.lanes_per_block)
            if len(self._thresholds) > 64:
                self._thresholds.clear()
            self._thresholds[key] = thr
        return thr

    def programs_for(self, qlens, lengths) -> list:
        """(template, paramset, values) of every program a search of queries of lengths ``qlens``
        (in search order) against subjects of ``lengths`` surely needs on this device, in the order
        it needs them: per query its first pass and, when some subjects go to the intra-task kernel,
        that kernel's variant for the query's length. Rescoring passes are left out (most searches
        never run them on a wide first lane; they build when a lane saturates)."""
        plan, caps = self.plan, self.caps
        L = np.asarray(lengths, dtype=np.int64)
        if L.size == 0:
            return []
        thr = self.threshold_for(L)
        short = L[L <= thr]
        longs = bool(short.size < L.size)
        sched = plan.schedule(short)
        items = []
        for qlen in qlens:
            if short.size:
                if plan.kernel == "vector":
                    items.append((VECTOR_TEMPLATE, SWV_PARAMS, plan.vector_passes()[0][1]))
                else:
                    w0 = plan.widths()[0]
                    items.append((INTER_TEMPLATE, SW_PARAMS, plan.values(w0, plan.profile_layout(w0, qlen), sched)))
            if longs and plan.ivalues["KIND"] == "striped":
                lane = striped_lanes(plan.scoring)[0]
                vals = {"LANE": lane, "VEC": striped_vec(lane, caps), "WG": 1}
                items.append((STRIPED_TEMPLATE, STRIPED_PARAMS, vals))
            elif longs:
                gran = caps.warp if caps.is_gpu else plan.ivalues["WG"]
                items.append((INTRA_TEMPLATE, INTRA_PARAMS, intra_values(plan.ivalues, qlen, gran)))
        out, seen = [], set()
        for t, ps, v in items:
            key = (t, tuple(sorted(v.items())))
            if key not in seen:
                seen.add(key)
                out.append((t, ps, v))
        return out

    def upload(self, db, start, stop, threshold=None):
        """Upload subjects ``start:stop``; the long ones (by ``threshold``, else the cost model on
        this batch's own lengths) are set aside for the intra-task kernel."""
        b = upload_batch(self.ctx, self.copyq, db, start, stop)
        b.split(self.threshold_for(b.lengths) if threshold is None else threshold)
        self.copyq.flush()
        return b

    # -- scoring ------------------------------------------------------------------------
    def score_batch(self, batch, qcodes, query_id="query", subject_ids=None):
        """Exact scores of one query against one uploaded batch (batch-local order)."""
        return self.end(self.begin(batch, qcodes, query_id, subject_ids))

    def pipeline_depth(self) -> int:
        """Queries in flight on this device: the ``pipeline`` knob, else 1. Two (the next query's
        first pass queued on a second queue while the current one finishes) measured no faster on
        the H100 (run 15 in docs/perf/sw.md: 3.05 vs 3.00 s, 2.95 vs 2.96 s with WG 128) and costs a
        second set of strip-boundary buffers, so it is not the default."""
        p = self.plan.pipeline
        return max(1, min(len(self.queues), int(p))) if p else 1

    def begin(self, batch, qcodes, query_id="query", subject_ids=None, slot=0, block=True) -> "Job":
        """Start scoring one query against ``batch``: the intra-task kernel over the long subjects
        is queued, and the inter-task first pass over the others run (``block``: its scores read
        back before returning, with the interpreter's lock released while the device works) or
        queued (on slot ``slot``'s queue and scratch buffers, so two queries may be in flight on
        different slots); :meth:`end` collects the scores and runs whatever rescoring they need.

        The blocking read is the default, as before the two slots: with the non-blocking read and an
        event wait on the H100, the traceback threads' numba cache loads took 2-3 s during the search
        instead of 0.5 s (docs/perf/sw.md, runs 15-16; the cause was not isolated)."""
        job = Job(batch, qcodes, query_id, subject_ids, slot)
        if batch.n == 0:
            return job
        plan = self.plan
        job.pending = launch_intratask(self, batch, batch.long, qcodes, job.profiles) if len(batch.long) else None
        if batch.sched is None:
            batch.sched = plan.schedule(batch.lengths[batch.order]) if len(batch.order) else "static"
        if len(batch.order) and plan.kernel != "vector":
            first = run_intertask(self, batch, batch.order, plan.widths()[0], qcodes, batch.sched, job.profiles,
                                  slot=slot, block=block)
            job.first = Done(first) if block else first
        return job

    def end(self, job) -> np.ndarray:
        """The exact scores of a :meth:`begin` job (batch-local order), rescoring saturated lanes."""
        batch, qcodes, result = job.batch, job.qcodes, job.result
        if batch.n == 0:
            return result
        plan = self.plan
        passes, kernels = [], []
        ids = batch.order
        rescore = plan.rescore_schedule()
        if len(ids) and plan.kernel == "vector":
            for width, vals in plan.vector_passes():
                if len(ids) == 0:
                    break
                sc = run_vector(self, batch, qcodes, ids, vals)
                passes.append((width, len(ids)))
                kernels.append("vector")
                ids = self._merge(batch, result, sc, ids)
            rest = [32]
        else:
            widths = plan.widths()
            if job.first is not None:
                sc = job.first.wait(self)
                passes.append((widths[0], len(ids)))
                kernels.append("intertask")
                ids = self._merge(batch, result, sc, ids)
            rest = widths[1:]
        for width in rest:
            if len(ids) == 0:
                break
            sc = run_intertask(self, batch, ids, width, qcodes, rescore, job.profiles, slot=job.slot)
            passes.append((width, len(ids)))
            kernels.append("intertask")
            ids = self._merge(batch, result, sc, ids)
        if len(ids):
            self._overflow(batch, ids, qcodes, job.query_id, job.subject_ids)
        if job.pending is not None:
            ls = job.pending.result()
            passes.append((32, len(batch.long)))
            kernels.append("intratask")
            result[batch.long] = ls
            if (ls < 0).any():
                self._overflow(batch, batch.long[ls < 0], qcodes, job.query_id, job.subject_ids)
        self.last_passes = passes
        self.last_kernels = kernels
        self.cells += len(qcodes) * int(batch.lengths.sum(dtype=np.int64))
        return result

    def _overflow(self, batch, ids, qcodes, query_id, subject_ids):
        i = int(ids[0]) + batch.start
        name = subject_ids[i] if subject_ids is not None else f"#{i}"
        raise ScoreOverflowError(f"sw: the score of {query_id} against subject {name} reaches "
                                 f"{INT32_MAX - self.plan.scoring.smax} or more: beyond 32-bit scores "
                                 f"({len(ids)} subject(s) affected); use a matrix with smaller scores")

    @staticmethod
    def _merge(batch, result, sc, ids):
        """Take the finished scores of pass ``sc`` over ``ids`` into ``result``; return the subjects
        still to rescore (-1 in ``sc``), ascending length as the passes expect."""
        if ids is batch.order:
            # first pass over every short subject: whole-array operations, no gathers over the
            # batch (the long subjects' entries are not written by it: set by the intra-task pass)
            sc[batch.long] = 0
            result[:] = sc
            bad = np.flatnonzero(sc < 0)
            if bad.size == 0:
                return bad
            result[bad] = 0
            return bad[np.argsort(batch.lengths[bad], kind="stable")]
        got = sc[ids]
        ok = got >= 0
        result[ids[ok]] = got[ok]
        return ids[~ok]


class Launched:
    """A kernel and the read of its scores, queued without waiting."""

    def __init__(self, event, copy, host):
        self.event, self.copy, self.host = event, copy, host

    def wait(self, worker) -> np.ndarray:
        self.copy.wait()
        worker.kernel_seconds += event_seconds(self.event)
        return self.host


class Done:
    """A first pass whose scores were read back already (:meth:`Worker.begin` with ``block``)."""

    def __init__(self, host):
        self.host = host

    def wait(self, worker) -> np.ndarray:
        return self.host


class Job:
    """One query being scored against one batch (:meth:`Worker.begin` to :meth:`Worker.end`)."""

    def __init__(self, batch, qcodes, query_id, subject_ids, slot):
        self.batch, self.qcodes, self.query_id, self.subject_ids, self.slot = batch, qcodes, query_id, subject_ids, slot
        self.result = np.zeros(batch.n, dtype=np.int32)
        self.profiles: dict = {}
        self.pending = None         # intra-task launch
        self.first = None           # inter-task first pass in flight (Launched)


class _Slice:
    """The offsets of a database range, for batch planning of one device's share."""

    def __init__(self, db, start, stop):
        self.offsets = np.asarray(db.offsets[start:stop + 1])

    def __len__(self):
        return len(self.offsets) - 1
