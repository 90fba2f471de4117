"""HMMER3 MSV and SSV filter scores on OpenCL: S-lane kernels after CUDAMPF++ (the launch
layer and the public scoring API; kernel choice in :mod:`clalign.hmm.kernel_choice`, database
blocks in :mod:`clalign.hmm.layout`); on CPU devices the striped kernel of
:mod:`clalign.hmm.striped` instead (HMMER's SSE design in OpenCL byte vectors).

``msv_scores(hmm, db)`` and ``ssv_scores(hmm, db)`` return one float32 score (nats) per
database sequence, in database order, identical to pyhmmer's ``OptimizedProfile.msv_filter``
and ``ssv_filter`` (HMMER 3.4 ``p7_MSVFilter`` / ``p7_SSVFilter``) with the profile length
set to each sequence's length: +inf where the byte range overflows, and for ``ssv_scores``
NaN where HMMER/pyhmmer give no result (``eslENORESULT``/``None``). ``msv_filter`` in HMMER 3.4
first runs the SSV filter and uses its score whenever it gives one; the kernel computes the
MSV recurrence and :func:`clalign.hmm.reference.msv_from_bytes` turns its final bytes into
exactly that score (see the proof sketch there).

How CUDAMPF++'s tiers map to OpenCL here (our interpretation, written down once)
--------------------------------------------------------------------------------
CUDAMPF++ (Jiang, Ganesan, Yao) parallelises over five tiers: the GPU runs many thread
blocks; a block holds several warps; a warp of 32 threads aligns *S* database sequences at
once ("S-lane"), 32/S threads per sequence; each thread keeps a few 32-bit registers of the
DP row, unrolled *H* times (runtime compilation picks H per model length); each register
holds 4 byte-sized states handled by SIMD video instructions. With 32 threads x 4 bytes =
128 byte lanes per warp, a sequence gets 128/S bytes per register slice, so one kernel
covers ``(128/S) * H`` model states and the host picks the kernel per model (CUDAMPF++
Eq. 2-5): the largest S whose ``(128/S) * Hmax`` still covers M (more sequences in flight,
less per-row communication), then the smallest H that fits; Hmax is the register budget per
algorithm and device (tuning table). S = 64 and 128 exceed the 32 threads of a warp: we read
them as *several sequences per thread*: a 32-bit word then holds 2 sequences x 2 bytes
(S=64) or 4 sequences x 1 byte (S=128), so that the same 128 byte lanes are shared by S
sequences and no per-row exchange between threads is needed at all.

On OpenCL a *wavefront* is ``WAVE`` consecutive work-items of a work-group (32: exactly an
NVIDIA warp; on PoCL any fixed group is fine since it runs serially). Byte lanes per
wavefront are ``4*WAVE``, a sequence owns ``P = 4*WAVE/S`` of them on ``L = max(1, WAVE/S)``
work-items. The DP row of a sequence is striped (Farrar/HMMER): state k = p*H + h lives in
byte p of the sequence's vector in word h; the row update is HMMER's, word by word, and the
one cross-lane step (word 0 takes the previous row's last word shifted up one byte) and the
MSV per-row max of xE over the L work-items use PTX ``shfl.sync`` when ``PTX_SHFL`` and local
memory with barriers otherwise. SSV has no J state, so its xE is kept per work-item and
reduced only when a sequence ends (``atomic_max``), never per row.

Database blocks (CUDAMPF++ Algorithm 1): sequences are taken in length order, cut into
consecutive chunks of ``C * spc`` (C = S * WG_WAVES columns, ``spc`` sequences per column),
dealt to the columns of a chunk in a snake order (balanced column lengths), each followed
by an END residue and the column filled with PAD to the block's row count. A work-group
walks its block row by row; at END a lane writes its sequence's raw bytes and resets (a
masked reset when several sequences share a word). Longest blocks are launched first. The host
plans the blocks; their bytes are written on the device from the residues
(:mod:`clalign.hmm.layout_dev`).
"""
from __future__ import annotations

