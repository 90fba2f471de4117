"""The Viterbi filter kernel (``kernels/hmm_viterbi.mako``): host tables, choice and launch.

A search runs it on the targets that passed the MSV and bias filters (about 2 % of a
database at F1 = 0.02), one work-group per target; the scores equal
:func:`clalign.hmm.vit_reference.vit_reference` word for word.
"""
from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .params import HMM_VITERBI, VIT_P_MAX, VIT_WG_VALUES
from .vit_reference import BASE_W, NEG, ViterbiProfile, _T, vit_nats

TEMPLATE = "hmm_viterbi.mako"
#: clalign PROTEIN code of '*' (appended for the trailing stops HMMER counts in L)
STAR_CODE = 25
#: residue codes (rows of the match table): clalign PROTEIN
NROWS = 28


#: Largest model the kernel takes (256 work-items of VIT_P_MAX states); longer models keep
#: HMMER's Viterbi filter in pyhmmer (clalign.hmm.vit_search).
VIT_MAX_M = 256 * VIT_P_MAX


def choose_viterbi(M: int, overrides: dict | None = None, max_work_group: int = 256, min_work_group: int = 16) -> dict:
    """Template values for a model of M states: the smallest work-group (at least
    ``min_work_group``: a GPU's warp, so that no SIMD lane idles) whose work-items keep at most
    8 states each (fewer registers, more work-groups in flight), P rounded up to an even number
    so that a search of many models needs few builds (at most 4 per work-group size);
    ``overrides`` (WG and/or P) win. Not tuned on a GPU yet."""
    ov = dict(overrides or {})
    legal = [w for w in VIT_WG_VALUES if min(min_work_group, max_work_group) <= w <= max_work_group] or [16]
    wg = ov.get("WG") or next((w for w in legal if 8 * w >= M), legal[-1])
    P = ov.get("P") or min(VIT_P_MAX, max(2, -(-M // wg) + (-(-M // wg)) % 2))
    if wg * P < M or P > VIT_P_MAX:
        raise ParameterError(f"hmm_viterbi: WG={wg} x P={P} cannot hold a model of {M} states "
                             f"(at most {VIT_P_MAX} states per work-item)")
    return HMM_VITERBI.validate({"WG": wg, "P": P, "NROWS": NROWS, "BASE_W": BASE_W, "STAR": STAR_CODE})


def _limits(caps) -> tuple:
    """(largest, smallest) work-group of the kernel on a device: a GPU's warp at least."""
    return int(caps.max_work_group), (int(caps.warp or 32) if caps.is_gpu else 16)


def prebuild_viterbi(Ms, device=None, threads: int = 4) -> list:
    """Start building the kernels for models of lengths ``Ms`` (one per distinct choice) in
    background threads; returns the futures (a later launch waits for its build)."""
    from ..runtime import Runtime

    bias, per_model = filter_items(Ms, device)
    items = [it for pair in per_model for it in pair]
    return Runtime.get(device).prebuild((bias if items else []) + items, threads)


def filter_items(Ms, device=None) -> tuple:
    """The programs of a search's device filters after MSV, as (template, parameters, values):
    ([the bias filter's, where the device runs it]; per model [its Viterbi and Forward
    kernels], empty for a model longer than they take), for the builds to start in the order
    the models need them."""
    from ..runtime import Runtime
    from .bias_engine import bias_item, usable
    from .fwd_engine import forward_items

    bias = [bias_item()] if usable(Runtime.get(device).caps) else []
    return bias, [[it for it in pair if it is not None]
                  for pair in zip(viterbi_items(Ms, device), forward_items(Ms, device))]


def viterbi_items(Ms, device=None) -> list:
    """The (template, parameters, values) of each model's Viterbi kernel, None for a model
    longer than the kernel takes (see :func:`prebuild_viterbi`)."""
    from ..runtime import Runtime

    lim = _limits(Runtime.get(device).caps)
    return [(TEMPLATE, HMM_VITERBI, choose_viterbi(int(M), None, *lim)) if int(M) <= VIT_MAX_M else None
            for M in Ms]


#: rows of the kernel's transition table: the moves into M_k (B, M, I, D from node k-1), the
#: move into D_k from M_{k-1}, and I_k's own (MI, II); D->D enters as the prefix sums G
KERNEL_T_ROWS = ("BM", "MM", "IM", "DM", "MDin", "MI", "II")


def vit_tables(prof: ViterbiProfile, WG: int, P: int) -> tuple:
    """(rw [NROWS][P][WG] int16, tw [7][P][WG] int16, G [P][WG] int32) of the kernel for
    ``prof``: state k = t*P + j + 1 of work-item t at [j][t] (a work-group's loads of one j are
    contiguous); tw rows :data:`KERNEL_T_ROWS`; G(k) = DD(1) + ... + DD(k-1); states past M
    score -32768."""
    M, S = prof.M, WG * P
    rw = np.full((NROWS, S + 1), NEG, dtype=np.int16)
    rw[:, :M + 1] = prof.rw[:NROWS]
    tw = np.full((8, S + 1), NEG, dtype=np.int16)
    tw[:, :M + 1] = prof.tw
    md_in = np.full(S + 1, NEG, dtype=np.int16)
    md_in[1:] = tw[_T["MD"], :-1]                  # into D_k from M_{k-1}
    rows = [tw[_T[r]] for r in ("BM", "MM", "IM", "DM")] + [md_in] + [tw[_T[r]] for r in ("MI", "II")]
    G = np.zeros(S + 1, dtype=np.int64)
    G[2:] = np.cumsum(tw[_T["DD"], 1:S].astype(np.int64))

    return by_item(rw, WG, P), by_item(np.stack(rows), WG, P), by_item(G, WG, P).astype(np.int32)


def by_item(a, WG: int, P: int) -> np.ndarray:
    """Columns 1..S = WG * P (the states) of a per-state table, as [..][P][WG]: state t*P + j + 1
    of work-item t at [j][t], so a work-group's loads of one j are contiguous."""
    a = np.asarray(a)[..., 1:]
    return np.ascontiguousarray(a.reshape(a.shape[:-1] + (WG, P)).swapaxes(-1, -2))


def pack_targets(seqs) -> tuple:
    """(residues, offsets) of a list of code arrays: a database of those sequences."""
    lens = np.array([len(x) for x in seqs], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    res = np.concatenate([np.asarray(x, dtype=np.uint8) for x in seqs]) if lens.sum() else np.zeros(0, np.uint8)
    return res, offsets


def resident_key(rt) -> tuple:
    """Key of a database's device copy in a ``cache`` of :func:`vit_words_device`."""
    return ("viterbi", rt.device.int_ptr)


class _Resident:
    """A database's residues and offsets on the device, uploaded once per search; ``res``: the
    residues' buffer where the search has it already (:mod:`clalign.hmm.layout_dev`)."""

    def __init__(self, ctx, residues, offsets, res=None):
        import pyopencl as cl

        mf = cl.mem_flags
        if res is None:
            res = np.ascontiguousarray(residues, dtype=np.uint8)
            res = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=res if res.nbytes else np.zeros(4, np.uint8))
        self.res = res
        self.offs = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                              hostbuf=np.ascontiguousarray(offsets, dtype=np.uint64))


def vit_words_device(prof: ViterbiProfile, residues, offsets, targets, lengths, device=None, overrides=None,
                     repeat: int = 1, cache: dict | None = None, queue=None) -> tuple:
    """Final xC words (int64; 32767 = overflow) of database sequences ``targets`` (clalign
    codes ``residues[offsets[t]:offsets[t+1]]``, then '*' up to HMMER's length ``lengths[n]``:
    its trailing stops), and the kernel seconds (median of ``repeat`` launches). ``cache``
    keeps the database's device copy for the next model; ``queue``: a command queue of the
    device's context (default: the runtime's; a search gives its own, so that its Viterbi
    launches do not wait behind the MSV launches of the next models)."""
    from ..runtime import Runtime
    from .engine import kernel_of

    rt = Runtime.get(device)
    targets = np.asarray(targets, dtype=np.int64)
    n = int(targets.size)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0.0
    key = resident_key(rt)
    db = cache.get(key) if cache is not None else None
    if db is None:
        db = _Resident(rt.ctx, residues, offsets)
        if cache is not None:
            cache[key] = db
    values = choose_viterbi(prof.M, overrides, *_limits(rt.caps))
    rw, tw, G = vit_tables(prof, values["WG"], values["P"])
    lens = np.asarray(lengths, dtype=np.int64)
    moves = np.asarray(ViterbiProfile.move_w(lens), dtype=np.int16).reshape(-1)
    knl = kernel_of(rt.program(TEMPLATE, HMM_VITERBI, values), "hmm_viterbi")
    out, seconds = launch_per_target(rt, queue, knl, "vit", (db.res, db.offs), targets, lens,
                                     [("moves", moves, True), ("rw", rw, False), ("tw", tw, False), ("G", G, False)],
                                     (np.int32(prof.e_loop), np.int32(prof.e_move)), values["WG"], values["WG"],
                                     np.int32, repeat)
    return out.astype(np.int64), seconds


def launch_per_target(rt, queue, knl, tag: str, head, targets, lens, arrays, tail, items: int, wg: int, dtype,
                      repeat: int = 1) -> tuple:
    """Run a per-target kernel (Viterbi, Forward, bias filter) on database targets ``targets``
    of HMMER's lengths ``lens``, longest first (the launch ends on short ones), ``items``
    work-items each in work-groups of ``wg``; returns (its one result per target, of ``dtype``,
    in the callers' order; the kernel seconds, median of ``repeat`` launches). Arguments:
    ``head`` (the database's buffers), the targets and lengths, ``arrays`` [(name, array, per
    target)] uploaded into this thread's reused buffers (a per-target array reordered with the
    targets), ``tail`` (scalars), the output. ``queue``: a command queue of the device's
    context (default the runtime's)."""
    import pyopencl as cl

    from ..runtime.scratch import scratch

    n = int(targets.size)
    q = rt.queue if queue is None else queue
    order = np.argsort(-lens, kind="stable")
    sc, keep = scratch(rt.ctx), []
    up = [("targets", targets[order].astype(np.uint32)), ("lens", lens[order].astype(np.uint32))]
    up += [(name, a[order] if per_target else a) for name, a, per_target in arrays]
    bufs = [sc.upload(q, f"{tag}_{name}", np.ascontiguousarray(a), keep) for name, a in up]
    out = np.empty(n, dtype=dtype)
    d_out = sc.buffer(f"{tag}_out", out.nbytes)
    knl.set_args(*head, *bufs, *tail, d_out)
    size = -(-n * items // wg) * wg
    times = []
    for _ in range(max(1, repeat)):
        ev = cl.enqueue_nd_range_kernel(q, knl, (size,), (wg,))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(q, out, d_out)
    q.finish()
    del keep
    result = np.empty(n, dtype=dtype)
    result[order] = out
    return result, float(np.median(times))


def vit_scores_device(prof: ViterbiProfile, residues, offsets, indices, stops=None, device=None,
                      overrides=None, cache=None) -> np.ndarray:
    """p7_ViterbiFilter scores (float32 nats) of database targets ``indices`` on the device
    (``stops``: each sequence's trailing stops, counted in L as HMMER does)."""
    idx = np.asarray(indices, dtype=np.int64)
    off = np.asarray(offsets, dtype=np.int64)
    L = off[idx + 1] - off[idx] + (0 if stops is None else np.asarray(stops, dtype=np.int64)[idx])
    words, _ = vit_words_device(prof, residues, offsets, idx, L, device, overrides, cache=cache)
    return vit_nats(words, L)
