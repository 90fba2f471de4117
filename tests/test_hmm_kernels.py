"""S-lane MSV/SSV kernels (kernels/hmm_slane.mako) against the numpy reference and pyhmmer.

Data provenance: the real proteome (``938293.PRJEB85.HG003687.faa``, 2,100 proteins) and the
protein models (``tests/data/hmms/txt/*.hmm`` except the RNA model RF00001 and the DNA model
bmyD) ship inside the installed pyhmmer package (its own test data). 2,099 of the proteins end
in a ``*`` stop: clalign's FASTA reader strips it but keeps the count (``Database.stops``), and
the API scores them as HMMER reads them, stop included; pyhmmer is given the ``*`` too. Synthetic models are ``pyhmmer.plan7.HMM.sample`` (seeded); synthetic
sequences are seeded random residues, model consensus fragments and long consensus repeats
(which overflow the byte range: +inf).

Truth: pyhmmer's ``OptimizedProfile.msv_filter`` / ``ssv_filter`` with ``om.L`` = the target
length (HMMER 3.4's p7_MSVFilter / p7_SSVFilter); ``None`` from ``ssv_filter`` is NaN here.
"""
import glob
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")
cl = pytest.importorskip("pyopencl")

from pyhmmer.easel import Alphabet, TextSequence  # noqa: E402
from pyhmmer.plan7 import HMM, HMMFile  # noqa: E402

from clalign.data import PROTEIN, Database, as_database  # noqa: E402
from clalign.errors import ParameterError  # noqa: E402
from clalign.hmm import engine as E  # noqa: E402
from clalign.hmm import reference as R  # noqa: E402
from clalign.hmm.params import S_VALUES, geometry  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")     # every test device (conftest)
PYH_DATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
PROTEOME = os.path.join(PYH_DATA, "seqs", "938293.PRJEB85.HG003687.faa")
AMINO = Alphabet.amino()
STD = np.array([PROTEIN.letters.index(c) for c in "ACDEFGHIKLMNPQRSTVWY"], dtype=np.uint8)
STAR = PROTEIN.letters.index("*")


def hmmer_codes(db):
    """Every sequence of ``db`` as HMMER reads it from the FASTA: trailing stops restored."""
    return [np.concatenate((db.sequence(i), np.full(int(db.stops[i]), STAR, dtype=np.uint8)))
            for i in range(len(db))]


def same(a, b):
    """Exact float equality, +inf and NaN (pyhmmer's None) included."""
    return np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32), equal_nan=True)


def pyhmmer_scores(hmm, codes):
    """(msv, ssv) float32 arrays from pyhmmer for clalign code arrays."""
    prof = E.profile_from_pyhmmer(hmm)
    om = prof._om
    msv, ssv = [], []
    for c in codes:
        ds = TextSequence(sequence=PROTEIN.decode(c)).digitize(AMINO)
        om.L = len(c)
        msv.append(om.msv_filter(ds))
        s = om.ssv_filter(ds)
        ssv.append(np.nan if s is None else s)
    return np.array(msv, np.float32), np.array(ssv, np.float32)


def consensus(hmm):
    em = np.asarray(hmm.match_emissions)[1:, :20]
    return STD[np.argmax(em, axis=1)]