import os
import threading
import weakref

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from ..runtime import Runtime
from ..runtime.scratch import scratch
from . import reference
from .kernel_choice import choose_kernel, use_striped
from .layouts import _block_buffers, _layout_of
from .layouts import _layout, _layout_lock, layouts_ahead  # noqa: F401  (the layout cache's, used from here)
from .layout import (END, PAD, XROWS, Blocks, build_blocks, default_cap, default_spc, split_long,
                     ssv_seg)
from .params import HMM_SLANE, HMM_SLANE_KERNEL, geometry, kernel_values
from .pyhmmer_adapter import profile_from_pyhmmer

#: This module is the launch layer; kernel choice lives in :mod:`clalign.hmm.kernel_choice`,
#: the database blocks in :mod:`clalign.hmm.layout` (re-exported here for callers of both).
__all__ = ["msv_scores", "ssv_scores", "msv_scores_run", "msv_filter_run", "run_raw", "prebuild", "prebuild_items",
           "shared_layout",
           "layout_cache",
           "as_profile", "profile_from_pyhmmer", "hmmer_lengths", "striped_table", "check_profile",
           "tjbm_per_sequence", "choose_kernel", "Blocks", "build_blocks", "split_long", "default_cap",
           "default_spc", "ssv_seg", "END", "PAD", "XROWS"]


# ---------------------------------------------------------------------------------------
# profiles
# ---------------------------------------------------------------------------------------
def as_profile(hmm, L: int = 400):
    """An MSVProfile from an MSVProfile, a clalign HMM, a pyhmmer HMM or a one-model file path."""
    if hasattr(hmm, "rbv") and hasattr(hmm, "sbv") and hasattr(hmm, "tjb_b"):
        return hmm
    if type(hmm).__module__.startswith("pyhmmer"):
        return profile_from_pyhmmer(hmm, L)
    from .hmmfile import read_hmm
    from .profile import build_msv_profile

    from ..data.inputs import as_path
    from .hmmfile import HMM

    if isinstance(hmm, (str, os.PathLike, bytes)) or not isinstance(hmm, HMM):
        hmm = read_hmm(as_path(hmm, "hmm"))     # TypeError for None, numbers... (clalign.data.inputs)
    return build_msv_profile(hmm, L)


# ---------------------------------------------------------------------------------------
# device table and launch
# ---------------------------------------------------------------------------------------
def striped_table(profile, algo: str, S: int, H: int, wave: int = 32, lane: int = 8) -> np.ndarray:
    """Profile entries [32][H][P] in the kernel's striping (state k = p*H + h), as bytes.

    LANE 8: HMMER's bytes (MSV costs ``rbv``, pad 255; SSV signed ``sbv``, pad 127).
    LANE 16: int16 ``bias - rbv`` (MSV, pad ``bias - 255``) or ``-sbv`` (SSV, pad -127), the
    exact 16-bit forms of ``kernels/hmm_slane.mako``.
    """
    P = geometry(S, wave, lane)["P"]
    M = profile.M
    if lane == 8:
        if algo == "msv":
            vals, pad, dt = np.asarray(profile.rbv, dtype=np.uint8), 255, np.uint8
        else:
            vals, pad, dt = np.asarray(profile.sbv).view(np.uint8), 127, np.uint8
    else:
        bias = int(profile.bias_b)
        if algo == "msv":
            vals, pad = bias - np.asarray(profile.rbv, dtype=np.int16), bias - 255
        else:
            vals, pad = -np.asarray(profile.sbv).view(np.int8).astype(np.int16), -127
        dt = np.int16
    full = np.full((XROWS, P * H), pad, dtype=dt)
    full[:vals.shape[0], :M] = vals
    return np.ascontiguousarray(full.reshape(XROWS, P, H).transpose(0, 2, 1)).view(np.uint8)


