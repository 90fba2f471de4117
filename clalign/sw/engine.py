"""Smith-Waterman database search on an OpenCL device (after CUDASW++3.0).

One query is aligned against every database subject by the inter-task kernel
(``kernels/sw_intertask.mako``): subjects are taken in length-sorted order, ``WORDS * 32/WIDTH``
per work-item, one lane of a packed 32-bit word each. The first pass runs at 8 or 16 bits per
lane; every subject whose lane saturated is rescored on the device at the next width (16, then
32 bits), so every score is exact. Databases larger than the device's memory go through in
batches (contiguous in database order, sorted by length inside), the upload of the next batch
overlapping the search of the current one on a second queue.

On CPU devices the first pass is the vector kernel (``kernels/sw_vector.mako``, ``KERNEL="vector"``):
``VEC`` subjects per work-item in the elements of a ``short{VEC}`` vector, 16-bit saturating,
with the subjects whose lane may have saturated rescored by the 32-bit inter-task pass.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from ..data import PROTEIN, as_database, get_matrix, read_fasta
from ..data.inputs import as_sequence, check_codes, sequence_or_path
from ..errors import InputError, ParameterError
from ..runtime import Runtime, choose, simd_values
from ..runtime.tuning import lookup
from .params import FAMILY, INTERTASK_ONLY, SW_PARAMS, SWV_PARAMS, VFAMILY

ALPHA = 32          # profile rows per residue code (28 codes + sentinels), power of 2 for pair indices
SENTINEL = 28       # residue code of padding lanes/columns/rows; scores min(matrix.min, 0)
_TEMPLATE = "sw_intertask.mako"
_VTEMPLATE = "sw_vector.mako"


# ------------------------------------------------------------------------------------------
# Results
@dataclass(frozen=True)
class Hit:
    """One database hit of a query."""

    query_id: str
    subject_index: int      # index in database order
    subject_id: str
    score: int
    qlen: int
    slen: int


@dataclass
class QueryResult:
    """The best hits of one query, sorted by score descending, ties in database order."""

    query_id: str
    qlen: int
    hits: list = field(default_factory=list)
    seconds: float = 0.0    # wall time of this query's device work (kernels, rescoring, reads)

    @property
    def gcups(self) -> float:
        return 0.0 if self.seconds <= 0 else self._cells / self.seconds / 1e9

    _cells: int = 0


# ------------------------------------------------------------------------------------------
# Scoring set-up
@dataclass(frozen=True)
class Scoring:
    """Matrix and gap penalties, with the derived per-width constants."""

    scores: np.ndarray      # (ALPHA, ALPHA) int64; rows/cols >= 28 score ``smin``
    gap_open: int
    gap_extend: int
    smin: int               # min(matrix min, 0): score of sentinel residues
    smax: int               # max(matrix max, 0)

    @classmethod
    def make(cls, matrix, gap_open, gap_extend):
        m = get_matrix(matrix)
        if int(gap_open) < 0 or int(gap_extend) < 0:
            raise ParameterError(f"gap penalties must be >= 0 (got open {gap_open}, extend {gap_extend})")
        if int(gap_open) + int(gap_extend) > 1 << 20:
            raise ParameterError("gap penalties above 2^20 are not supported")
        smin = min(int(m.min), 0)
        smax = max(int(m.max), 0)
        if smax - smin > 1 << 20:
            raise ParameterError(f"matrix {m.name}: score range {smin}..{smax} too wide")
        big = np.full((ALPHA, ALPHA), smin, dtype=np.int64)
        big[:28, :28] = m.scores
        return cls(big, int(gap_open), int(gap_extend), smin, smax)

    @property
    def goe(self) -> int:
        return self.gap_open + self.gap_extend

    def width_ok(self, width: int) -> bool:
        """Whether lanes of ``width`` bits can hold this scoring scheme at all."""
        if width == 8:
            bias = -self.smin
            return self.goe <= 255 and 255 - bias - self.smax > 0
        if width == 16:
            return self.smax < 16384 and self.goe + self.gap_extend < 16384 and -self.smin < 16384
        return True

    def kernel_consts(self, width: int):
        """(bias, goe, ext, thresh) kernel arguments; a lane max >= thresh means 'overflowed'."""
        if width == 8:
            bias = -self.smin
            return bias, self.goe, self.gap_extend, 255 - bias - self.smax
        if width == 16:
            return 0, self.goe, self.gap_extend, 32767 - self.smax
        return 0, self.goe, self.gap_extend, 2 ** 31 - 1


def build_profile(qcodes, scoring: Scoring, width: int, rows: int, layout: str) -> np.ndarray:
    """Query profile words (np.uint32) in the layout the kernel expects.

    The query is padded to a multiple of ``rows`` with sentinel rows. Per strip of ``rows`` rows:
    ``plain``: for each residue code a, the strip's scores packed ``32/width`` rows per word;
    ``pairs`` (8/16 bits): for each pair index ``a0 | a1 << 5``, words holding both lanes'
    scores (16 bits: one row per word; 8 bits: two rows x two lanes per word).
    """
    q = np.asarray(qcodes, dtype=np.intp)
    m = len(q)
    ns = max(1, -(-m // rows))
    qp = np.full(ns * rows, SENTINEL, dtype=np.intp)
    qp[:m] = q
    P = scoring.scores[qp, :]                        # (ns*rows, ALPHA) scores
    if width == 8:
        P = P - scoring.smin                          # biased, >= 0
        dt = np.uint8
    elif width == 16:
        dt = np.int16
    else:
        dt = np.int32
    P = P.reshape(ns, rows, ALPHA)
    if layout == "plain" or width == 32:
        # Residue-minor: (strip, word group, residue, VW words) so that one vector load of a
        # wavefront, whose lanes hold different residues, reads one contiguous stretch.
        arr = np.ascontiguousarray(P.transpose(0, 2, 1)).astype(dt)    # (ns, a, rows)
        words = arr.reshape(ns, ALPHA, -1).view(np.uint32) if dt != np.int32 else arr.view(np.uint32)
        words = words.reshape(ns, ALPHA, -1)                           # (ns, a, RW)
        rw = words.shape[2]
        vw = 4 if rw % 4 == 0 else (2 if rw % 2 == 0 else 1)
        words = words.reshape(ns, ALPHA, rw // vw, vw).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(words).reshape(-1)
    pair = np.arange(ALPHA * ALPHA)
    a0, a1 = pair & 31, pair >> 5
    if width == 16:
        V = np.stack([P[:, :, a0], P[:, :, a1]], axis=-1)   # (ns, rows, pair, lane)
        V = V.transpose(0, 2, 1, 3)                         # (ns, pair, rows, lane)
    else:
        V = np.stack([P[:, :, a0], P[:, :, a1]], axis=-1)   # (ns, rows, pair, lane)
        V = V.reshape(ns, rows // 2, 2, ALPHA * ALPHA, 2)   # (ns, t, r, pair, lane)
        V = V.transpose(0, 3, 1, 2, 4)                      # (ns, pair, t, r, lane)
    return np.ascontiguousarray(V).astype(dt).reshape(-1).view(np.uint32)


# ------------------------------------------------------------------------------------------
# Grouping subjects into lanes, groups and blocks
@dataclass
class Layout:
    """Host-side description of one pass: which subject sits in which lane."""

    lanes: np.ndarray       # int32 (ngroups * S), -1 = empty lane
    glen: np.ndarray        # int32 (ngroups)
    boff: np.ndarray        # int64 (nblocks + 1): first column of each block (multiples of 4)
    ngroups: int
    nblocks: int
    columns: int            # sum of block lengths


def make_layout(ids: np.ndarray, lengths: np.ndarray, S: int, WG: int) -> Layout:
    """Pack ``ids`` (already length-sorted) S per group, WG groups per block."""
    n = len(ids)
    ngroups = max(1, -(-n // S))
    lanes = np.full(ngroups * S, -1, dtype=np.int32)
    lanes[:n] = ids
    ln = np.zeros(ngroups * S, dtype=np.int64)
    ln[:n] = lengths[ids]
    glen = ln.reshape(ngroups, S).max(axis=1)
    nblocks = -(-ngroups // WG)
    gl = np.zeros(nblocks * WG, dtype=np.int64)
    gl[:ngroups] = glen
    blen = (gl.reshape(nblocks, WG).max(axis=1) + 3) & ~3     # whole chunks of 4 columns
    boff = np.zeros(nblocks + 1, dtype=np.int64)
    np.cumsum(blen, out=boff[1:])
    return Layout(lanes, glen.astype(np.int32), boff, ngroups, nblocks, int(blen.sum()))


# ------------------------------------------------------------------------------------------
def _as_codes(seq, name="query") -> np.ndarray:
    seq = as_sequence(seq, name)
    if isinstance(seq, np.ndarray):
        return check_codes(seq, PROTEIN.size, name)
    s = (seq.decode("ascii", "replace") if isinstance(seq, bytes) else seq).strip().upper()
    if s.endswith("*"):
        s = s[:-1]
    return PROTEIN.encode(s)


def parse_queries(queries):
    """[(id, codes)] from a residue string, a list of str / (id, seq), or a FASTA path."""
    import os

    if isinstance(queries, (str, os.PathLike, bytes, np.ndarray)):
        kind, s = sequence_or_path(queries, "queries")
        if kind == "path":
            out = [(rec.id, _as_codes(rec.sequence)) for rec in read_fasta(s)]
            if not out:
                raise InputError("no sequences in query file", s)
            return out
        return [("query", _as_codes(s))]
    if queries is None or not hasattr(queries, "__iter__"):
        raise TypeError(f"queries: expected a sequence, a list of sequences or a FASTA path, got {queries!r}")
    out = []
    for i, q in enumerate(queries):
        if isinstance(q, tuple):
            out.append((str(q[0]), _as_codes(q[1])))
        else:
            out.append((f"query_{i + 1}", _as_codes(q, f"queries[{i}]")))
    return out


class SWEngine:
    """Kernels, parameters and scoring for one device; searches databases query by query."""

    def __init__(self, matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides):
        self.rt = Runtime.get(device)
        self.caps = self.rt.caps
        self.scoring = Scoring.make(matrix, gap_open, gap_extend)
        ov = dict(overrides)
        intertask_asked = any(k in ov for k in INTERTASK_ONLY)
        self.batch_residues = ov.pop("batch_residues", None)
        self.groups_per_cu = int(ov.pop("groups_per_cu", 0) or 0)
        if "first_width" in ov:
            ov["WIDTH"] = ov.pop("first_width")
        simd = ov.pop("SIMD", None)
        known = set(SW_PARAMS.names()) | set(SWV_PARAMS.names())
        unknown = set(ov) - known
        if unknown:
            raise ParameterError(f"unknown sw option(s) {sorted(unknown)}; known: "
                                 f"{sorted(known) + ['batch_residues', 'groups_per_cu']}")
        vnames = set(SWV_PARAMS.names())
        self.override = {k: v for k, v in ov.items() if k in SW_PARAMS.names()}
        self.simd = simd_values(self.caps, simd)
        self.tuned = lookup(FAMILY, self.caps)
        base = choose(SW_PARAMS, self.simd, self.tuned, {k: v for k, v in self.override.items()
                                                         if k not in ("PROFILE", "SCHEDULE")})
        # First-pass kernel family: override, else the intertask kernel when one of its own
        # parameters was overridden (e.g. WIDTH=8), else the tuning table.
        if "KERNEL" in ov or not intertask_asked:
            self.kernel = base["KERNEL"]
        else:
            self.kernel = "intertask"
        if self.kernel == "vector" and not self.scoring.width_ok(16):
            self.kernel = "intertask"      # scores too wide for 16-bit lanes: the 32-bit pass does all
        vov = {k: v for k, v in ov.items() if k in vnames}
        vt = lookup(VFAMILY, self.caps)
        if "LANE" in vov and "VEC" not in vov:
            vt = {**vt, "VEC": 16}        # the tuned VEC belongs to the tuned LANE
        self.vvalues = choose(SWV_PARAMS, {}, vt, vov)
        lane, vec = self.vvalues["LANE"], self.vvalues["VEC"]
        if vec not in ((16, 32) if lane == "u8" else (8, 16)):
            raise ParameterError(f"sw_vector: VEC={vec} is not available with LANE={lane} "
                                 f"(s16: 8 or 16; u8: 16 or 32)")
        if vec == 32 and not self.caps.clang_vectors:
            raise ParameterError(f"sw_vector: VEC=32 needs Clang vector extensions, which {self.caps.name} "
                                 "does not build (probe: clang_vectors); use VEC=16")
        if self.vvalues["WG"] > self.caps.max_work_group:
            self.vvalues["WG"] = self.caps.max_work_group
        self.first_width = base["WIDTH"]
        self.words, self.rows, self.wg = base["WORDS"], base["ROWS"], base["WG"]
        if self.wg > self.caps.max_work_group:
            self.wg = self.caps.max_work_group
        self.kernel_seconds = 0.0
        self.last_passes: list = []       # (width, subjects) of the last query, for tests/diagnostics
        self.last_kernels: list = []      # first-pass family per entry of last_passes
        self._copyq = None
        self._kernels: dict = {}
        self._resident = None             # (Database, uploaded batch) kept while it is the only batch

    # -- parameter choice ----------------------------------------------------------------
    def widths(self):
        """Lane widths of the passes: the first width the scoring fits, then wider ones."""
        if self.kernel == "vector":
            return [w for w, _ in self.vector_passes()] + [32]
        order = [w for w in (8, 16, 32) if w >= self.first_width]
        return [w for w in order if self.scoring.width_ok(w)]

    def vector_passes(self):
        """[(width, template values)] of the vector kernel's passes: u8 (when asked for and the
        scoring fits 8 bits), then s16 (VEC 16 after a 32-lane u8 pass)."""
        v = self.vvalues
        out = []
        if v["LANE"] == "u8" and self.scoring.width_ok(8):
            out.append((8, dict(v)))
        out.append((16, {**v, "LANE": "s16", "VEC": 16 if v["VEC"] == 32 else v["VEC"]}))
        return out

    def profile_layout(self, width: int, qlen: int) -> str:
        """CUDASW++3.0's rule, with our table sizes: the residue-pair variant while its table for
        the query fits in half the L2 cache, else the plain profile; tuning table and override win."""
        if width == 32:
            return "plain"
        ov = self.override.get("PROFILE") or self.tuned.get("PROFILE")
        if ov:
            return ov
        pair_bytes = ALPHA * ALPHA * 4 * max(1, -(-qlen // self.rows)) * self.rows // (2 if width == 8 else 1)
        return "pairs" if pair_bytes <= self.caps.global_cache // 2 else "plain"

    def schedule(self, lengths) -> str:
        """Static when the length spread is tiny (std <= 1% of the mean, CUDASW++3.0), else dynamic."""
        ov = self.override.get("SCHEDULE") or self.tuned.get("SCHEDULE")
        if ov:
            return ov
        if len(lengths) == 0:
            return "static"
        mean = float(np.mean(lengths))
        return "static" if mean == 0 or float(np.std(lengths)) <= 0.01 * mean else "dynamic"

    def values(self, width, layout, sched) -> dict:
        ov = {**self.override, "KERNEL": "intertask", "WIDTH": width, "PROFILE": layout, "SCHEDULE": sched, "WG": self.wg}
        return choose(SW_PARAMS, self.simd, self.tuned, ov)

    def program(self, values):
        return self.rt.program(_TEMPLATE, SW_PARAMS, values)

    # -- batches -------------------------------------------------------------------------
    def plan_batches(self, db):
        """[(start, stop)] contiguous ranges of the database, each within the batch size."""
        lim = self.batch_residues
        if lim is None:
            L = 2 if self.kernel == "vector" else 32 // self.first_width
            per_res = 2 + 8.0 / L + 0.3          # two residue slots, strip boundaries, lane tables
            lim = int(self.caps.global_mem * 0.5 / per_res)
            lim = min(lim, int(self.caps.max_alloc * L / 8 * 0.9), self.caps.max_alloc, 2 ** 31 - 1)
        lim = max(1, int(lim))
        n = len(db)
        if n == 0:
            return []
        cum = np.asarray(db.offsets, dtype=np.int64) - int(db.offsets[0])
        out, start = [], 0
        while start < n:
            stop = int(np.searchsorted(cum, cum[start] + lim, side="right")) - 1
            stop = min(max(stop, start + 1), n)
            out.append((start, stop))
            start = stop
        return out

    def _upload_batch(self, db, start, stop, queue):
        ctx = self.rt.ctx
        o0, o1 = int(db.offsets[start]), int(db.offsets[stop])
        res = np.asarray(db.residues[o0:o1])
        if res.size == 0:
            res = np.zeros(1, dtype=np.uint8)
        lens = np.ascontiguousarray(db.lengths[start:stop], dtype=np.int32)
        offs = (np.asarray(db.offsets[start:stop], dtype=np.int64) - o0).astype(np.int32)
        mf = cl.mem_flags
        b = {"res": cl.Buffer(ctx, mf.READ_ONLY, res.nbytes),
             "offs": cl.Buffer(ctx, mf.READ_ONLY, max(4, offs.nbytes)),
             "lens": cl.Buffer(ctx, mf.READ_ONLY, max(4, lens.nbytes)),
             "scores": cl.Buffer(ctx, mf.READ_WRITE, max(4, lens.nbytes)),
             "host": (res, lens, offs), "n": stop - start, "start": start, "lengths": lens}
        evs = [cl.enqueue_copy(queue, b["res"], res, is_blocking=False),
               cl.enqueue_copy(queue, b["offs"], offs, is_blocking=False),
               cl.enqueue_copy(queue, b["lens"], lens, is_blocking=False)]
        b["events"] = evs
        order = np.argsort(lens, kind="stable").astype(np.int32)
        b["order"] = order
        return b

    # -- one pass ------------------------------------------------------------------------
    def _buf(self, name, nbytes):
        """A scratch buffer of at least nbytes, reused between passes."""
        cache = self.__dict__.setdefault("_scratch", {})
        cur = cache.get(name)
        if cur is None or cur.size < nbytes:
            cur = cache[name] = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, max(16, int(nbytes)))
        return cur

    def _run_pass(self, batch, ids, width, qcodes, sched, prof_cache):
        q = self.rt.queue
        layout = self.profile_layout(width, len(qcodes))
        vals = self.values(width, layout, sched)
        prg = self.program(vals)
        L = 32 // width
        S = vals["WORDS"] * L
        lkey = ("layout", S, vals["WG"])
        cached = batch.get(lkey) if ids is batch["order"] else None
        if cached is None:
            lay = make_layout(ids, batch["lengths"], S, vals["WG"])
            mf = cl.mem_flags
            bufs = tuple(cl.Buffer(self.rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
                         for a in (lay.lanes, lay.glen, lay.boff))
            # The subjects' residues, interleaved lane by lane for this layout (on the device).
            ires = cl.Buffer(self.rt.ctx, mf.READ_WRITE, max(16, lay.columns * vals["WG"] * S))
            inter = cl.Kernel(prg, "sw_interleave")
            inter.set_args(batch["res"], batch["offs"], batch["lens"], bufs[0], bufs[2],
                           np.int32(lay.ngroups), np.int32(lay.nblocks), ires)
            ev = cl.enqueue_nd_range_kernel(q, inter, (lay.nblocks * vals["WG"],), (vals["WG"],),
                                            wait_for=list(batch.get("events", [])) or None)
            batch.setdefault("events", []).append(ev)
            cached = (lay, bufs + (ires,))
            if ids is batch["order"]:
                batch[lkey] = cached      # the first pass's layout is the same for every query
        lay, (lanes, glen, boff, ires) = cached
        key = (width, layout, vals["ROWS"])
        prof = prof_cache.get(key)
        if prof is None:
            host = build_profile(qcodes, self.scoring, width, vals["ROWS"], layout)
            prof = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_ONLY, host.nbytes)
            cl.enqueue_copy(q, prof, host, is_blocking=False)
            prof_cache[key] = (prof, host)
        else:
            prof = prof[0]
        nstrips = max(1, -(-len(qcodes) // vals["ROWS"]))
        tmp_bytes = 16 if nstrips == 1 else lay.columns * vals["WG"] * vals["WORDS"] * 8
        tmp = self._buf("tmp", tmp_bytes)
        counter = self._buf("counter", 4)
        wait = list(batch.pop("events", []))
        if sched == "dynamic":
            wait.append(cl.enqueue_fill_buffer(q, counter, np.int32(0), 0, 4))
            per_cu = self.groups_per_cu or (8 if self.caps.is_gpu else 1)
            nwg = max(1, min(lay.nblocks, self.caps.compute_units * per_cu))
        else:
            nwg = lay.nblocks
        bias, goe, ext, thresh = self.scoring.kernel_consts(width)
        knl = self._kernels.get(id(prg))
        if knl is None:
            knl = self._kernels[id(prg)] = (cl.Kernel(prg, "sw_intertask"), prg)
        knl = knl[0]
        knl.set_args(ires, lanes, glen, boff,
                     np.int32(lay.ngroups), np.int32(lay.nblocks), prof, np.int32(nstrips), tmp,
                     batch["scores"], counter, np.int32(bias), np.int32(goe), np.int32(ext), np.int32(thresh))
        return self._launch(knl, nwg * vals["WG"], vals["WG"], wait or None, batch)

    def _launch(self, knl, gsize, lsize, wait, batch):
        """Run a first-pass or rescoring kernel and read the batch's scores back (blocking);
        its profiled time goes to ``kernel_seconds``."""
        q = self.rt.queue
        ev = cl.enqueue_nd_range_kernel(q, knl, (gsize,), (lsize,), wait_for=wait)
        out = np.empty(batch["n"], dtype=np.int32)
        cl.enqueue_copy(q, out, batch["scores"], wait_for=[ev], is_blocking=True)
        self.kernel_seconds += (ev.profile.end - ev.profile.start) * 1e-9
        return out

    def _score_batch(self, batch, qcodes, prof_cache):
        """Exact scores of one query against one uploaded batch (batch-local order)."""
        ids = batch["order"]
        result = np.zeros(batch["n"], dtype=np.int32)
        if batch["n"] == 0:
            return result
        passes, kernels = [], []
        sched = batch.get("sched")
        if sched is None:
            sched = batch["sched"] = self.schedule(batch["lengths"])
        if self.kernel == "vector":
            for width, vals in self.vector_passes():
                if len(ids) == 0:
                    break
                sc = self._run_vector(batch, qcodes, ids, vals)
                passes.append((width, len(ids)))
                kernels.append("vector")
                ids = self._merge(batch, result, sc, ids)
            widths = [32]
            sched = self.override.get("SCHEDULE", "static")
        else:
            widths = self.widths()
        for k, width in enumerate(widths):
            if len(ids) == 0:
                break
            sc = self._run_pass(batch, ids, width, qcodes, sched if k == 0 else self.override.get("SCHEDULE", "static"),
                                prof_cache)
            passes.append((width, len(ids)))
            kernels.append("intertask")
            ids = self._merge(batch, result, sc, ids)
        if len(ids):
            raise RuntimeError("sw: internal error, 32-bit pass left subjects unscored")
        self.last_passes = passes
        self.last_kernels = kernels
        return result

    @staticmethod
    def _merge(batch, result, sc, ids):
        """Take the finished scores of pass ``sc`` over ``ids`` into ``result``; return the subjects
        still to rescore (-1 in ``sc``), ascending length as the passes expect."""
        if ids is batch["order"]:
            # first pass over every subject: whole-array operations, no gathers over the batch
            result[:] = sc
            bad = np.flatnonzero(sc < 0)
            if bad.size == 0:
                return bad
            result[bad] = 0
            return bad[np.argsort(batch["lengths"][bad], kind="stable")]
        got = sc[ids]
        ok = got >= 0
        result[ids[ok]] = got[ok]
        return ids[~ok]

    def _run_vector(self, batch, qcodes, ids, vals):
        """One vector-kernel pass over the subjects ``ids`` (batch-local, ascending length):
        scores (batch order; entries of ``ids`` set, -1 = rescore at the next width)."""
        q = self.rt.queue
        ctx = self.rt.ctx
        mf = cl.mem_flags
        u8 = vals["LANE"] == "u8"
        vec, cols, strip, wg = vals["VEC"], vals["COLS"], vals["STRIP"], vals["WG"]
        esize = 1 if u8 else 2
        prg = self.rt.program(_VTEMPLATE, SWV_PARAMS, vals)
        full = ids is batch["order"]
        key = ("vlist", vec, cols)
        cached = batch.get(key) if full else None
        if cached is None:
            # groups of VEC subjects (ascending length), each padded to a multiple of COLS columns;
            # their residue codes interleaved column by column on the device (swv_interleave)
            ngroups = max(1, -(-len(ids) // vec))
            lanes = np.full(ngroups * vec, -1, dtype=np.int32)
            lanes[:len(ids)] = ids
            ln = np.zeros(ngroups * vec, dtype=np.int64)
            ln[:len(ids)] = batch["lengths"][ids]
            glen = (ln.reshape(ngroups, vec).max(axis=1) + cols - 1) // cols * cols
            goff = np.zeros(ngroups + 1, dtype=np.int64)
            np.cumsum(glen * vec, out=goff[1:])
            lbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=lanes)
            gbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=goff)
            ires = cl.Buffer(ctx, mf.READ_WRITE, max(16, int(goff[-1])))
            inter = cl.Kernel(prg, "swv_interleave")
            inter.set_args(batch["res"], batch["offs"], batch["lens"], lbuf, gbuf, np.int32(ngroups), ires)
            ev = cl.enqueue_nd_range_kernel(q, inter, (ngroups,), None,
                                            wait_for=list(batch.get("events", [])) or None)
            batch.setdefault("events", []).append(ev)
            cached = (lbuf, gbuf, ires, ngroups, int(glen.max()))
            if full:
                batch[key] = cached
        lanes, goff, ires, ngroups, maxcols = cached
        mats = self.__dict__.setdefault("_matT", {})
        if vals["LANE"] not in mats:
            mt = np.ascontiguousarray(self.scoring.scores.T)
            mt = (mt - self.scoring.smin).astype(np.uint8) if u8 else mt.astype(np.int16)
            mats[vals["LANE"]] = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=mt)
        matT = mats[vals["LANE"]]
        m = len(qcodes)
        qh = np.zeros(max(16, m), dtype=np.uint8)
        qh[:m] = qcodes
        qbuf = self._buf("vquery", qh.nbytes)
        wait = [cl.enqueue_copy(q, qbuf, qh, is_blocking=False)]
        per_cu = self.groups_per_cu or (8 if self.caps.is_gpu else 2)
        nwg = max(1, min(-(-ngroups // wg), self.caps.compute_units * per_cu))
        nwi = nwg * wg
        hscr = self._buf("vh", nwi * 2 * strip * vec * esize)
        bscr = self._buf("vb", nwi * 2 * max(1, maxcols) * vec * esize if m > strip else 16)
        counter = self._buf("counter", 4)
        wait += list(batch.pop("events", []))
        wait.append(cl.enqueue_fill_buffer(q, counter, np.int32(0), 0, 4))
        knl = self._kernels.get(id(prg))
        if knl is None:
            knl = self._kernels[id(prg)] = (cl.Kernel(prg, "sw_vector"), prg)
        knl = knl[0]
        bias, goe, ext, thresh = self.scoring.kernel_consts(8 if u8 else 16)
        knl.set_args(ires, goff, lanes, np.int32(ngroups), qbuf, np.int32(m),
                     matT, hscr, bscr, np.int32(maxcols), batch["scores"], counter,
                     np.int32(bias), np.int32(goe), np.int32(ext), np.int32(thresh))
        return self._launch(knl, nwi, wg, wait, batch)

    # -- public --------------------------------------------------------------------------
    def search(self, queries, db, progress=True, report=None):
        """Scores (np.int32, database order) of each (id, codes) query, plus seconds per query."""
        db = as_database(db)
        if db.alphabet is not PROTEIN and getattr(db.alphabet, "name", "") != "protein":
            raise InputError(f"sw needs a protein database (got {db.alphabet.name})", getattr(db, "path", None))
        n = len(db)
        results = [np.zeros(n, dtype=np.int32) for _ in queries]
        seconds = [0.0] * len(queries)
        batches = self.plan_batches(db)
        if self._copyq is None:
            self._copyq = self.rt.new_queue()
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(batches) * len(queries), unit="query", file=sys.stderr, disable=None,
                       desc="sw", leave=False)
        # A database that fits in one batch stays on the device between calls (same Database object).
        resident = self._resident if (self._resident is not None and self._resident[0] is db
                                      and len(batches) == 1) else None
        try:
            if resident is not None:
                nxt = resident[1]
            else:
                self._resident = None
                nxt = self._upload_batch(db, *batches[0], self._copyq) if batches else None
                if len(batches) == 1:
                    self._resident = (db, nxt)
            for bi in range(len(batches)):
                cur = nxt
                # The next batch goes up on the copy queue while this one is searched.
                nxt = self._upload_batch(db, *batches[bi + 1], self._copyq) if bi + 1 < len(batches) else None
                if nxt is not None:
                    self._copyq.flush()
                for qi, (qid, codes) in enumerate(queries):
                    t0 = time.perf_counter()
                    prof_cache = {}
                    sc = self._score_batch(cur, codes, prof_cache)
                    results[qi][cur["start"]:cur["start"] + cur["n"]] = sc
                    seconds[qi] += time.perf_counter() - t0
                    if bar is not None:
                        bar.update(1)
                del cur
        finally:
            if bar is not None:
                bar.close()
        if report is not None:
            total = db.total_residues
            for qi, (qid, codes) in enumerate(queries):
                cells = len(codes) * total
                report(f"sw: {qid}: qlen {len(codes)}, {seconds[qi]:.3f} s, "
                       f"{cells / max(seconds[qi], 1e-12) / 1e9:.2f} GCUPS")
            cells = sum(len(c) for _, c in queries) * total
            tt = sum(seconds)
            report(f"sw: {len(queries)} queries, {n} subjects, {total} residues, {len(batches)} batch(es): "
                   f"{tt:.3f} s, {cells / max(tt, 1e-12) / 1e9:.2f} GCUPS")
        return results, seconds


_ENGINES: dict = {}


def get_engine(matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides) -> SWEngine:
    """A cached engine per (device, scoring, overrides)."""
    mkey = matrix if isinstance(matrix, str) else id(matrix)
    key = (str(device), mkey, gap_open, gap_extend, tuple(sorted(overrides.items())))
    eng = _ENGINES.get(key)
    if eng is None:
        eng = _ENGINES[key] = SWEngine(matrix, gap_open, gap_extend, device, **overrides)
    return eng


def sw_scores(query, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, device=None, **overrides) -> np.ndarray:
    """Exact Smith-Waterman scores (np.int32) of ``query`` against every subject, in database order.

    ``query``: residue string (or uint8 codes); ``db``: Database, prepared-database folder or FASTA
    path. Gap of k residues scores -(gap_open + k*gap_extend). ``overrides`` set template
    parameters (WIDTH, WORDS, ROWS, PROFILE, SCHEDULE, WG, SIMD; KERNEL="intertask"|"vector" and the
    vector kernel's VEC, COLS, STRIP) or ``batch_residues``.
    """
    kind, query = sequence_or_path(query, "query")     # the one API rule (clalign.data.inputs)
    if kind == "path":
        raise InputError("a file name where one sequence was expected (sw_search reads FASTA files)", query)
    codes = _as_codes(query)
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    res, _ = eng.search([("query", codes)], db, progress=False)
    return res[0]


def top_hits(scores, top):
    """Indices of the ``top`` best scores, score descending, ties in database order."""
    n = len(scores)
    k = min(int(top), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.arange(n)
    if k < n:
        # everything strictly above the k-th score, then ties with it in index order
        kth = np.partition(scores, n - k)[n - k]
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = idx
    o = np.lexsort((cand, -scores[cand].astype(np.int64)))
    return cand[o][:k]


def sw_search(queries, db, matrix="BLOSUM62", gap_open=11, gap_extend=1, top=10, device=None,
              progress=False, report=None, **overrides):
    """Best ``top`` hits per query (list of :class:`QueryResult`).

    ``queries``: a residue string, a list of strings or (id, sequence) pairs, or a FASTA path.
    Hits are sorted by score descending, ties in database order.
    """
    qs = parse_queries(queries)
    db = as_database(db)
    eng = get_engine(matrix, gap_open, gap_extend, device, **overrides)
    scores, seconds = eng.search(qs, db, progress=progress, report=report)
    out = []
    lengths = np.asarray(db.lengths)
    for (qid, codes), sc, sec in zip(qs, scores, seconds):
        r = QueryResult(qid, len(codes), seconds=sec)
        r._cells = len(codes) * db.total_residues
        for i in top_hits(sc, top):
            i = int(i)
            r.hits.append(Hit(qid, i, db.ids[i], int(sc[i]), len(codes), int(lengths[i])))
        out.append(r)
    return out
