"""hmmsearch with the bias and Viterbi filters decided by clalign (clalign.hmm.vit_search):
HMMER's pipeline counts and hits, from pyhmmer's own full pipeline on the bundled models x
the bundled proteome (2,100 proteins ending in '*'). The device here is the test device
(PoCL on CI); CLALIGN_HMM_VITERBI=device forces the path."""
import io
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")
pytest.importorskip("pyopencl")

from pyhmmer.easel import Alphabet, DigitalSequenceBlock, SequenceFile  # noqa: E402
from pyhmmer.plan7 import HMMFile, Pipeline  # noqa: E402

from clalign.hmm import vit_search  # noqa: E402
from clalign.hmm.search import hmmsearch  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HMMS = os.path.join(REPO, "data", "hmms.hmm")
PROTEOME = os.path.join(REPO, "data", "proteome.faa.gz")
AMINO = Alphabet.amino()
KEYS = ("n_past_msv", "n_past_bias", "n_past_vit", "n_past_fwd")


def _rows(hits):
    buf = io.BytesIO()
    hits.write(buf, format="targets", header=False)
    hits.write(buf, format="domains", header=False)
    return buf.getvalue()


@pytest.fixture(scope="module")
def hmmer():
    """Per model: (pipeline counts, table rows) of pyhmmer's full pipeline over the proteome."""
    with SequenceFile(PROTEOME, digital=True, alphabet=AMINO) as sf:
        seqs = sf.read_block()
    out = []
    with HMMFile(HMMS) as hf:
        for ph in hf:
            hits = Pipeline(AMINO, Z=len(seqs)).search_hmm(ph, seqs)
            st = hits.__getstate__()["pipeline"]
            out.append(([st[k] for k in KEYS], _rows(hits), hits.domZ))
    return seqs, out


def _search():
    s = hmmsearch(HMMS, PROTEOME, engine="opencl", cpus=2)
    return s, list(s)


def _device_search_equals_hmmer(hmmer):
    """A search that ran the device Viterbi stage: every model's pipeline counts, hits and domZ
    are HMMER's."""
    s, res = _search()
    assert s.stats.vit_seconds > 0
    _, want = hmmer
    for r, (counts, rows, domZ) in zip(res, want):
        assert [r.n_past_msv, r.n_past_bias, r.n_past_vit, r.n_past_fwd] == counts, r.hmm.name
        assert _rows(r.hits) == rows and r.hits.domZ == domZ, r.hmm.name


@pytest.mark.parametrize("margin,max_m", [(vit_search.MARGIN_BITS, None), (1e9, None), (vit_search.MARGIN_BITS, 100)])
def test_device_viterbi_counts_and_hits_equal_hmmer(hmmer, monkeypatch, margin, max_m):
    """Default margin: nearly every target decided here; 1e9 bits: every target left to
    pyhmmer's own pipeline (the path taken near a threshold); models above 100 states as
    models too long for the kernel (pyhmmer runs their Viterbi filter)."""
    from clalign.hmm import vit_engine

    monkeypatch.setenv(vit_search.ENV, "device")
    monkeypatch.setattr(vit_search, "MARGIN_BITS", margin)
    if max_m:
        monkeypatch.setattr(vit_engine, "VIT_MAX_M", max_m)
    monkeypatch.setattr(vit_search.DeviceViterbi, "overrides", {"WG": 32, "P": 17})   # one kernel build
    _device_search_equals_hmmer(hmmer)


@pytest.mark.parametrize("fwd_margin,forward", [(1e9, True), (vit_search.FWD_MARGIN_BITS, False)])
def test_forward_left_to_pyhmmer_equals_hmmer(hmmer, monkeypatch, fwd_margin, forward):
    """Every Forward decision left to pyhmmer (margin 1e9 bits), or the device Forward stage
    off: the targets past Viterbi go to pyhmmer with F2 = 1 and HMMER's F3."""
    monkeypatch.setenv(vit_search.ENV, "device")
    monkeypatch.setattr(vit_search, "FWD_MARGIN_BITS", fwd_margin)
    monkeypatch.setattr(vit_search, "FORWARD", forward)
    monkeypatch.setattr(vit_search.DeviceViterbi, "overrides", {"WG": 32, "P": 17})
    _device_search_equals_hmmer(hmmer)


def test_long_targets_left_to_pyhmmer_equal_hmmer(hmmer, monkeypatch):
    """Targets above LONG_TARGET (here most of the proteome) go to pyhmmer's own pipeline
    without device scores; counts and hits stay HMMER's."""
    monkeypatch.setenv(vit_search.ENV, "device")
    monkeypatch.setattr(vit_search, "LONG_TARGET", 300)
    monkeypatch.setattr(vit_search.DeviceViterbi, "overrides", {"WG": 32, "P": 17})
    _device_search_equals_hmmer(hmmer)


def test_device_viterbi_after_slane_kernels_equals_hmmer(hmmer, monkeypatch):
    """The GPU path of a many-model search: S-lane MSV kernels, whose survivors and scores come
    from the compiled byte pass (clalign.hmm.bytepass.msv_survivors), the device Viterbi stage,
    every target's sequence built up front and the pyhmmer workers assembling their blocks."""
    from clalign.hmm import engine, kernel_choice, kernel_plan, targets

    monkeypatch.setattr(targets, "PREBUILD_SHARE", 0.0)

    never = (lambda caps, override=None: False)
    for mod in (engine, kernel_choice, kernel_plan):
        monkeypatch.setattr(mod, "use_striped", never)
    monkeypatch.setenv(vit_search.ENV, "device")
    monkeypatch.setattr(vit_search.DeviceViterbi, "overrides", {"WG": 32, "P": 17})
    _device_search_equals_hmmer(hmmer)


def test_f2_one_on_hmmer_viterbi_survivors_is_hmmer(hmmer):
    """The premise: pyhmmer with F2 = 1 on exactly the targets past HMMER's Viterbi filter
    gives HMMER's hits (two models, each target's fate read from a one-target pipeline)."""
    seqs, want = hmmer
    with HMMFile(HMMS) as hf:
        phmms = list(hf)
    for m in (1, 4):
        ph = phmms[m]
        past = [s for s in seqs if Pipeline(AMINO, Z=len(seqs)).search_hmm(
            ph, DigitalSequenceBlock(AMINO, [s])).__getstate__()["pipeline"]["n_past_vit"]]
        hits = Pipeline(AMINO, Z=len(seqs), F2=1.0).search_hmm(ph, DigitalSequenceBlock(AMINO, past))
        assert _rows(hits) == want[m][1] and hits.domZ == want[m][2]
        assert np.all(np.array([hits.__getstate__()["pipeline"][k] for k in KEYS[:3]]) == len(past))


def test_engine_choice(monkeypatch):
    class Caps:
        is_gpu = True

    monkeypatch.delenv(vit_search.ENV, raising=False)
    assert not vit_search.use_device_viterbi(Caps())          # no GPU measured yet
    assert not vit_search.use_device_viterbi(Caps(), work=1.4e9)      # 14 bundled models x the proteome
    assert vit_search.use_device_viterbi(Caps(), work=vit_search.GPU_MIN_WORK)   # many models
    monkeypatch.setitem(vit_search.MEASURED_FASTER, "gpu", True)
    assert vit_search.use_device_viterbi(Caps())
    Caps.is_gpu = False
    assert not vit_search.use_device_viterbi(Caps())
    monkeypatch.setenv(vit_search.ENV, "device")
    assert vit_search.use_device_viterbi(Caps())