def check_profile(profile) -> None:
    """The byte-range facts the kernels' exactness proofs use (true for every HMMER protein
    profile: base_b = 190, bias_b <= 3 * log2(1/min background) < 20, sbv = clip(rbv - bias))."""
    base, bias = int(profile.base_b), int(profile.bias_b)
    if base + bias > 254:
        raise ParameterError(f"MSV profile with base_b + bias_b = {base + bias} > 254 is not supported")
    sbv = np.asarray(profile.sbv).view(np.int8)
    if sbv.size and int(sbv.min()) < -bias:
        raise ParameterError(f"SSV profile has a score above bias_b ({-int(sbv.min())} > {bias})")


def tjbm_per_sequence(profile, lengths) -> np.ndarray:
    """(tjb_b + tbm_b) & 255 of every sequence (the MSV kernel's per-sequence length term)."""
    uniq, inv = reference.length_classes(lengths)
    tj = ((reference.tjb_table(profile, uniq) + int(profile.tbm_b)) & 0xFF).astype(np.uint8)
    return tj[inv] if inv.size else np.zeros(0, np.uint8)


_KERNELS = threading.local()
def kernel_of(prg, name: str):
    """The ``cl.Kernel`` ``name`` of program ``prg``, one per thread and program: a new Kernel
    object costs pyopencl its argument-setting code on first use (~1.3 ms from its disk cache,
    per model and kernel in a search of many models); a kernel is used by one thread at a time."""
    d = getattr(_KERNELS, "d", None)
    if d is None:
        d = _KERNELS.d = {}
    hit = d.get((id(prg), name))
    if hit is None or hit[0] is not prg:
        hit = d[(id(prg), name)] = (prg, cl.Kernel(prg, name))
    return hit[1]


class _Run:
    """Raw device results of one filter over one database (bytes per sequence + timing)."""

    def __init__(self, raw, seconds, values, blocks):
        self.raw, self.seconds, self.values, self.blocks = raw, seconds, values, blocks


