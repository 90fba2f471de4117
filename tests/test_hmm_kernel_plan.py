"""The kernel plan of a many-model search (clalign.hmm.kernel_plan): few programs, exact scores."""
import dataclasses
import os

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

from clalign.hmm import engine as E, kernel_plan  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402


def _h100():
    return dataclasses.replace(Runtime.get().caps, is_cpu=False, is_gpu=True, is_nvidia=True, ptx=True,
                               ptx_s16x2=True, ptx_shfl=True, compute_capability=(9, 0), local_mem=49152,
                               warp=32, max_work_group=1024, compute_units=132, clang_vectors=False,
                               name="NVIDIA H100")


@pytest.fixture
def h100(monkeypatch):
    caps = _h100()

    class Rt:
        pass

    rt = Rt()
    rt.caps = caps
    fake = type("R", (), {"get": staticmethod(lambda device=None: rt)})
    monkeypatch.setattr(kernel_plan, "Runtime", fake)
    monkeypatch.setattr(E, "Runtime", fake)
    return caps


def _pfam_like(n, seed=1):
    rng = np.random.default_rng(seed)
    return np.clip(np.round(np.exp(rng.normal(np.log(150.0), 0.75, n))), 20, 2000).astype(int).tolist()


def _programs(plan):
    return {tuple(sorted(p["values"].items())) for p in plan}


def test_many_models_few_programs(h100):
    Ms = _pfam_like(600)
    exact = [E.choose_kernel(M, "msv", h100) for M in Ms]
    assert len({(v["S"], v["H"]) for v in exact}) > 60           # what the per-model choice asks for
    plan = kernel_plan.plan_kernels(Ms, E.shared_layout(Ms, "msv"), "msv", None, 205_000_000)
    assert len(_programs(plan)) <= 16
    padded = 0
    for M, v, p in zip(Ms, exact, plan):
        w = p["values"]
        assert w["S"] == v["S"] and w["H"] >= v["H"] and p["H"] == w["H"]     # same S, enough states
        assert w.get("WG_WAVES") == p.get("WG_WAVES", w["WG_WAVES"])
        padded += w["H"] - v["H"]
    assert padded <= 0.25 * sum(v["H"] for v in exact)


def test_few_models_large_database_keep_exact_choices(h100):
    Ms = [83, 178, 400]
    plan = kernel_plan.plan_kernels(Ms, E.shared_layout(Ms, "msv"), "msv", None, 10 ** 12)
    for M, p in zip(Ms, plan):
        assert p["H"] == E.choose_kernel(M, "msv", h100, {k: v for k, v in p.items() if k == "WG_WAVES"})["H"]


def test_best_set_is_optimal_on_a_small_case():
    weight = {1: 1.0, 2: 1.0, 10: 5.0}
    assert kernel_plan._best_set([1, 2, 10], weight, lambda H: 0.0) == {1: 1, 2: 2, 10: 10}
    assert kernel_plan._best_set([1, 2, 10], weight, lambda H: 100.0) == {1: 10, 2: 10, 10: 10}
    assert kernel_plan._best_set([1, 2, 10], weight, lambda H: 1.5) == {1: 2, 2: 2, 10: 10}


def test_planned_values_give_the_same_scores():
    """run_raw takes a plan's values (a larger H: padded states) and scores exactly as without."""
    from clalign.data import Database
    from clalign.hmm.hmmfile import read_hmms

    hmm = next(iter(read_hmms(os.path.join(os.path.dirname(__file__), "..", "data", "hmms.hmm"))))
    rng = np.random.default_rng(3)
    seqs = ["".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), int(n))) for n in rng.integers(1, 300, 40)]
    db = Database.from_sequences(seqs)
    caps = Runtime.get().caps
    base = E.choose_kernel(hmm.M, "msv", caps, {"S": 8})
    v = E.choose_kernel(hmm.M, "msv", caps, {"S": 8, "H": base["H"] + 3})
    want = E.msv_scores(hmm, db, kernel="striped")
    got = E.msv_scores(hmm, db, kernel="slane", values=v)
    assert np.array_equal(want, got)


def test_targets_named_hash_and_direct_paths_agree(monkeypatch):
    """Targets.named: the indices of candidates with a given name, duplicates included, the same
    through the name hashes (many candidates) and by direct comparison (few)."""
    from clalign.data import Database
    from clalign.hmm import targets as T

    names = [f"seq{i % 700}" if i % 3 else f"long_name_{i}" for i in range(3000)]
    db = Database.from_sequences(["ACDE"] * 3000, ids=names)
    t = T.Targets(db, np.zeros(3000, dtype=np.int64))
    among = np.arange(0, 3000, 2)
    ask = {b"seq1", b"seq699", b"long_name_3", b"long_name_4", b"absent"}
    monkeypatch.setattr(T, "_HASH_MIN", 0)
    hashed = t.named(ask, among)
    monkeypatch.setattr(T, "_HASH_MIN", 10 ** 9)
    direct = t.named(ask, among)
    want = {nm: np.array([k for k in among if names[k].encode() == nm], dtype=np.int64) for nm in ask}
    for nm in ask:
        assert np.array_equal(hashed[nm], want[nm]) and np.array_equal(direct[nm], want[nm]), nm
    every = T._name_hashes(t.iblob, t.ioff)
    assert [int(h) for h in every[:3]] == [T._hash_of(n.encode()) for n in names[:3]]
    assert np.array_equal(T._name_hashes(t.iblob, t.ioff, among), every[among])


def _msv_of(fail_at=None):
    """A custom MSV scorer (the search's hook): the OpenCL scores, or an error at one model."""
    calls = []

    def scores(profile, db, device=None, **overrides):
        calls.append(profile.M)
        if fail_at is not None and len(calls) == fail_at:
            raise RuntimeError("scorer failed")
        return E.msv_scores(profile, db, device=device, kernel="striped")

    return scores, calls


def test_device_stage_error_and_early_close():
    """An error in the device stage's thread reaches the caller in model order; closing the
    search early stops that thread (no hang)."""
    from clalign.hmm.search import hmmsearch

    hmms = os.path.join(os.path.dirname(__file__), "..", "data", "hmms.hmm")
    db = os.path.join(os.path.dirname(__file__), "..", "data", "proteome.faa.gz")
    scores, calls = _msv_of(fail_at=3)
    search = iter(hmmsearch(hmms, db, cpus=1, msv_scores=scores))
    with pytest.raises(RuntimeError, match="scorer failed"):
        for _ in search:
            pass
    scores, calls = _msv_of()
    it = iter(hmmsearch(hmms, db, cpus=1, msv_scores=scores))
    next(it)
    it.close()                              # joins the stage thread
    import threading

    assert not [t for t in threading.enumerate() if t.name == "clalign-msv" and t.is_alive()]
