"""What ``clalign tune`` searches, per kernel family: the space, the inputs, one run, the check.

A :class:`Family` names a tuning family of :mod:`clalign.runtime.tuning`, the values each of
its dimensions may take on a device (a dimension's value is a scalar for one parameter or a dict
setting several together, e.g. the SIMD variant), the values fixed while it runs, and how to
make its inputs, run a candidate on one input and check the output against the reference.
A candidate runs inside :func:`clalign.runtime.tuning.trial`, through the engine's own choice
code, exactly as a stored entry would be applied.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..runtime import tuning
from ..runtime.harness import compare
from . import inputs as I

SIZES = ("quick", "standard")


@dataclass
class Input:
    label: str          # e.g. "q=464" or "M=400"
    cells: float        # DP cells of one run (GCUPS = cells / seconds / 1e9)
    data: dict = field(default_factory=dict)


@dataclass
class Family:
    name: str
    doc: str
    space: Callable      # caps -> {dimension: [values]}
    make_inputs: Callable    # (caps, size, rng) -> [Input]
    run: Callable        # (rt, values, inp) -> (output, kernel seconds)
    reference: Callable  # (inp) -> reference output (computed once per input)
    applies: Callable = lambda caps: ""      # caps -> "" or why the family is not tuned here
    fixed: dict = field(default_factory=dict)

    def check(self, out, ref) -> str | None:
        return compare(out["scores"], ref["scores"], index=ref.get("index"))


# ---------------------------------------------------------------------------------------- SW
_GOE = (11, 1)


def _sw_engine(rt, family, values, extra):
    from ..sw.engine import SWEngine

    with tuning.trial(family, values):
        return SWEngine("BLOSUM62", *_GOE, rt.device, **extra)


def _sw_run_factory(family, engine_kw):
    cache: dict = {}

    def run(rt, values, inp):
        key = (rt.device.int_ptr, tuple(sorted(values.items())))
        if cache.get("key") != key:          # one engine per candidate, reused over its runs
            cache.clear()
            cache.update(key=key, eng=_sw_engine(rt, family, values, engine_kw))
        eng = cache["eng"]
        k0 = eng.kernel_seconds
        sc, _ = eng.search([("q", inp.data["query"])], inp.data["db"], progress=False)
        return {"scores": np.asarray(sc[0])[inp.data["index"]], "all": np.asarray(sc[0])}, eng.kernel_seconds - k0
    return run


def _sw_reference(inp):
    from ..data import get_matrix
    from ..sw.reference import sw_score

    m = get_matrix("BLOSUM62").scores
    db, q, idx = inp.data["db"], inp.data["query"], inp.data["index"]
    return {"scores": np.array([sw_score(q, db.sequence(int(i)), m, *_GOE) for i in idx]), "index": idx}


def _sw_inputs(tail: bool):
    def make(caps, size, rng):
        gpu = bool(caps.is_gpu)
        if tail:
            n = {"quick": 4, "standard": 400 if gpu else 12}[size]
            hi = {"quick": 3000, "standard": MAX_TAIL_GPU if gpu else 6000}[size]
            qlens = {"quick": (64,), "standard": (144, 464, 1000) if gpu else (144, 464)}[size]
            lengths = I.tail_lengths(n, rng, hi)
        else:
            n = {"quick": 300, "standard": 200000 if gpu else 6000}[size]
            qlens = {"quick": (64, 200), "standard": (144, 464, 1000, 2005) if gpu else (144, 464, 1000)}[size]
            lengths = I.body_lengths(n, rng)
        queries = [I.query(L, rng) for L in qlens]
        # the queries themselves as subjects: scores past 8 (and for long queries 16) bits, so
        # the rescoring passes are exercised and verified too
        db = I.database(lengths, rng, extra=queries)
        nsamp = min(len(db), 24 if tail else 160)
        index = np.unique(np.concatenate([rng.choice(len(db), nsamp, replace=False),
                                          np.arange(len(db) - len(queries), len(db))]))
        R = float(db.total_residues)
        return [Input(f"q={len(q)}", len(q) * R, {"db": db, "query": q, "index": index}) for q in queries]
    return make


MAX_TAIL_GPU = 12000


def _sw_inter_space(caps):
    gpu = bool(caps.is_gpu)
    return {"WIDTH": [8, 16, 32], "ROWS": [16, 32, 48, 64] if gpu else [16, 32, 64],
            "WG": [64, 128, 256] if gpu else [4, 8, 16], "WORDS": [1, 2],
            "UNROLL": [1, 4], "PROFILE": ["plain", "pairs"]}


def _sw_vector_space(caps):
    lanes = [{"LANE": "s16", "VEC": 8}, {"LANE": "s16", "VEC": 16}, {"LANE": "u8", "VEC": 16}]
    if caps.clang_vectors:
        lanes.append({"LANE": "u8", "VEC": 32})
    return {"LANE/VEC": lanes, "COLS": [1, 2, 4], "STRIP": [1024, 4096, 8192], "WG": [1, 2, 4]}


def _sw_intra_space(caps):
    return {"TH": [4, 8, 12, 16, 24], "TW": [2, 4, 8], "WG": [32, 64, 128, 256]}


def _intra_applies(caps):
    if tuning.table_values("sw_intratask", caps).get("KIND") == "striped":
        return "long pairs run the striped kernel here (KIND=striped), which has no tiled-kernel values"
    return ""


def _vector_applies(caps):
    if tuning.table_values("sw_intertask", caps).get("KERNEL") != "vector":
        return "the first pass is the inter-task kernel here (KERNEL=intertask)"
    return ""


# --------------------------------------------------------------------------------------- HMM
def _hmm_inputs(algo):
    def make(caps, size, rng):
        from pyhmmer.easel import Alphabet
        from pyhmmer.plan7 import HMM

        from ..hmm.engine import profile_from_pyhmmer

        gpu = bool(caps.is_gpu)
        n = {"quick": 300, "standard": 100000 if gpu else 4000}[size]
        Ms = {"quick": (40,), "standard": (100, 400, 1000) if gpu else (100, 400)}[size]
        db = I.database(I.body_lengths(n, rng), rng)
        index = np.sort(rng.choice(len(db), min(len(db), 200), replace=False))
        out = []
        for M in Ms:
            prof = profile_from_pyhmmer(HMM.sample(Alphabet.amino(), M, int(rng.integers(1 << 30))))
            out.append(Input(f"M={M}", float(M) * db.total_residues,
                             {"db": db, "profile": prof, "index": index, "algo": algo, "cache": {}}))
        return out
    return make


def _hmm_run(rt, values, inp):
    from ..hmm import engine as E
    from ..hmm import reference as R

    d = inp.data
    db, prof, idx, algo = d["db"], d["profile"], d["index"], d["algo"]
    with tuning.trial(f"hmm_slane.{algo}", values):
        r = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, algo, rt.device, cache=d["cache"])
    raw, L = r.raw[idx], np.asarray(db.lengths)[idx]
    got = (R.msv_from_bytes(prof, raw & 0xFF, (raw >> 8) & 1, L) if algo == "msv" else R.ssv_from_bytes(prof, raw, L))
    return {"scores": got}, r.seconds


def _hmm_reference(inp):
    from ..hmm import reference as R

    d = inp.data
    seqs = [d["db"].sequence(int(i)) for i in d["index"]]
    f = R.msv_reference if d["algo"] == "msv" else R.ssv_reference
    return {"scores": f(d["profile"], seqs), "index": d["index"]}


def _hmm_space(algo):
    def space(caps):
        from ..runtime import simd_values

        dev = simd_values(caps)
        out = {"RG": [1, 4, 8, 16], "WG_WAVES": [1, 2, 4]}
        if dev["PTX_S16X2"]:
            out["LANE/SIMD"] = [{"LANE": 16, "SIMD": "ptx", "PTX_S16X2": True, "PTX_SHFL": True},
                                {"LANE": 8, "SIMD": "ptx", "PTX_S16X2": True, "PTX_SHFL": True},
                                {"LANE": 8, "SIMD": "swar", "PTX_S16X2": False, "PTX_SHFL": False}]
            out["HMAX16"] = [16, 32, 64]
            out["SMAX16"] = [8, 16, 32]
        out["HMAX"] = [8, 16, 32, 64]
        return out
    return space


FAMILIES = {
    "sw_intertask": Family("sw_intertask", "SW inter-task first pass (packed lanes)", _sw_inter_space,
                           _sw_inputs(False), _sw_run_factory("sw_intertask", {"KERNEL": "intertask",
                                                                               "long_threshold": 1 << 30}),
                           _sw_reference),
    "sw_vector": Family("sw_vector", "SW vector first pass (CPU, short/uchar vectors)", _sw_vector_space,
                        _sw_inputs(False), _sw_run_factory("sw_vector", {"KERNEL": "vector",
                                                                         "long_threshold": 1 << 30}),
                        _sw_reference, _vector_applies),
    "sw_intratask": Family("sw_intratask", "SW intra-task kernel (long subjects)", _sw_intra_space,
                           _sw_inputs(True), _sw_run_factory("sw_intratask", {"long_threshold": 0}),
                           _sw_reference, _intra_applies, fixed={"KIND": "tiles"}),
    "hmm_slane.msv": Family("hmm_slane.msv", "HMMER MSV filter (S-lane kernel)", _hmm_space("msv"),
                            _hmm_inputs("msv"), _hmm_run, _hmm_reference),
    "hmm_slane.ssv": Family("hmm_slane.ssv", "HMMER SSV filter (S-lane kernel)", _hmm_space("ssv"),
                            _hmm_inputs("ssv"), _hmm_run, _hmm_reference),
}