def run_raw(profile, residues, offsets, lengths, order, algo: str, device=None, repeat: int = 1,
            blocks: Blocks | None = None, spc: int | None = None, balance: bool = True,
            cache: dict | None = None, split: bool | int | None = None, model_lengths=None,
            queue=None, **overrides) -> _Run:
    """Run one S-lane kernel; return raw per-sequence bytes, kernel seconds (median of
    ``repeat`` launches, OpenCL profiling events) and the template values used. ``balance``
    caps the rows of a block (:func:`default_cap`); False keeps ``spc`` for every chunk.
    ``split`` (default: SSV with ``balance``) cuts sequences longer than a typical block into
    overlapping pieces (:func:`split_long`, piece length :func:`ssv_seg`, or ``split`` itself
    when it is an int), so that no work-group walks a long sequence alone at the end of the
    launch; the result per sequence is the max over its pieces.
    ``cache`` (a dict kept with the database) keeps blocks and their device copies for the
    next model of the same geometry: many models of one search share a few (C, RG) layouts.
    ``model_lengths`` (default ``lengths``): the target lengths of HMMER's length model (MSV's
    tjb), which count trailing ``*`` stops the residue array does not hold. ``queue``: a command
    queue of the device's context (default the runtime's; a search's MSV threads have their own)."""
    rt = Runtime.get(device)
    if blocks is None and not split and use_striped(rt.caps, overrides):     # CPU devices
        from .striped import run_striped

        check_profile(profile)
        tjbm = (tjbm_per_sequence(profile, lengths if model_lengths is None else model_lengths)
                if algo == "msv" else None)
        return run_striped(profile, residues, offsets, lengths, algo, tjbm, device, repeat, cache,
                           **{k: v for k, v in overrides.items() if k != "kernel"})
    overrides.pop("kernel", None)
    q = rt.queue if queue is None else queue
    simd = overrides.pop("simd", None)
    values = overrides.pop("values", None)        # a search's plan (clalign.hmm.kernel_plan)
    values = dict(values) if values is not None else choose_kernel(profile.M, algo, rt.caps, overrides, simd=simd)
    check_profile(profile)
    S, H, wave, wgw = values["S"], values["H"], values["WAVE"], values["WG_WAVES"]
    C = S * wgw
    n = int(np.asarray(lengths).size)
    if split is None:
        split = algo == "ssv" and balance
    if split and algo != "ssv":
        raise ParameterError("split: only the SSV filter may cut sequences into pieces (MSV's J state links them)")
    spc = spc if spc is not None else default_spc(n, C, rt.caps)
    want = None
    if split and n:
        want = (int(split) if split is not True else ssv_seg(lengths, spc, profile.M), profile.M - 1)
    dev_bufs = None
    have = (blocks.pieces.seg, blocks.pieces.overlap) if (blocks is not None and blocks.pieces) else None
    if blocks is None or blocks.C != C or blocks.rg != values["RG"] or have != want:
        blocks, dev_bufs = _layout_of(rt, q, C, values["RG"], spc, residues, offsets, lengths, order, balance,
                                      cache, want)
    n_ext = blocks.pieces.n_ext if blocks.pieces is not None else n
    out = np.zeros(n_ext, dtype=np.uint32)
    if n == 0:
        return _Run(out, 0.0, values, blocks)
    prg = rt.program("hmm_slane.mako", HMM_SLANE_KERNEL, kernel_values(values, END, PAD))
    knl = kernel_of(prg, "hmm_slane")
    ctx = rt.ctx
    tjbm = (tjbm_per_sequence(profile, lengths if model_lengths is None else model_lengths) if algo == "msv"
            else np.zeros(n_ext, np.uint8))
    if dev_bufs is None:
        dev_bufs = _block_buffers(rt, q, blocks, residues, cache)
        if cache is not None and blocks.C == C:
            for entry in list(cache.values()):
                if isinstance(entry, list) and entry[0] is blocks:      # not the striped kernel's copies
                    entry[1] = dev_bufs
    sc, keep = scratch(ctx), []           # per-model arrays in this thread's reused buffers
    args = [*dev_bufs, sc.upload(q, "slane_tjbm", tjbm, keep),
            sc.upload(q, "slane_table", striped_table(profile, algo, S, H, wave, values["LANE"]), keep)]
    d_out = sc.buffer("slane_out", out.nbytes)
    knl.set_args(*args, np.uint32(profile.base_b), np.uint32(profile.bias_b), np.uint32(profile.tec_b), d_out)
    WG = wave * wgw
    times = []
    for _ in range(max(1, repeat)):
        cl.enqueue_copy(q, d_out, out, is_blocking=False)       # zeros (``out`` is read back after)
        ev = cl.enqueue_nd_range_kernel(q, knl, (blocks.nblocks * WG,), (WG,))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(q, out, d_out)
    q.finish()
    del keep
    if n_ext > n:            # SSV pieces: a sequence's result is the max over its pieces
        np.maximum.at(out, blocks.pieces.parent, out[n:])
        out = out[:n]
    return _Run(out, float(np.median(times)), values, blocks)


def shared_layout(Ms, algo: str = "msv", device=None) -> list:
    """Per model, the template overrides (``WG_WAVES``) that give models of lengths ``Ms`` one
    database layout: the same C = S * WG_WAVES columns per work-group wherever WG_WAVES may
    grow (its legal values) to reach the largest C of their tuned choices.

    Why: a layout of a large database takes seconds to build (570,000 proteins: ~1.5 s on the
    H100 host) and is kept per C; the kernels then cost milliseconds. A larger work-group
    costs some kernel speed (H100, M = 400: 5.29 -> 4.43 TCUPS with 4 waves instead of 2,
    docs/perf/hmmsearch.md), far less than a second layout for a search of a few models."""
    rt = Runtime.get(device)
    if use_striped(rt.caps):             # one kernel for every model, no blocks
        return [{} for _ in Ms]
    vals = [choose_kernel(int(M), algo, rt.caps) for M in Ms]
    if not vals:
        return []
    C = max(v["S"] * v["WG_WAVES"] for v in vals)
    legal = next(p.values for p in HMM_SLANE.all() if p.name == "WG_WAVES")
    out = []
    for v in vals:
        w = C // v["S"]
        fits = C % v["S"] == 0 and w in legal and w * v["WAVE"] <= rt.caps.max_work_group
        out.append({"WG_WAVES": w} if fits and w != v["WG_WAVES"] else {})
    return out


