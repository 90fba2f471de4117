"""The device's preliminary gapped extensions (``kernels/blast_gapped.mako``) against the compiled
DP of ``gapped.py`` (itself checked against BLAST+'s rule and the plain reference in
test_blast_gapped.py), HSP by HSP, and the preliminary stage replayed on them
(``stages_nb.prelim_chunk`` with ``pre``) against the CPU stage, array for array: real queries x the bundled proteome,
planted homologs at sequence ends, full and restricted DP on every row, a band small enough to
overflow (those HSPs flagged and redone on the CPU), subjects past AdjustSubjectRange's 90,000
residues, other gap costs, and the whole search through the device path."""
from pathlib import Path

import numpy as np
import pytest

from clalign.blast import engine
from clalign.blast.blastp import read_queries
from clalign.blast.engine import Subjects, initial_hsps, prelim_hits, search_query, setup_query
from clalign.blast.gapped import extend_all
from clalign.blast.options import blastp_options
from clalign.data.database import Database

cl = pytest.importorskip("pyopencl")
from clalign.blast.device import DeviceUngapped  # noqa: E402
from clalign.blast.device_gapped import DeviceGapped, for_device, restricted_rows  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AA = np.arange(1, 23, dtype=np.uint8)
#: kernel variants: the default; tiny rings (many overflows); rings in local memory
VARIANTS = [{}, {"BAND": 32, "WG": 32}, {"BAND": 64, "WG": 32, "SCRATCH_LOCAL": True}]


@pytest.fixture(scope="module")
def rt():
    return Runtime.get(None)


