"""BLASTN diagonal test, word check and ungapped extension on the device
(kernels/blast_nucl_ungapped.mako, clalign/blast/nucl_device_ungapped.py) against the CPU word
finder (``nucl_search.initial_hits`` with one ``DiagState`` carried over the database's
segments in order, itself tested against ``nucl_words_ref``): every segment's saved initial
hits, sorted, equal row for row. Random and real subjects, lengths around bytes, strides and
words, ambiguity runs, both strands, DUST and lower-case masked queries, every table kind and
extender, the array store (batch <= 8000 bases) and the hash store (over), one and many device
blocks, 5,000,000-base subject chunks, BLAST+'s store clears; then whole searches."""
import gzip
import os
import random

import numpy as np
import pytest

from clalign.blast import nucl_words
from clalign.blast.nucl_extend import choose_extend
from clalign.blast.nucl_scan import build_flat
from clalign.blast.nucl_search import initial_hits, subject_array, subject_chunks
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.blast.nucl_words import DiagState
from clalign.data.nucleotide import open_nucleotide

cl = pytest.importorskip("pyopencl")
from clalign.blast.nucl_device import NuclDeviceWords  # noqa: E402
from clalign.blast.nucl_device_ungapped import segment_hits  # noqa: E402
from test_blastn_device import CASES, _dev, _mutate, _write  # noqa: E402

COMP = str.maketrans("ACGTRYNacgt", "TGCAYRNtgca")