def prebuild(Ms, algo: str = "msv", device=None, threads: int = 8, overrides=None) -> list:
    """Start building the kernels for models of lengths ``Ms`` in ``threads`` background
    threads (one per distinct kernel); returns the futures. A search of many models calls
    this first: on NVIDIA one build takes about a second and the models need one per distinct
    (S, H), so building them side by side while the first model's blocks are laid out saves
    most of that time. ``overrides``: one dict per model (as for :func:`run_raw`), or None."""
    rt = Runtime.get(device)
    overrides = overrides or [{}] * len(Ms)
    if Ms and all(use_striped(rt.caps, ov) for ov in overrides):
        from .striped import prebuild_striped

        return prebuild_striped(Ms, device, overrides[0], threads)
    items = prebuild_items(Ms, algo, device, overrides)
    return rt.prebuild([*layout_fill_items(items), *items], threads)


def layout_fill_items(items) -> list:
    """The programs that fill the layouts of S-lane ``items`` (:func:`prebuild_items`) on the
    device (:mod:`clalign.hmm.layout_dev`), one per residue group; first in a prebuild: the
    first model waits for its layout."""
    from .layout_dev import fill_items

    return fill_items(it[2]["RG"] for it in items)


def prebuild_items(Ms, algo: str = "msv", device=None, overrides=None) -> list:
    """The S-lane (template, parameters, values) of each model, in model order (see :func:`prebuild`)."""
    rt = Runtime.get(device)
    items = []
    for M, ov in zip(Ms, overrides or [{}] * len(Ms)):
        ov = dict(ov)
        simd = ov.pop("simd", None)
        v = ov.pop("values", None) or choose_kernel(int(M), algo, rt.caps, ov, simd=simd)
        items.append(("hmm_slane.mako", HMM_SLANE_KERNEL, kernel_values(v, END, PAD)))
    return items


def _db_arrays(db):
    from ..data import PROTEIN, as_database

    db = as_database(db)
    if db.alphabet is not PROTEIN and getattr(db.alphabet, "name", "") != PROTEIN.name:
        raise ParameterError(f"MSV/SSV filters need a protein database, got {db.alphabet.name}")
    return db, np.asarray(db.residues), np.asarray(db.offsets), np.asarray(db.lengths), np.asarray(db.order)


hmmer_lengths = reference.hmmer_lengths



#: Block layouts of the databases the API has scored, weakly keyed (they go with the
#: Database): a search keeps its own (``clalign.hmm.search``), API calls share these.
_API_LAYOUTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def layout_cache(db) -> dict:
    """Blocks (and device copies) of this Database per geometry, reused by later API calls."""
    return _API_LAYOUTS.setdefault(db, {})


def msv_scores(hmm, db, device: str | None = None, **overrides) -> np.ndarray:
    """MSV filter scores (float32 nats, +inf on overflow) of every sequence of ``db``, in
    database order, equal to pyhmmer's ``msv_filter`` with ``om.L`` set to each length. A
    sequence read with trailing ``*`` stops is scored as HMMER reads it: stops included.

    ``hmm``: an MSVProfile, a clalign HMM, a pyhmmer HMM or a path to a one-model HMMER3 file;
    ``db``: a Database or a path (see :func:`clalign.data.as_database`). ``overrides`` are
    template values (S, H, WG_WAVES, WAVE, HMAX) or ``simd="swar"`` for the S-lane kernels,
    ``kernel="striped"``/``"slane"``, VEC, WG, QC for the striped CPU kernel (the default on
    CPU devices: :func:`clalign.hmm.kernel_choice.use_striped`).
    """
    return msv_scores_run(hmm, db, device, **overrides)[0]