@pytest.fixture(scope="module")
def proteome():
    return Subjects.from_database(Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein"))


def _check(dg, qs, subjects, rows, restrict=None):
    """Every extension the device made equals the CPU DP's; the replayed stage equals the CPU
    stage. Returns the number of overflowed rows."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    r = restricted_rows(qs, rows) if restrict is None else np.asarray(restrict, dtype=np.uint8)
    pre = dg.extend(qs, rows, r)
    want = extend_all(qs.matrix, qs.codes, subjects.residues, subjects.offsets, rows, r.astype(bool),
                      qs.opts.gap_open, qs.opts.gap_extend, qs.xdrop_gapped)
    ok = pre[:, 7] != 0
    assert np.array_equal(pre[ok, 7], np.where(r[ok] != 0, 2, 1))
    assert np.array_equal(pre[ok, :7], want[ok])
    if restrict is None:
        got = prelim_hits(qs, subjects, rows, pre=pre)
        ref = prelim_hits(qs, subjects, rows)
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    return int((~ok).sum())


@pytest.mark.parametrize("override", VARIANTS)
def test_real_queries(rt, proteome, override):
    dg = DeviceGapped(rt, proteome, override)
    overflow = n = 0
    for _, _, codes in read_queries(ROOT / "data" / "queries.faa")[:3]:
        qs = setup_query(codes, proteome, blastp_options())
        rows = initial_hsps(qs, proteome)
        n += len(rows)
        overflow += _check(dg, qs, proteome, rows)
        for flag in (0, 1):   # the full and the restricted DP on every row
            overflow += _check(dg, qs, proteome, rows, np.full(len(rows), flag))
    assert n > 50
    if override.get("BAND") == 32:
        assert overflow > 0   # the tiny ring overflowed somewhere and was redone on the CPU


def _mutate(rng, seq, ident):
    out = []
    for c in seq:
        if rng.random() > ident and rng.random() < 0.15:   # an indel now and then
            if rng.random() < 0.5:
                continue
            out.extend(rng.choice(AA, size=int(rng.integers(1, 6))))
        out.append(c if rng.random() < ident else rng.choice(AA))
    return np.array(out, dtype=np.uint8)


def _planted(seed, long_len=0):
    """A query and subjects holding mutated pieces of it (25-95 % identity), some at the very
    start or end of the subject; with ``long_len`` one subject that long, hits far inside it."""
    rng = np.random.default_rng(seed)
    query = rng.choice(AA, 400)
    seqs = []
    for k in range(60):
        piece = query[int(rng.integers(0, 300)):][:int(rng.integers(20, 250))]
        left = rng.choice(AA, 0 if k % 5 == 0 else int(rng.integers(1, 200)))
        right = rng.choice(AA, 0 if k % 7 == 0 else int(rng.integers(1, 200)))
        seqs.append(np.concatenate([left, _mutate(rng, piece, float(rng.uniform(0.25, 0.95))), right]))
    if long_len:
        filler = rng.choice(AA, long_len)
        for at in (5_000, long_len // 2, long_len - 300):
            filler[at:at + 250] = _mutate(rng, query[100:350], 0.9)[:250]
        seqs.append(filler)
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    return query, Subjects(np.concatenate(seqs), offsets, [f"s{k}" for k in range(len(seqs))])


@pytest.mark.parametrize("seed,opts,long_len", [
    (1, {}, 0),
    (2, dict(dbsize=10 ** 10), 0),                                   # restricted DP and redo
    (3, dict(matrix="BLOSUM45", gap_open=15, gap_extend=2), 0),      # another X-drop and costs
    (4, {}, 120_000)])                                               # AdjustSubjectRange
def test_planted(rt, seed, opts, long_len):
    query, subjects = _planted(seed, long_len)
    qs = setup_query(query, subjects, blastp_options(**opts))
    rows = initial_hsps(qs, subjects)
    assert len(rows) > 20
    if long_len:
        assert (rows[:, 0] == len(subjects.ids) - 1).sum() >= 3
    for override in VARIANTS[:2]:
        dg = DeviceGapped(rt, subjects, override)
        _check(dg, qs, subjects, rows)
        _check(dg, qs, subjects, rows, np.ones(len(rows)))


def test_search_through_device(rt, monkeypatch):
    """The whole search with the device's extensions equals the CPU path's, stage and output."""
    query, subjects = _planted(2)
    o = blastp_options(dbsize=10 ** 10)
    want = search_query(query, subjects, o)
    dev = DeviceUngapped(subjects)
    assert for_device(dev, {"ENABLE": True, "BAND": 32, "WG": 32}) is not None
    times = {}
    monkeypatch.setattr(engine, "ROWS_PER_CHUNK", 50)   # several replay chunks
    got = search_query(query, subjects, o, device=dev, threads=2, times=times)
    assert times.get("dev_gapped", 0) > 0 and times.get("dev_gapped_overflow", 0) > 0
    flat = lambda res: [(oid, h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.evalue,
                         bytes(np.asarray(h.ops))) for oid, hsps in res for h in hsps]
    assert flat(got) == flat(want) and len(want) > 5


@pytest.mark.parametrize("name,kw", [("synth", dict(max_target_seqs=500)),
                                     ("synth_e1e-5", dict(max_target_seqs=500, evalue=1e-5))])
def test_golden_through_device(monkeypatch, name, kw):
    """BLAST+'s golden rows (test_blastp_golden.py) from the device path with the stage forced on
    (PoCL's tuning turns it off) and a ring small enough to overflow now and then."""
    from clalign.blast import device_gapped
    from clalign.blast.blastp import run_blastp, tabular_lines

    monkeypatch.setattr(device_gapped, "lookup", lambda family, caps: {"ENABLE": True, "BAND": 64})
    gold = ROOT / "tests" / "data" / "blastp"
    times = {}
    got = tabular_lines(run_blastp(gold / "synth_queries.faa", gold / "synth_db.faa.gz",
                                   blastp_options(**kw), num_threads=2,
                                   device=Runtime.get(None).device, times=times))
    assert times.get("dev_gapped_kernel", 0) > 0   # the device made the extensions
    assert got == (gold / f"{name}.tsv").read_text().splitlines()


def test_concurrent_queries_several_launches(rt, proteome):
    """Queries extended from several threads at once (more than the buffer slots, each cut into
    several launches) get the same rows as one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    from clalign.blast.device_gapped import IN_FLIGHT

    dg = DeviceGapped(rt, proteome, {"LAUNCH": 32})
    cases = []
    for _, _, codes in read_queries(ROOT / "data" / "queries.faa")[:IN_FLIGHT + 2]:
        qs = setup_query(codes, proteome, blastp_options())
        rows = np.ascontiguousarray(initial_hsps(qs, proteome), dtype=np.int64)
        cases.append((qs, rows, dg.extend(qs, rows)))
    assert sum(len(r) > 32 for _, r, _ in cases) >= 1 and len(cases) > IN_FLIGHT
    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        got = list(pool.map(lambda c: dg.extend(c[0], c[1]), cases))
    assert all(np.array_equal(g, c[2]) for g, c in zip(got, cases))