def _data(tmp_path, seed, nquery, repeats=False):
    """Subjects of lengths around bytes and words with ambiguity runs; queries copied from them
    (mutated, some reverse complemented, some with N/R, some lower case, a low-complexity run)."""
    rng = random.Random(seed)
    lengths = [1, 3, 4, 5, 11, 12, 13, 27, 28, 29, 64, 301, 1000, 2047, 4099, 9001]
    subjects = []
    for n in lengths:
        if repeats:     # many live diagonals at once: long hash chains
            unit = "".join(rng.choice("ACGT") for _ in range(rng.randrange(5, 40)))
            s = list(_mutate(rng, (unit * (n // len(unit) + 1))[:n], 0.05))
        else:
            s = [rng.choice("ACGT") for _ in range(n)]
        for _ in range(n // 300):
            a = rng.randrange(n)
            for i in range(a, min(n, a + rng.randrange(1, 6))):
                s[i] = rng.choice("NRYKM")
        subjects.append("".join(s))
    queries = []
    for k in range(nquery):
        src = subjects[rng.randrange(10, len(subjects))]
        a = rng.randrange(0, max(1, len(src) - 300))
        q = _mutate(rng, src[a:a + rng.randrange(40, 500)], 0.04)
        if k % 3 == 1:
            q = q.translate(COMP)[::-1]
        if k % 4 == 2:
            i = rng.randrange(len(q))
            q = q[:i] + "NR" + q[i + 2:]
        if k % 5 == 3:
            i = rng.randrange(len(q))
            q = q[:i] + q[i:i + 30].lower() + q[i + 30:]
        if k % 7 == 4:
            q = q[:20] + "CA" * 20 + q[20:]
        queries.append(q.replace("K", "G").replace("M", "A").replace("k", "g").replace("m", "a"))
    return _write(tmp_path, subjects, queries)


def _setup(qf, db, kind, width, word, dust=True, lcase=True):
    nt = open_nucleotide(db)
    st = setup_search(read_queries(qf), BlastnOptions(task="blastn", word_size=word, dust=dust,
                                                      lcase_masking=lcase),
                      nt.total_bases, len(nt))
    st.flat = build_flat(st.batch, kind, width, word)
    st.extender = choose_extend(st.flat.kind, width, word, st.flat.scan_step)
    return nt, st


def _cpu(nt, st):
    """Per subject, per chunk: the CPU word finder's sorted saved hits, one DiagState."""
    diag = DiagState(len(st.batch.seq))
    out = []
    for oid in range(len(nt)):
        s = subject_array(nt.packed(oid))
        out.append([initial_hits(st, diag, s[off // 4:(off + n + 3) // 4], n)
                    for off, n in subject_chunks(int(nt.lengths[oid]))])
    return out


def _device(nt, st, device, override, pipeline=None, ung=None):
    dw = NuclDeviceWords(nt, st, _dev(device), dict(override, UNGAPPED="all"), pipeline=pipeline,
                         hits=True, ungapped_override=ung)
    assert dw.ung is not None
    return [dw.pairs(oid) for oid in range(len(nt))], dw


def _equal(got, want):
    assert [len(c) for c in got] == [len(c) for c in want]
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            assert np.array_equal(a[:, :7], b), (a[:5], b[:5])   # then the device DP's columns


@pytest.mark.parametrize("kind,width,word", CASES)
@pytest.mark.parametrize("nquery", [12, 60])            # array store / hash store
def test_saved_hits_equal_cpu_random(each_device, tmp_path, kind, width, word, nquery):
    qf, db = _data(tmp_path, seed=width * 100 + word + nquery, nquery=nquery)
    nt, st = _setup(qf, db, kind, width, word)
    assert DiagState(len(st.batch.seq)).hash == (nquery == 60)
    want = _cpu(nt, st)
    assert sum(len(h) for c in want for h in c) > 0
    k = CASES.index((kind, width, word)) % 4
    got, _ = _device(nt, st, each_device, {"BLOCK_BASES": 1 << 20}, pipeline=False,
                     ung={"WG": (32, 64, 128, 256)[k], "TILE": 1024, "PIECE": (1, 4, 32, 256)[k],
                          "SLOTS": (2, 4, 8, 16)[k], "GAP": (1, 16, 256, 64)[k]})
    _equal(got, want)
    for lanes in (1, 2):        # many blocks, the feeder threads' pipeline
        got, dw = _device(nt, st, each_device, {"BLOCK_BASES": 4096, "LANES": lanes})
        assert len(dw.blocks) > 1 and len(dw.lanes) == lanes
        _equal(got, want)


@pytest.mark.parametrize("hashed", [False, True])
def test_saved_hits_repeats_and_store_clears(each_device, tmp_path, monkeypatch, hashed):
    """Repetitive subjects (many diagonals live at once: chains grow, stale cells reused), and
    BLAST+'s store clear made frequent (INT4_MAX lowered for both paths)."""
    qf, db = _data(tmp_path, seed=7, nquery=60 if hashed else 12, repeats=True)
    nt, st = _setup(qf, db, "small", 8, 11, dust=False)
    want = _cpu(nt, st)
    got, _ = _device(nt, st, each_device, {"BLOCK_BASES": 8192})
    _equal(got, want)
    monkeypatch.setattr(nucl_words, "INT4_MAX", 4 * 3000)
    want = _cpu(nt, st)
    for lanes in (1, 2):        # two lanes: the store's chains still carried in block order
        got, _ = _device(nt, st, each_device, {"BLOCK_BASES": 8192, "LANES": lanes})
        _equal(got, want)


@pytest.mark.parametrize("nquery", [12, 60])            # array store / hash store
def test_saved_hits_reused_buffers_and_retries(each_device, tmp_path, monkeypatch, nquery):
    """Blocks of growing sizes share the feeder's and the ungapped stage's buffers (grown when
    too small), and with every room at 1 each launch that saves hits overflows and runs again
    (nw_spec and nw_redo, their plan made once): the same saved hits."""
    import clalign.blast.nucl_device as nd
    import clalign.blast.nucl_device_ungapped as nu

    qf, db = _data(tmp_path, seed=17 + nquery, nquery=nquery)
    nt, st = _setup(qf, db, "small", 8, 11)
    want = _cpu(nt, st)
    monkeypatch.setattr(nd, "MIN_ROOM", 1)
    monkeypatch.setattr(nu, "MIN_SAVED", 1)
    monkeypatch.setattr(nu, "STARTS_PER_SAVED", 1 << 30)
    spec = []
    launch = nu.DeviceUngapped._launch

    def counted(self, lane, name, n, key="device_ungapped"):
        spec.append(key)
        return launch(self, lane, name, n, key)

    monkeypatch.setattr(nu.DeviceUngapped, "_launch", counted)
    got, dw = _device(nt, st, each_device, {"BLOCK_BASES": 4096}, pipeline=False)
    assert len(dw.blocks) > 1
    _equal(got, want)
    saving = sum(1 for c in want for h in c if len(h) > 1)
    assert saving and spec.count("device_ungapped") > len(dw.blocks)
    got, dw = _device(nt, st, each_device, {"BLOCK_BASES": 4096, "LANES": 2})   # two lanes
    _equal(got, want)


def _genome(n):
    pyrodigal = pytest.importorskip("pyrodigal", reason="pyrodigal's wheel carries the genome")
    path = os.path.join(os.path.dirname(pyrodigal.__file__), "tests", "data",
                        "GCF_001457455.1_NCTC11397_genomic.fna.gz")
    with gzip.open(path, "rt") as fh:
        return "".join(line.strip().upper() for line in fh if not line.startswith(">"))[:n]


@pytest.mark.parametrize("nreads", [10, 40])
def test_saved_hits_equal_cpu_real_genome(each_device, tmp_path, nreads):
    """pyrodigal's genome cut at odd places (one piece over 5,000,000 bases would be too slow
    here: see the chunk test), reads from it on both strands."""
    g = _genome(80000)
    cuts = [0, 7, 4001, 4002, 17003, 33333, 80000]
    subjects = [g[a:b] for a, b in zip(cuts, cuts[1:])]
    rng = random.Random(5)
    reads = []
    for k in range(nreads):
        a = rng.randrange(0, len(g) - 600)
        r = _mutate(rng, g[a:a + rng.randrange(150, 600)], 0.03)
        reads.append(r.translate(COMP)[::-1] if k % 2 else r)
    qf, db = _write(tmp_path, subjects, reads)
    nt, st = _setup(qf, db, "small", 8, 11)
    want = _cpu(nt, st)
    got, _ = _device(nt, st, each_device, {"BLOCK_BASES": 16384})
    _equal(got, want)


def test_saved_hits_long_subject_chunks(each_device, tmp_path):
    """A 5.3 Mb subject (two BLAST+ chunks with their 100-base overlap) between short ones."""
    rng = random.Random(11)
    g = _genome(60000)
    big = "".join(rng.choice("ACGT") for _ in range(5_300_000 - 2 * len(g)))
    big = big[:4_990_000 - len(g)] + g + big[4_990_000 - len(g):] + g
    subjects = [g[:5000], big, g[20000:30000]]
    reads = [g[a:a + 400] for a in (100, 25000, 50000)] + [big[4_999_800:5_000_300]]
    qf, db = _write(tmp_path, subjects, reads)
    nt, st = _setup(qf, db, "small", 8, 11)
    assert len(subject_chunks(int(nt.lengths[1]))) == 2
    want = _cpu(nt, st)
    got, _ = _device(nt, st, each_device, {"BLOCK_BASES": 1 << 22})
    _equal(got, want)


def _bucket(d):
    return ((d & 0xFFFFFFFF) * nucl_words.DIAGHASH_MUL & 0xFFFFFFFF) % nucl_words.DIAGHASH_NUM_BUCKETS


def _cpu_starts(nt, st, starts):
    """The CPU word finder on given word starts (direct hits), one DiagState, sorted rows."""
    from clalign.blast.nucl_search import word_hits

    diag = DiagState(len(st.batch.seq))
    out = []
    for oid, (hq, hs) in enumerate(starts):
        rows = word_hits(st.flat, st.batch, st.compressed_query, "direct",
                         subject_array(nt.packed(oid)), int(nt.lengths[oid]), st.cutoff_ungapped,
                         st.xdrop_ungapped, st.reduced_cutoff, st.matrix, st.score_table, diag,
                         (hq, hs))
        order = np.lexsort((-rows[:, 4], rows[:, 2], -rows[:, 4], rows[:, 3], -rows[:, 5]))
        out.append(rows[order])
    return out


def _device_starts(nt, st, starts, device, blocks, piece=32):
    """nw_* kernels on given word starts, the segments cut into ``blocks``."""
    dw = NuclDeviceWords(nt, st, _dev(device), {"UNGAPPED": "all"}, pipeline=False, hits=True,
                         ungapped_override={"PIECE": piece, "SLOTS": 4, "GAP": 1 + piece // 4})
    out = [None] * len(nt)
    for a, e in blocks:
        blk = dw.block(a, e)
        resets = dw.ung.resets(a, e)
        rows = [np.column_stack([blk["pos0s"][g - a] + starts[g][1], np.zeros_like(starts[g][0]),
                                 starts[g][0], starts[g][1]]) for g in range(a, e)]
        rows = np.ascontiguousarray(np.concatenate(rows).astype(np.int32))
        buf = cl.Buffer(dw.rt.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=rows)
        got = dw.ung.run(buf, len(rows), blk, resets)
        for g in range(a, e):
            out[g] = segment_hits(got[got[:, 0] == g - a, 1:])[:, :7]
    return out


def _starts(rng, nt, qlen, hots):
    """Per subject: 0-3 of its diagonals ``hots[oid]`` at every position (q within qlen)."""
    starts = []
    for oid, hot in enumerate(hots):
        hq, hs = [], []
        for p in range(0, int(nt.lengths[oid]) - 11 + 1):
            for d in rng.sample(hot, min(len(hot), rng.choice((0, 1, 1, 2, 3)))):
                if 0 <= p - d <= qlen - 11:
                    hq.append(p - d)
                    hs.append(p)
        starts.append((np.array(hq, np.int64), np.array(hs, np.int64)))
    return starts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hash_chains_synthetic_word_starts(each_device, tmp_path, monkeypatch, seed):
    """Word starts chosen to stress the hash store (the scan rarely does): two buckets' worth
    of diagonals, nearly every position, over several subjects in one block and in many, so
    chains grow, stale cells of live diagonals are reused (a start they would have blocked is
    extended again), and a segment's layout depends on the chains' lengths left by the
    segments before; BLAST+'s store clears too. The kernel's saved hits equal the CPU word
    finder's (``word_hits`` with these starts as direct hits, one DiagState)."""
    rng = random.Random(seed)
    query = "".join(rng.choice("ACGT") for _ in range(9000))
    same = [a for a in range(1, 7000) if _bucket(-a) == _bucket(0)]   # one bucket throughout
    pieces = ((0, 3000), (same[0], 41), (same[1], 2500), (same[3], 1800), (same[-1], 1999))
    subjects = ["".join(c if i % 60 < 30 else rng.choice("ACGT") for i, c in
                        enumerate(query[a:a + n])) for a, n in pieces]   # 30-base matches
    qf, db = _write(tmp_path, subjects, [query])
    nt, st = _setup(qf, db, "megablast", 11, 11, dust=False, lcase=False)
    assert DiagState(len(st.batch.seq)).hash
    hots = []
    for a, _ in pieces:                       # diagonal -a matches, the others are random
        hot = [d for d in range(-a - 3000, -a + 3000) if _bucket(d) in (_bucket(0), _bucket(7))]
        hots.append([-a] + rng.sample(hot, 12))
    starts = _starts(rng, nt, len(query), hots)
    for clears in (0, 4000, 1500):     # store clears after subjects 3, or 1 and 3
        if clears:
            monkeypatch.setattr(nucl_words, "INT4_MAX", 4 * clears)
        want = _cpu_starts(nt, st, starts)
        assert sum(len(r) for r in want) > 20
        for blocks, piece in (([(0, 5)], 32), ([(0, 2), (2, 5)], 2), ([(g, g + 1) for g in range(5)], 8)):
            got = _device_starts(nt, st, starts, each_device, blocks, piece)
            for g, w in zip(got, want):
                assert np.array_equal(g, w)


def test_array_store_folded_diagonals(each_device, tmp_path):
    """The folded array store (batch <= 8000 bases, 2^k cells): word starts on diagonals d and
    d + 2^k interleaved in scan order give the saved hits of one cell per exact diagonal
    (``word_finder_ref``'s dict), on the CPU and on the device."""
    from clalign.blast.nucl_words_ref import word_finder_ref

    rng = random.Random(4)
    query = "".join(rng.choice("ACGT") for _ in range(3000))
    nt0 = 12000
    subj = [rng.choice("ACGT") for _ in range(nt0)]
    dlen = 8192
    for d in (-1000, -1000 + dlen, 5, 5 + dlen):     # 30-base matches on each of them
        for q0 in range(0, 3000 - 30, 90):
            if 0 <= q0 + d and q0 + d + 30 <= nt0:
                subj[q0 + d:q0 + d + 30] = query[q0:q0 + 30]
    qf, db = _write(tmp_path, ["".join(subj), "".join(subj[:9500])], [query])
    nt, st = _setup(qf, db, "megablast", 11, 11, dust=False, lcase=False)
    d = DiagState(len(st.batch.seq))
    assert not d.hash and d.length == dlen
    hot = [-1000, -1000 + dlen, 5, 5 + dlen, 5 - dlen, 17, 17 + dlen]
    starts = _starts(rng, nt, len(query), [hot, hot])
    want = _cpu_starts(nt, st, starts)
    assert sum(len(r) for r in want) > 20
    for oid, (hq, hs) in enumerate(starts):
        s = np.concatenate([np.asarray(nt.packed(oid)), np.zeros(2, np.uint8)])
        ref = word_finder_ref(list(zip(hq.tolist(), hs.tolist())), st.batch, st.flat, "megablast",
                              s, int(nt.lengths[oid]), 11, st.cutoff_ungapped, st.xdrop_ungapped,
                              st.reduced_cutoff, st.matrix, st.score_table, st.compressed_query, {})
        ref = np.array(ref, np.int64).reshape(-1, 7)
        order = np.lexsort((-ref[:, 4], ref[:, 2], -ref[:, 4], ref[:, 3], -ref[:, 5]))
        assert np.array_equal(ref[order], want[oid])
    for blocks, piece in (([(0, 2)], 32), ([(0, 1), (1, 2)], 2)):
        got = _device_starts(nt, st, starts, each_device, blocks, piece)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


SEARCH = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


@pytest.mark.parametrize("mode", ["blastn", "all"])
@pytest.mark.parametrize("task,query,name,threads", [
    ("megablast", "reads.fa", "megablast.tsv", 1), ("blastn", "reads.fa", "blastn.tsv", 1),
    ("blastn", "reads.fa", "blastn.tsv", 3), ("blastn-short", "short.fa", "blastn-short.tsv", 2)])
def test_search_equals_blastn(each_device, mode, task, query, name, threads):
    """Whole searches with the device's saved hits: the golden blastn 2.12 tables."""
    from clalign.blast.blastn import run_blastn, tabular_lines
    from clalign.runtime.tuning import trial

    times = {}
    with trial("blastn_scan", {"UNGAPPED": mode}):
        res = run_blastn(os.path.join(SEARCH, query), os.path.join(SEARCH, "genome.fa"),
                         BlastnOptions(task=task), device=_dev(each_device), num_threads=threads,
                         times=times)
    with open(os.path.join(SEARCH, name)) as fh:
        assert tabular_lines(res) == fh.read().splitlines()
    on_device = "device_ungapped" in times
    assert on_device == (mode == "all" or task != "megablast")


def test_redo_plan_rules(each_device, tmp_path):
    """The host's rule for keeping nw_spec's pieces, case by case: a piece is kept while its
    key's earlier pieces were, no store clear precedes it, every end written before it in its
    key lies at or before its least start, and it used at most SLOTS cells and (hash store) no
    more than the chain has; keys with a piece not kept go to nw_redo with their pieces."""
    from clalign.blast.nucl_device_ungapped import pieces

    qf, db = _data(tmp_path, seed=3, nquery=60)
    nt, st = _setup(qf, db, "small", 8, 11)
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"UNGAPPED": "all"}, pipeline=False, hits=True)
    ung = dw.ung
    assert ung.hash and ung.values["SLOTS"] == 8
    base = np.zeros(513, np.int64)
    base[1:4] = [6, 12, 18]      # keys 0, 1, 2: three pieces of 2 starts each
    base[4:] = 18
    lo, key = pieces(base, [2, 4, 0, 8, 10, 14, 16, 0, 0])
    assert lo.tolist() == list(range(0, 20, 2)) and key.tolist() == [0] * 3 + [1] * 3 + [2] * 3
    ung.k[:3] = 2

    def plan(rows):
        keep, keys, _ = ung._redo_plan(np.array(rows, np.int32), key, base.astype(np.uint32),
                                       dw.lanes[0])
        return keep.view(bool).tolist(), keys.tolist()

    good = [[1, 10, 0, 0], [2, 20, 10, 0], [1, 30, 20, 0]]
    assert plan(good * 3) == ([True] * 9, [])
    cleared = good[:1] + [[1, 20, 10, 1]] + good[2:]             # a clear before piece 1
    assert plan(cleared + good * 2) == ([True, False, False] + [True] * 6, [0])
    too_many = [[3, 10, 0, 0]] + good[1:]                         # key 1 has 2 cells, uses 3
    assert plan(good + too_many + good) == ([True] * 3 + [False] * 3 + [True] * 3, [1])
    late = good[:2] + [[1, 30, 19, 0]]                            # an end (20) past a start (19)
    assert plan(good + good + late) == ([True] * 8 + [False], [2])
    ung.k[:3] = 20           # a piece past SLOTS cells stopped early: never kept, however long the chain
    assert plan(good + [[9, 10, 0, 0]] + good[1:] + good) == ([True] * 3 + [False] * 3 + [True] * 3, [1])
    assert plan(good + [[8, 10, 0, 0]] + good[1:] + good) == ([True] * 9, [])


def _keep_plan_ref(pinfo, piece_key, k, hashed, slots, nkeys):
    """The keep rule with numpy (the form it had before the compiled pass)."""
    used, max_end, min_s, cleared = (pinfo[:, c].astype(np.int64) for c in range(4))
    shift = piece_key.astype(np.int64) << 32
    acc = np.maximum.accumulate(max_end + shift) - shift
    first = np.ones(len(piece_key), bool)
    first[1:] = piece_key[1:] != piece_key[:-1]
    before = np.where(first, 0, np.roll(acc, 1))
    ok = (before <= min_s) & (used <= (np.minimum(k[piece_key], slots) if hashed else slots))
    ok &= cleared == 0
    idx = np.where(ok, len(ok), np.arange(len(ok)))
    starts = np.flatnonzero(first)
    first_bad = np.full(nkeys, len(ok), np.int64)
    if len(starts):
        first_bad[piece_key[starts]] = np.minimum.reduceat(idx, starts)
    return np.arange(len(ok)) < first_bad[piece_key], first_bad


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("hashed", [False, True])
def test_keep_plan_equals_numpy_rule(seed, hashed):
    from clalign.blast.nucl_device_ungapped import _keep_plan

    rng = np.random.default_rng(seed)
    n, nkeys = int(rng.integers(0, 3000)), 512
    piece_key = np.sort(rng.integers(0, nkeys, n)).astype(np.int64)
    pinfo = np.column_stack([rng.integers(0, 7, n), rng.integers(-5, 400, n),
                             rng.integers(0, 400, n), rng.random(n) < 0.02]).astype(np.int32)
    k = rng.integers(0, 8, nkeys).astype(np.int32)
    keep = np.empty(n, np.bool_)
    first_bad = np.full(nkeys, n, np.int64)
    _keep_plan(pinfo, piece_key, k, hashed, 4, keep, first_bad)
    want_keep, want_bad = _keep_plan_ref(pinfo, piece_key, k, hashed, 4, nkeys)
    assert np.array_equal(keep, want_keep) and np.array_equal(first_bad, want_bad)
    assert 0 < keep.sum() < n or n < 50


@pytest.mark.parametrize("hashed", [False, True])
def test_redo_keeps_later_pieces(each_device, tmp_path, monkeypatch, hashed):
    """nw_redo searches again only the pieces the real store does not bear out: reads from a
    real genome (true alignments: long ungapped extensions whose ends reach past the next
    pieces of their key) leave keys with a piece not kept, and later pieces of those keys kept
    by nw_redo (never the other way round); the saved hits equal the CPU word finder's."""
    import clalign.blast.nucl_device_ungapped as nu

    g = _genome(60000 if hashed else 240000)    # array store: more random starts after a read
    rng = random.Random(9)
    reads = []
    for k in range(40 if hashed else 6):      # both strands of 6 reads: under 8,000 bases
        a = rng.randrange(0, 60000 - 700)
        r = _mutate(rng, g[a:a + rng.randrange(300, 600)], 0.01)
        reads.append(r.translate(COMP)[::-1] if k % 2 else r)
    qf, db = _write(tmp_path, [g[:20000], g[20000:]], reads)
    nt, st = _setup(qf, db, "small", 8, 11 if hashed else 8)   # array: denser random starts
    want = _cpu(nt, st)
    seen = []
    plan, settle = nu.DeviceUngapped._redo_plan, nu.DeviceUngapped.settle

    def planned(self, *a):
        keep, keys, r = plan(self, *a)
        seen.append([keep.view(bool).copy()])
        return keep, keys, r

    def settled(self, job, lane):
        settle(self, job, lane)
        seen[-1].append(job["keep_piece"].copy())

    monkeypatch.setattr(nu.DeviceUngapped, "_redo_plan", planned)
    monkeypatch.setattr(nu.DeviceUngapped, "settle", settled)
    got, dw = _device(nt, st, each_device, {"BLOCK_BASES": 16384}, pipeline=False,
                      ung={"PIECE": 8, "GAP": 4})
    assert dw.ung.hash == hashed
    _equal(got, want)
    assert all(np.all(final[host]) for host, final in seen)      # host-kept pieces stay kept
    redone = sum(int((~final).sum()) for _, final in seen)
    late = sum(int((final & ~host).sum()) for host, final in seen)
    assert redone and late, (redone, late)