def synthetic_seqs(hmm, seed, n=40):
    """Random residues, consensus fragments, a few long consensus repeats; lengths from 1 up."""
    rng = np.random.default_rng(seed)
    cons = consensus(hmm)
    out = []
    lengths = [1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 127, 128, 129] + list(rng.integers(1, 400, size=n))
    for i, L in enumerate(lengths):
        s = STD[rng.integers(0, 20, size=int(L))]
        if i % 3 == 0 and L > 4:                       # embed a consensus fragment
            a = int(rng.integers(0, max(1, cons.size - 1)))
            frag = cons[a:a + int(rng.integers(1, L))]
            p = int(rng.integers(0, L - frag.size + 1))
            s[p:p + frag.size] = frag
        out.append(s)
    for reps in (3, 12):                               # saturating ones (+inf)
        out.append(np.tile(cons, reps))
    if cons.size >= 4:                                 # fragments separated by random linkers: J state
        parts = []
        for _ in range(6):
            parts += [cons[: max(2, cons.size // 2)], STD[rng.integers(0, 20, size=30)]]
        out.append(np.concatenate(parts))
    return out


_HMMS = {}


def sampled_hmm(M, seed=0):
    key = (M, seed)
    if key not in _HMMS:
        _HMMS[key] = HMM.sample(AMINO, M, 1000 + 7 * M + seed)
    return _HMMS[key]


def run_scores(prof, db, algo, **kw):
    r = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, algo, **kw)
    if algo == "msv":
        return R.msv_from_bytes(prof, r.raw & 0xFF, (r.raw >> 8) & 1, db.lengths), r
    return R.ssv_from_bytes(prof, r.raw, db.lengths), r


# ---------------------------------------------------------------------------------------
def test_reference_matches_pyhmmer_on_sampled_models():
    for M, seed in ((3, 0), (40, 1), (129, 2), (300, 3)):
        hmm = sampled_hmm(M, seed)
        prof = E.profile_from_pyhmmer(hmm)
        seqs = synthetic_seqs(hmm, seed)
        want_m, want_s = pyhmmer_scores(hmm, seqs)
        assert same(R.msv_reference(prof, seqs), want_m), M
        assert same(R.ssv_reference(prof, seqs), want_s), M
        xJ, ovf = R.msv_bytes(prof, seqs)
        assert same(R.msv_from_bytes(prof, xJ, ovf, [s.size for s in seqs]), want_m), M
        if M >= 40:
            assert np.isinf(want_m).any() and np.isfinite(want_m).any(), M


def _cases(lane=8):
    """(S, M, H): model lengths just below, at and above the W*L*H coverage boundaries."""
    out = []
    for S in S_VALUES:
        if S > 32 * (32 // lane):
            continue
        P = geometry(S, 32, lane)["P"]
        for H in (1, 2, 3):
            for M in (P * H - 1, P * H, P * H + 1):
                if M < 2 or M > P * H or (H == 3 and M != P * H):
                    continue
                out.append((S, M, H))
        out.append((S, P * 2 + 1, None))          # just past 2 words: auto H = 3
    return out


# LANE 8: every S; LANE 16 (2 cells per word, exact 16-bit forms): lane groups of 32 and 2
# work-items and two sequences per word (S=64); S=8 (groups of 4), S=32 (one work-item per
# sequence) and S=64 on WAVE=64 are in the shape and threshold tests below
@pytest.mark.parametrize("lane,S", [(8, s) for s in S_VALUES] + [(16, s) for s in (1, 16, 64)])
def test_every_slane_kernel_vs_reference_and_pyhmmer(lane, S):
    cases = [c for c in _cases(lane) if c[0] == S]
    if lane == 16:                                 # fewer builds: H = 1, 2 and the auto H = 3
        cases = [c for c in cases if c[2] != 3]
    for i, (s, M, H) in enumerate(cases):
        hmm = sampled_hmm(M)
        prof = E.profile_from_pyhmmer(hmm)
        seqs = synthetic_seqs(hmm, M, n=25)
        db = Database.from_sequences(seqs)
        want_m, want_s = pyhmmer_scores(hmm, seqs)
        over = {"S": S, "LANE": lane} if H is None else {"S": S, "H": H, "LANE": lane}
        if lane == 16:                             # profile in local and in global memory
            over["PROF_LOCAL"] = bool(i % 2)
        for spc in (1, 3):                         # 3: several sequences per column (END resets)
            got_m, r = run_scores(prof, db, "msv", spc=spc, **over)
            assert r.values["S"] == S and r.values["H"] * geometry(S, 32, lane)["P"] >= M
            assert r.values["LANE"] == lane
            assert same(got_m, want_m), (S, M, H, spc, "msv")
            got_s, _ = run_scores(prof, db, "ssv", spc=spc, **over)
            assert same(got_s, want_s), (S, M, H, spc, "ssv")
        assert same(got_m, R.msv_reference(prof, seqs)) and same(got_s, R.ssv_reference(prof, seqs))


@pytest.mark.parametrize("over", [{"S": 4, "WG_WAVES": 2}, {"S": 2, "WAVE": 16}, {"S": 128, "WAVE": 64, "LANE": 8},
                                  {"S": 16, "WG_WAVES": 4}, {"S": 8, "WG_WAVES": 2, "LANE": 16},
                                  {"S": 128, "WAVE": 64, "LANE": 16, "PROF_LOCAL": False}])
def test_other_wavefront_shapes(over):
    hmm = sampled_hmm(70)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = synthetic_seqs(hmm, 5, n=30)
    db = Database.from_sequences(seqs)
    want_m, want_s = pyhmmer_scores(hmm, seqs)
    for spc in (1, 2):
        assert same(run_scores(prof, db, "msv", spc=spc, **over)[0], want_m), over
        assert same(run_scores(prof, db, "ssv", spc=spc, **over)[0], want_s), over


# RG (residue groups of 4/8/16 rows per column load): lane groups with shfl-free local exchange,
# one work-item per sequence with an even H (padded local profile stride), the global profile,
# and 2 / 4 sequences per work-item (each with its own group load); spc 1 and 3 give blocks of
# a few rows (fewer than RG) up to many groups with a partial last group
@pytest.mark.parametrize("over", [{"S": 16, "LANE": 16, "RG": 4}, {"S": 32, "LANE": 16, "RG": 8, "H": 36},
                                  {"S": 2, "LANE": 16, "RG": 16, "PROF_LOCAL": False},
                                  {"S": 64, "LANE": 16, "RG": 4}, {"S": 128, "LANE": 8, "RG": 16},
                                  {"S": 8, "RG": 8}])
def test_residue_groups(over):
    hmm = sampled_hmm(70)
    prof = E.profile_from_pyhmmer(hmm) if over["S"] < 64 else E.profile_from_pyhmmer(sampled_hmm(20))
    seqs = synthetic_seqs(hmm if over["S"] < 64 else sampled_hmm(20), 11, n=30)
    db = Database.from_sequences(seqs)
    want_m, want_s = R.msv_reference(prof, seqs), R.ssv_reference(prof, seqs)
    for spc in (1, 3):
        got_m, r = run_scores(prof, db, "msv", spc=spc, **over)
        assert r.values["RG"] == over["RG"] and r.blocks.rg == over["RG"]
        assert same(got_m, want_m), (over, spc)
        assert same(run_scores(prof, db, "ssv", spc=spc, **over)[0], want_s), (over, spc)


def test_block_layout_of_residue_groups():
    """Row r of column c at (r // RG) * C * RG + c * RG + r % RG; the same rows for every RG."""
    seqs = [STD[np.arange(n) % 20] for n in (1, 7, 30, 2, 13)]
    db = Database.from_sequences(seqs)
    ref = E.build_blocks(db.residues, db.offsets, db.lengths, db.order, 4, 2, 1)
    for rg in (4, 8, 16):
        b = E.build_blocks(db.residues, db.offsets, db.lengths, db.order, 4, 2, rg)
        assert np.array_equal(b.rows, ref.rows) and np.array_equal(b.ids, ref.ids) and (b.off % 16 == 0).all()
        for k in range(b.nblocks):
            rows = int(b.rows[k])
            a = ref.data[ref.off[k]:ref.off[k] + rows * 4].reshape(rows, 4)
            g = -(-rows // rg)
            blk = b.data[b.off[k]:b.off[k] + g * rg * 4].reshape(g, 4, rg).transpose(0, 2, 1).reshape(-1, 4)
            assert np.array_equal(blk[:rows], a) and (blk[rows:] == E.PAD).all(), rg


def test_block_row_cap():
    """With a cap, the longest sequences get a column each (the longest block is no longer
    than the longest sequence); shorter ones still share columns; every sequence is placed."""
    rng = np.random.default_rng(4)
    lens = np.concatenate([rng.integers(1, 60, 200), [400, 390, 380, 370, 360]])
    seqs = [STD[rng.integers(0, 20, int(n))] for n in lens]
    db = Database.from_sequences(seqs)
    free = E.build_blocks(db.residues, db.offsets, db.lengths, db.order, 4, 6)
    capped = E.build_blocks(db.residues, db.offsets, db.lengths, db.order, 4, 6, 1, E.default_cap(db.lengths, 6))
    assert free.rows.max() > 700 and capped.rows.max() == 401
    assert np.array_equal(np.sort(capped.ids), np.arange(len(seqs)))
    assert (np.diff(capped.col_start) > 1).any()                      # several sequences per column
    hmm = sampled_hmm(30)
    prof = E.profile_from_pyhmmer(hmm)
    for balance in (True, False):
        assert same(run_scores(prof, db, "ssv", S=4, spc=6, balance=balance)[0], R.ssv_reference(prof, seqs))


def test_empty_and_zero_length_sequences():
    hmm = sampled_hmm(20)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = [np.zeros(0, np.uint8), STD[:5], np.zeros(0, np.uint8), consensus(hmm)]
    db = Database.from_sequences(seqs)
    for S, lane, rg in ((1, 8, 1), (32, 8, 1), (128, 8, 1), (2, 16, 1), (64, 16, 1), (16, 16, 16)):
        assert same(run_scores(prof, db, "msv", S=S, LANE=lane, RG=rg)[0], R.msv_reference(prof, seqs))
        assert same(run_scores(prof, db, "ssv", S=S, LANE=lane, RG=rg)[0], R.ssv_reference(prof, seqs))
    empty = Database.from_sequences([])
    assert E.msv_scores(prof, empty).shape == (0,)


def _cpu_caps():
    """The probe of this device, seen as a plain CPU OpenCL device (device-independent choices)."""
    import dataclasses

    from clalign.runtime import Runtime

    return dataclasses.replace(Runtime.get().caps, is_cpu=True, is_gpu=False, is_nvidia=False, ptx=False,
                               ptx_s16x2=False, ptx_shfl=False, compute_capability=None, warp=1,
                               platform="Portable Computing Language", name="cpu")


def test_kernel_choice_follows_eq_2_to_5():
    caps = _cpu_caps()
    for M in (2, 16, 32, 33, 100, 128, 129, 400, 1000, 2400):
        v = E.choose_kernel(M, "msv", caps, {"HMAX": 16})
        P = geometry(v["S"])["P"]
        assert P * 16 >= M or v["S"] == 1                       # the most lanes that cover M
        bigger = [s for s in S_VALUES if s > v["S"]]
        assert all(geometry(s)["P"] * 16 < M for s in bigger)
        assert v["H"] == -(-M // P)                             # the smallest H that fits
    with pytest.raises(ParameterError, match="cover 10 states"):
        E.choose_kernel(100, "msv", caps, {"S": 128, "H": 10})  # 10 states < 100
    for M in (2, 64, 65, 129, 400, 2400):                       # LANE 16: 64 lanes per wavefront
        v = E.choose_kernel(M, "ssv", caps, {"HMAX": 16, "LANE": 16})
        P = geometry(v["S"], 32, 16)["P"]
        assert v["LANE"] == 16 and v["H"] == -(-M // P) and (P * 16 >= M or v["S"] == 1)
        assert all(geometry(s, 32, 16)["P"] * 16 < M for s in (8, 16, 32, 64) if s > v["S"])
    with pytest.raises(ParameterError, match="S=128 is not one of"):
        E.choose_kernel(10, "ssv", caps, {"S": 128, "LANE": 16})  # 128 > 64 lanes


def test_lane_choice_from_tuning_table():
    """LANE 16 is taken from the tuning table only where the SIMD variant has native 16x2 ops."""
    import dataclasses

    caps = _cpu_caps()
    assert E.choose_kernel(300, "msv", caps)["LANE"] == 8            # a CPU: SWAR
    h100 = dataclasses.replace(caps, is_cpu=False, is_gpu=True, is_nvidia=True, ptx=True, ptx_s16x2=True,
                               ptx_shfl=True, compute_capability=(9, 0), local_mem=49152, warp=32)
    for algo in ("msv", "ssv"):
        v = E.choose_kernel(300, algo, h100)
        assert v["LANE"] == 16 and v["SIMD"] == "ptx" and v["PTX_S16X2"], v
        assert E.choose_kernel(300, algo, h100, simd="swar")["LANE"] == 8
        assert E.choose_kernel(300, algo, h100, {"LANE": 8})["LANE"] == 8
        big = E.choose_kernel(2400, algo, h100, {"S": 1})            # 30 rows x 2400 x 2 bytes > 48 KiB
        assert not big["PROF_LOCAL"]
    # run 7 entries (docs/perf/hmm.md): the fastest (S, H) of the every-S sweep at each M
    # msv: clalign tune on the H100 (docs/perf/tuning.md): Hmax 64, S <= 32 with RG 16, 4 waves
    want = {"msv": ((20, 32, 10), (50, 32, 25), (100, 32, 50), (200, 16, 50), (400, 8, 50), (800, 4, 50),
                    (1600, 2, 50), (2400, 1, 38)),
            "ssv": ((20, 32, 10), (50, 32, 25), (100, 32, 50), (200, 16, 50), (400, 4, 25), (800, 2, 25),
                    (1600, 1, 25), (2400, 1, 38))}
    for algo, rows in want.items():
        for M, S, H in rows:
            v = E.choose_kernel(M, algo, h100)
            assert (v["S"], v["H"], v["RG"]) == (S, H, 16), (algo, M, v)
    assert E.choose_kernel(300, "ssv", caps)["RG"] == 1                # PoCL: row-major blocks


# ---------------------------------------------------------------------------------------
def _protein_hmms():
    """(label, path or None, pyhmmer HMM, index in file) for every protein model of the files."""
    out = []
    for fn in sorted(glob.glob(os.path.join(PYH_DATA, "hmms", "txt", "*.hmm"))):
        with HMMFile(fn) as f:
            hmms = list(f)
        for i, hmm in enumerate(hmms):
            if hmm.alphabet.K == 20:
                out.append((f"{os.path.basename(fn)}#{i}", fn, hmm, i, len(hmms)))
    return out


_TRUTH = {}


def _proteome_truth(hmm, codes):
    key = (hmm.name, hmm.M, len(codes))
    if key not in _TRUTH:
        _TRUTH[key] = pyhmmer_scores(hmm, codes)
    return _TRUTH[key]


@pytest.fixture(scope="module")
def proteome(each_device):         # its block cache holds buffers of one device
    return as_database(PROTEOME)


def test_real_proteome_every_real_protein_hmm(proteome):
    """All 2,100 proteins x every protein model, auto-selected kernel (the striped one on CPU
    devices), vs pyhmmer (exact), the
    trailing '*' of 2,099 of them included (HMMER counts it in L)."""
    codes = hmmer_codes(proteome)
    assert int(proteome.stops.sum()) == 2099
    hmms = _protein_hmms()
    assert len(hmms) == 14                             # KR, LuxC, PF02826, Thioesterase + 10 in RREFam
    try:                                               # the profile engineer's profile, if present
        from clalign.hmm import build_msv_profile, read_hmms
    except ImportError:
        build_msv_profile = None
    for name, path, hmm, i, nfile in hmms:
        want_m, want_s = _proteome_truth(hmm, codes)
        assert same(E.msv_scores(hmm, proteome), want_m), name
        # a one-model file is also accepted as a path
        got_s = E.ssv_scores(path if nfile == 1 else hmm, proteome)
        assert same(got_s, want_s), name
        if build_msv_profile is not None:
            prof = build_msv_profile(list(read_hmms(path))[i])
            adapter = E.profile_from_pyhmmer(hmm)
            assert np.array_equal(prof.rbv, adapter.rbv) and np.array_equal(prof.sbv, adapter.sbv), name
            assert same(E.msv_scores(prof, proteome), want_m), name
    # the models shared a few block layouts (and their device copies) of this database; the
    # striped CPU kernel keeps one copy of the database arrays (key "striped")
    cache = E.layout_cache(proteome)
    slane = [entry for key, entry in cache.items() if key[0] != "striped"]
    assert 0 < len(cache) < 3 * len(hmms) and all(entry[1] is not None for entry in slane)


class _RampProfile:
    """A hand-made MSV profile whose diagonal scores rise by exactly one per residue 'A', so
    the byte recurrences reach every value up to and across the overflow thresholds."""

    def __init__(self, M=160, bias=17, seed=3):
        rng = np.random.default_rng(seed)
        self.M, self.name = M, "ramp"
        self.base_b, self.bias_b, self.tbm_b, self.tec_b, self.scale_b = 190, bias, 40, 3, 3.0 / np.log(2)
        rbv = rng.integers(bias + 1, 256, size=(28, M)).astype(np.uint8)
        rbv[PROTEIN.encode("A")[0]] = bias - 1          # score +1
        rbv[PROTEIN.encode("C")[0]] = bias               # score 0
        rbv[PROTEIN.encode("W")[0], ::7] = 0             # the best score, bias, now and then
        self.rbv = rbv
        self.sbv = np.clip(rbv.astype(np.int16) - bias, -128, 127).astype(np.int8)

    def tjb_b(self, L):                      # int or array of lengths, as every profile's
        return np.minimum(9, np.asarray(L, dtype=np.int64) // 40)


def test_overflow_thresholds_exact_for_both_lanes():
    """MSV and SSV right below, at and above 255 - bias (and long past it, where 16-bit cells
    would wrap) on both lane widths, against the numpy byte reference."""
    prof = _RampProfile()
    A, C, W = (PROTEIN.encode(c) for c in "ACW")
    seqs = [np.repeat(A, n) for n in range(60, 140)]               # every ramp length
    seqs += [np.concatenate([np.repeat(A, n), C, np.repeat(A, 5)]) for n in range(80, 120, 3)]
    seqs += [np.tile(np.concatenate([np.repeat(A, 30), np.repeat(W, 3)]), 4), np.repeat(A, 3000),
             np.repeat(W, 2000), STD[np.random.default_rng(0).integers(0, 20, 500)]]
    xe = R.ssv_xe(prof, seqs)
    bias = prof.bias_b
    assert {254 - bias, 255 - bias, 256 - bias} <= set(xe.tolist())   # SSV hits the threshold exactly
    xJ, ovf = R.msv_bytes(prof, seqs)
    assert ovf.any() and (~ovf).any()
    flips = [n for n in range(len(seqs[:80]) - 1) if not ovf[n] and ovf[n + 1]]
    assert flips                                                       # MSV: last finite, first +inf
    want_m, want_s = R.msv_reference(prof, seqs), R.ssv_reference(prof, seqs)
    want_pure = R.msv_pure_reference(prof, seqs)
    db = Database.from_sequences(seqs)
    for lane, S in ((8, 4), (16, 32)):
        got_m, r = run_scores(prof, db, "msv", S=S, LANE=lane, spc=2)
        assert same(got_m, want_m), (lane, S)
        raw = r.raw[np.argsort(np.arange(len(seqs)))]
        assert np.array_equal((raw >> 8) & 1, ovf.astype(np.uint32)), (lane, S)
        assert np.array_equal(np.where(ovf, 0, raw & 0xFF), np.where(ovf, 0, xJ)), (lane, S)
        got_s, rs = run_scores(prof, db, "ssv", S=S, LANE=lane, spc=2)
        assert same(got_s, want_s), (lane, S)
        ok = xe < 255 - bias                                           # below the threshold: the byte itself
        assert np.array_equal(rs.raw[ok], xe[ok]) and (rs.raw[~ok] >= 255 - bias).all(), (lane, S)
    assert np.isinf(want_pure).any() and np.isfinite(want_pure).any()


def test_profile_facts_checked():
    prof = _RampProfile()
    prof.base_b = 240                                                  # base + bias > 254
    db = Database.from_sequences([STD[:10]])
    with pytest.raises(Exception, match="base_b"):
        run_scores(prof, db, "msv")
    prof = _RampProfile()
    prof.sbv = prof.sbv.copy()
    prof.sbv[0, 0] = -100                                              # a score above bias
    with pytest.raises(Exception, match="bias_b"):
        run_scores(prof, db, "ssv", LANE=16)


def test_real_proteome_lane16(proteome):
    """The proteome x every protein model with LANE 16 forced (auto S; H = 25 for all, so
    three kernels per filter cover the 14 models), both profile placements, vs pyhmmer."""
    codes = hmmer_codes(proteome)
    for k, (name, path, hmm, i, nfile) in enumerate(_protein_hmms()):
        want_m, want_s = _proteome_truth(hmm, codes)
        over = {"LANE": 16, "HMAX": 25, "H": 25, "PROF_LOCAL": bool(k % 2)}
        assert same(E.msv_scores(hmm, proteome, **over), want_m), name
        assert same(E.ssv_scores(hmm, proteome, **over), want_s), name


def test_shfl_only_on_a_full_warp():
    """shfl.sync exchanges inside a 32-wide warp: other wavefront sizes use the local exchange
    (on the H100, S=2 with WAVE=16 and shfl gave wrong scores before this rule)."""
    import dataclasses

    h100 = dataclasses.replace(_cpu_caps(), is_cpu=False, is_gpu=True, is_nvidia=True, ptx=True, ptx_s16x2=True,
                               ptx_shfl=True, compute_capability=(9, 0), local_mem=49152, warp=32)
    assert E.choose_kernel(300, "msv", h100)["PTX_SHFL"]
    v = E.choose_kernel(300, "msv", h100, {"S": 2, "WAVE": 16})
    assert v["WAVE"] == 16 and not v["PTX_SHFL"]
    with pytest.raises(Exception, match="PTX_SHFL"):
        E.choose_kernel(300, "msv", h100, {"S": 2, "WAVE": 16, "PTX_SHFL": True})


def test_split_long_pieces_cover_every_window():
    """Pieces of ``seg`` residues overlapping by ``overlap``: every window of overlap + 1
    residues of a sequence lies whole inside one of its pieces; short sequences stay whole."""
    lengths = np.array([0, 1, 9, 10, 11, 25, 57, 3], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    seg, overlap = 10, 4
    p = E.split_long(offsets, lengths, seg, overlap)
    n = lengths.size
    owner = np.concatenate((np.arange(n), p.parent))
    assert np.array_equal(np.sort(p.lengths), p.lengths[p.order]) and p.lengths.max() <= seg
    for i, L in enumerate(lengths):
        mine = np.flatnonzero(owner == i)
        spans = [(int(p.offsets[k] - offsets[i]), int(p.offsets[k] - offsets[i] + p.lengths[k])) for k in mine]
        assert min(a for a, _ in spans) == 0 and max(b for _, b in spans) == L
        if L <= seg:
            assert spans == [(0, int(L))]
        for w in range(0, max(0, int(L) - overlap)):
            assert any(a <= w and w + overlap + 1 <= b for a, b in spans), (i, w)
    with pytest.raises(Exception):
        E.split_long(offsets, lengths, 4, 4)


@pytest.mark.parametrize("lane,S,rg", [(8, 1, 1), (8, 16, 4), (8, 128, 1), (16, 4, 16), (16, 16, 16), (16, 64, 1)])
def test_ssv_pieces_exact(lane, S, rg):
    """SSV of long sequences cut into pieces just past the model length equals the whole-sequence
    reference (and pyhmmer): consensus fragments across every cut, saturating repeats (+inf),
    and pieces forced as short as M + 1 (one new residue per piece past the overlap)."""
    M = 37
    hmm = sampled_hmm(M, 5)
    prof = E.profile_from_pyhmmer(hmm)
    cons = consensus(hmm)
    rng = np.random.default_rng(11)
    seqs = []
    for L in (M - 1, M, M + 1, 2 * M, 5 * M + 3, 700, 1500):
        s = STD[rng.integers(0, 20, size=L)]
        for c in range(0, L, 50):                  # a consensus fragment across many cuts
            frag = cons[: min(cons.size, L - c, 30)]
            s[c:c + frag.size] = frag
        seqs.append(s)
    seqs += [np.tile(cons, 6), np.concatenate([STD[rng.integers(0, 20, 400)], cons, STD[rng.integers(0, 20, 300)]])]
    seqs += [STD[rng.integers(0, 20, int(L))] for L in rng.integers(1, 120, 30)]
    db = Database.from_sequences(seqs)
    want = R.ssv_reference(prof, seqs)
    assert same(want, pyhmmer_scores(hmm, seqs)[1])
    assert np.isinf(want).any() and np.isfinite(want).any()
    for seg in (M + 1, M + 14, 2 * M, True, False):
        got, r = run_scores(prof, db, "ssv", S=S, LANE=lane, RG=rg, split=seg)
        assert same(got, want), (seg, lane, S, rg)
        if seg is not False and seg is not True:
            assert r.blocks.pieces is not None and r.blocks.pieces.n_ext > len(seqs)


def test_split_refused_for_msv():
    hmm = sampled_hmm(20)
    prof = E.profile_from_pyhmmer(hmm)
    db = Database.from_sequences([STD[:50]])
    with pytest.raises(Exception, match="SSV"):
        E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, "msv", split=True)


def test_shared_layout_one_geometry_same_scores():
    """shared_layout: models whose tuned S differ get WG_WAVES so that S * WG_WAVES is the
    largest C wherever that is a legal WG_WAVES; scores do not change."""
    from clalign.runtime import Runtime

    caps = Runtime.get().caps
    Ms = [20, 60, 130, 260]
    tuned = [E.choose_kernel(M, "msv", caps) for M in Ms]
    lay = E.shared_layout(Ms, "msv")
    C = max(v["S"] * v["WG_WAVES"] for v in tuned)
    for M, v, ov in zip(Ms, tuned, lay):
        w = E.choose_kernel(M, "msv", caps, dict(ov))
        assert w["S"] == v["S"] and w["H"] == v["H"]
        if ov:
            assert w["S"] * w["WG_WAVES"] == C
    rng = np.random.default_rng(3)
    seqs = [STD[rng.integers(0, 20, int(L))] for L in rng.integers(1, 300, 60)]
    db = Database.from_sequences(seqs)
    for M, ov in zip(Ms, lay):
        prof = E.profile_from_pyhmmer(sampled_hmm(M))
        for wgw in sorted({ov.get("WG_WAVES", 1), 2, 4}):
            assert same(run_scores(prof, db, "msv", WG_WAVES=wgw)[0], R.msv_reference(prof, seqs)), (M, wgw)