def msv_scores_run(hmm, db, device: str | None = None, cache: dict | None = None,
                   **overrides) -> tuple[np.ndarray, _Run]:
    """:func:`msv_scores` and its :class:`_Run` (kernel seconds, template values). ``cache``:
    the block-layout cache to use (a search owns one); default: one kept with ``db``."""
    profile = as_profile(hmm)
    db, res, offs, lens, order = _db_arrays(db)
    hl = hmmer_lengths(db)
    cache = layout_cache(db) if cache is None else cache
    if use_striped(Runtime.get(device).caps, overrides):      # CPU devices: SSV first, as HMMER
        from .striped import msv_scores_striped

        check_profile(profile)
        return msv_scores_striped(profile, res, offs, lens, hl, device, cache,
                                  **{k: v for k, v in overrides.items() if k != "kernel"})
    r = run_raw(profile, res, offs, lens, order, "msv", device, cache=cache, model_lengths=hl, **overrides)
    return reference.msv_from_bytes(profile, r.raw & 0xFF, (r.raw >> 8) & 1, hl), r


def msv_filter_run(profile, hmm, db, F1: float, slack_bits: float, device: str | None = None,
                   cache: dict | None = None, **overrides) -> tuple[np.ndarray, _Run | None]:
    """Which targets of ``db`` pass HMMER's MSV test (P <= F1, ``slack_bits`` lower; empty
    targets never) and the kernel run: what a search needs per model. The S-lane kernels'
    bytes are tested per length class (:mod:`clalign.hmm.bytepass`, no score per target);
    the striped CPU kernel's scores with :func:`clalign.hmm.pvalue.msv_pass`."""
    from .pvalue import msv_pass

    if use_striped(Runtime.get(device).caps, overrides):
        hl = hmmer_lengths(_db_arrays(db)[0])
        nats, run = msv_scores_run(profile, db, device, cache, **overrides)
        return msv_pass(nats, hl, hmm, F1, slack_bits=slack_bits) & (hl > 0), run
    from .bytepass import msv_pass_bytes

    hl, r = _msv_slane(profile, db, device, cache, overrides)
    return msv_pass_bytes(profile, hmm, r.raw, hl, F1, slack_bits), r


def msv_survivors_run(profile, hmm, db, F1: float, slack_bits: float, device: str | None = None,
                      cache: dict | None = None, **overrides) -> tuple:
    """(indices, float32 MSV nats of them, the kernel run) of the targets
    :func:`msv_filter_run` keeps on the S-lane kernels (:func:`clalign.hmm.bytepass.msv_survivors`)."""
    from .bytepass import msv_survivors

    hl, r = _msv_slane(profile, db, device, cache, overrides)
    return (*msv_survivors(profile, hmm, r.raw, hl, F1, slack_bits), r)


def _msv_slane(profile, db, device, cache, overrides) -> tuple:
    """(HMMER's target lengths, the S-lane MSV kernel's run) over ``db``: both filter runs' launch."""
    db, res, offs, lens, order = _db_arrays(db)
    hl = hmmer_lengths(db)
    cache = layout_cache(db) if cache is None else cache
    return hl, run_raw(profile, res, offs, lens, order, "msv", device, cache=cache, model_lengths=hl, **overrides)


def ssv_scores(hmm, db, device: str | None = None, **overrides) -> np.ndarray:
    """SSV filter scores (float32 nats) of every sequence, in database order, equal to
    pyhmmer's ``ssv_filter``: +inf on a conclusive overflow, NaN where it returns ``None``."""
    profile = as_profile(hmm)
    db, res, offs, lens, order = _db_arrays(db)
    r = run_raw(profile, res, offs, lens, order, "ssv", device, cache=layout_cache(db), **overrides)
    return reference.ssv_from_bytes(profile, r.raw, hmmer_lengths(db))
