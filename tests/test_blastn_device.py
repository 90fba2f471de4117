"""BLASTN device kernels (kernels/blast_nucl.mako, clalign/blast/nucl_device.py) against the plain
references: the scan's matched positions against the presence rule, the lookup's pairs against
``nucl_scan.scan_subject_ref``, the mini-extension's word starts against ``nucl_extend``'s
extenders, for every table kind and extender, random subjects with ambiguity codes and lengths
around byte, stride and word boundaries, both strands, subjects cut into several device blocks
(the pipeline thread) and BLAST+ subject chunks; then whole searches on the device identical to
the golden blastn 2.12 tables (tests/data/blastn/search)."""
import os
import random
import shutil
import subprocess

import numpy as np
import pytest

from clalign.blast.blastn import run_blastn, tabular_lines
from clalign.blast.nucl_extend import (choose_extend, na_extend, small_na_extend,
                                       small_na_extend_aligned)
from clalign.blast.nucl_scan import build_flat, scan_subject_ref
from clalign.blast.nucl_search import subject_chunks
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.data.nucleotide import open_nucleotide

cl = pytest.importorskip("pyopencl")
from clalign.blast.nucl_device import NuclDeviceWords  # noqa: E402

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")
COMP = str.maketrans("ACGTRYN", "TGCAYRN")
#: (table kind, width, word size): every extender (direct, generic/aligned, small, small aligned)
CASES = [("small", 4, 4), ("small", 6, 7), ("small", 8, 11), ("small", 8, 15),
         ("standard", 8, 11), ("megablast", 10, 11), ("megablast", 12, 28), ("megablast", 9, 12)]


def _dev(spec):
    return "0:0" if spec == "default" else spec


def _mutate(rng, s, rate):
    return "".join(rng.choice("ACGT") if rng.random() < rate else c for c in s)


def _random_data(tmp_path, seed):
    """Subjects of lengths around 4-base bytes and word sizes (ambiguity runs inside) and
    queries copied from them (mutated, some reverse complemented, some with N and R)."""
    rng = random.Random(seed)
    lengths = [1, 3, 4, 5, 11, 12, 13, 27, 28, 29, 64, 301, 1000, 2047, 4099]
    subjects = []
    for n in lengths:
        s = [rng.choice("ACGT") for _ in range(n)]
        for _ in range(n // 300):
            a = rng.randrange(n)
            for i in range(a, min(n, a + rng.randrange(1, 6))):
                s[i] = rng.choice("NRYKM")
        subjects.append("".join(s))
    queries = []
    for k in range(12):
        src = subjects[rng.randrange(10, len(subjects))]
        a = rng.randrange(0, max(1, len(src) - 200))
        q = _mutate(rng, src[a:a + rng.randrange(40, 400)], 0.04)
        if k % 3 == 1:
            q = q.translate(COMP)[::-1]
        if k % 4 == 2:
            i = rng.randrange(len(q))
            q = q[:i] + "NR" + q[i + 2:]
        queries.append(q.replace("K", "G").replace("M", "A"))
    queries.append("".join(rng.choice("ACGT") for _ in range(300)))
    return _write(tmp_path, subjects, queries)


def _write(tmp_path, subjects, queries):
    db, qf = tmp_path / "db.fa", tmp_path / "q.fa"
    db.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(subjects)))
    qf.write_text("".join(f">q{i}\n{q}\n" for i, q in enumerate(queries)))
    return str(qf), str(db)


def _setup(qf, db, kind, width, word):
    nt = open_nucleotide(db)
    st = setup_search(read_queries(qf), BlastnOptions(task="blastn", word_size=word, dust=False),
                      nt.total_bases, len(nt))
    st.flat = build_flat(st.batch, kind, width, word)
    st.extender = choose_extend(st.flat.kind, width, word, st.flat.scan_step)
    return nt, st


def _reference(nt, st):
    """Per subject, per chunk: (lookup pairs, word starts) by the plain rules."""
    f, b = st.flat, st.batch
    ctx_end = b.offsets + b.lengths
    out = []
    for oid in range(len(nt)):
        chunks = []
        for off, n in subject_chunks(int(nt.lengths[oid])):
            s = np.concatenate([np.asarray(nt.packed(oid))[off // 4:(off + n + 3) // 4],
                                np.zeros(2, np.uint8)])
            pairs = scan_subject_ref(f, s, n) if n >= f.width else []
            words = []
            for q0, s0 in pairs:
                c = int(np.searchsorted(b.offsets, q0, side="right") - 1)
                a, e = int(b.offsets[c]), int(ctx_end[c])
                if st.extender == "direct":
                    r = (q0, s0)
                elif st.extender in ("generic", "aligned"):
                    r = na_extend(b.seq, s, q0, s0, f.width, f.word_size, n)
                elif st.extender == "small":
                    r = small_na_extend(st.compressed_query, s, q0, s0, f.width, f.word_size, n, a, e)
                else:
                    r = small_na_extend_aligned(st.compressed_query, s, q0, s0, f.width,
                                                f.word_size, n, a, e, len(b.seq))
                if r is not None:
                    words.append(r)
            chunks.append((pairs, words))
        out.append(chunks)
    return out


def _device_words(dw, nt):
    return [[list(zip(hq.tolist(), hs.tolist())) for hq, hs in dw.pairs(oid)]
            for oid in range(len(nt))]


@pytest.mark.parametrize("kind,width,word", CASES)
def test_kernels_equal_reference_random(each_device, tmp_path, kind, width, word):
    qf, db = _random_data(tmp_path, seed=width * 100 + word)
    nt, st = _setup(qf, db, kind, width, word)
    ref = _reference(nt, st)
    wg = (32, 64, 128, 256)[CASES.index((kind, width, word)) % 4]   # one program per case
    # one block: the scan's and the lookup's own outputs checked too
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"WG": wg, "BLOCK_BASES": 1 << 20},
                         pipeline=False)
    dw.keep = {}
    got = _device_words(dw, nt)
    assert got == [[w for _, w in chunks] for chunks in ref]
    assert sum(len(w) for c in got for w in c) > 0
    seg_pairs = [p for chunks in ref for p, _ in chunks]
    pos0 = dw.keep["pos0"]
    step = st.flat.scan_step
    want_matched = sorted({int(pos0[g]) + s0 // step for g, p in enumerate(seg_pairs) for _, s0 in p})
    assert dw.keep["matched"][:, 0].tolist() == want_matched      # in scan order
    pairs = list(map(tuple, dw.keep["pairs"].tolist()))
    g_of = np.searchsorted(pos0[1:], [p for p, _ in pairs], side="right")
    got_pairs = [(int(st.flat.q_offs[k]), int(p - pos0[g]) * step) for (p, k), g in zip(pairs, g_of)]
    assert got_pairs == [x for p in seg_pairs for x in p]
    # many small blocks, computed ahead by the feeder threads (one lane, two lanes)
    for lanes in (1, 2):
        dw = NuclDeviceWords(nt, st, _dev(each_device), {"WG": wg, "BLOCK_BASES": 4096,
                                                         "LANES": lanes})
        assert len(dw.blocks) > 1 and len(dw.lanes) == lanes
        assert _device_words(dw, nt) == [[w for _, w in chunks] for chunks in ref]


@pytest.mark.parametrize("kind,width,word", [("small", 8, 11), ("megablast", 12, 28)])
def test_reused_buffers_and_retries(each_device, tmp_path, monkeypatch, kind, width, word):
    """Blocks of growing sizes share their buffers (grown when too small), and with the least
    room at 1 the lookup and extension launches overflow and run again: the same word starts."""
    import clalign.blast.nucl_device as nd

    qf, db = _random_data(tmp_path, seed=width * 7 + word)
    nt, st = _setup(qf, db, kind, width, word)
    ref = [[w for _, w in chunks] for chunks in _reference(nt, st)]
    monkeypatch.setattr(nd, "MIN_ROOM", 1)
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"BLOCK_BASES": 4096}, pipeline=False)
    assert len(dw.blocks) > 1
    assert _device_words(dw, nt) == ref
    assert sum(len(w) for c in ref for w in c) > 0
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"BLOCK_BASES": 4096, "LANES": 2})
    assert _device_words(dw, nt) == ref


@pytest.mark.parametrize("kind,width,word", [("small", 8, 11), ("megablast", 12, 28)])
def test_kernels_equal_reference_real_genome(each_device, tmp_path, kind, width, word):
    """A 60 kb stretch of pyrodigal's genome cut into subjects at odd places, reads from it."""
    import gzip

    pyrodigal = pytest.importorskip("pyrodigal", reason="pyrodigal's wheel carries the genome")

    path = os.path.join(os.path.dirname(pyrodigal.__file__), "tests", "data",
                        "GCF_001457455.1_NCTC11397_genomic.fna.gz")
    with gzip.open(path, "rt") as fh:
        g = "".join(line.strip().upper() for line in fh if not line.startswith(">"))[:60000]
    cuts = [0, 7, 4001, 4002, 17003, 33333, 60000]
    subjects = [g[a:b] for a, b in zip(cuts, cuts[1:])]
    rng = random.Random(3)
    reads = []
    for k in range(20):
        a = rng.randrange(0, len(g) - 600)
        r = _mutate(rng, g[a:a + rng.randrange(150, 600)], 0.03)
        reads.append(r.translate(COMP)[::-1] if k % 2 else r)
    qf, db = _write(tmp_path, subjects, reads)
    nt, st = _setup(qf, db, kind, width, word)
    ref = _reference(nt, st)
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"BLOCK_BASES": 16384})
    assert _device_words(dw, nt) == [[w for _, w in chunks] for chunks in ref]


def _golden(name):
    with open(os.path.join(HERE, name)) as fh:
        return fh.read().splitlines()


@pytest.mark.parametrize("task,query,name", [("megablast", "reads.fa", "megablast.tsv"),
                                             ("blastn", "reads.fa", "blastn.tsv"),
                                             ("blastn-short", "short.fa", "blastn-short.tsv")])
def test_device_search_equals_blastn(each_device, task, query, name):
    res = run_blastn(os.path.join(HERE, query), os.path.join(HERE, "genome.fa"),
                     BlastnOptions(task=task), device=_dev(each_device),
                     num_threads=2 if task == "blastn" else 1)   # the device's words on workers too
    assert tabular_lines(res) == _golden(name)


def test_device_cli_long_subject_chunks(each_device, tmp_path):
    """`clalign blastn --device -num_threads 3` on a 5.3 Mb subject that BLAST+ searches in two
    chunks (each piece on its own worker, the device's words handed to each)."""
    import sys

    from click.testing import CliRunner

    from clalign.cli import main

    sys.path.insert(0, HERE)
    from make_search_golden import long_subject

    long_subject(str(tmp_path))
    r = CliRunner().invoke(main, ["blastn", "-query", str(tmp_path / "long_reads.fa"), "-db",
                                  str(tmp_path / "long.fa"), "--device", _dev(each_device),
                                  "-num_threads", "3"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == _golden("long_megablast.tsv")


@pytest.mark.skipif(shutil.which("makeblastdb") is None, reason="BLAST+ makeblastdb not installed")
@pytest.mark.parametrize("task,name", [("megablast", "megablast.tsv"), ("blastn", "blastn.tsv")])
def test_device_makeblastdb_database_gives_the_fasta_output(each_device, tmp_path, task, name):
    shutil.copy(os.path.join(HERE, "genome.fa"), tmp_path)
    subprocess.run(["makeblastdb", "-in", "genome.fa", "-dbtype", "nucl", "-out", "gdb"],
                   cwd=tmp_path, check=True, stdout=subprocess.DEVNULL)
    res = run_blastn(os.path.join(HERE, "reads.fa"), str(tmp_path / "gdb"), BlastnOptions(task=task),
                     device=_dev(each_device))
    assert tabular_lines(res) == _golden(name)


@pytest.mark.parametrize("mode", ["cpu", "all", "all+dp"])
@pytest.mark.parametrize("task,query,name", [("megablast", "reads.fa", "megablast.tsv"),
                                             ("blastn", "reads.fa", "blastn.tsv"),
                                             ("blastn-short", "short.fa", "blastn-short.tsv")])
def test_blocks_split_where_pairs_exceed_the_largest_buffer(each_device, monkeypatch, mode, task,
                                                            query, name):
    """A device whose largest buffer holds ~600 pairs' output while a block of several segments
    runs (and any size for one segment): the blocks run as halves, in order (the device's
    ungapped stage entering the halves' segments again); the golden blastn 2.12 tables."""
    from clalign.runtime.tuning import trial

    calls, span = [], [0]
    real = NuclDeviceWords.run_block

    def counted(self, a, e, lane=None):
        calls.append((a, e))
        span[0] = e - a
        return real(self, a, e, lane)

    monkeypatch.setattr(NuclDeviceWords, "alloc_limit",
                        lambda self: 16 * 600 if span[0] > 1 else 1 << 40)
    monkeypatch.setattr(NuclDeviceWords, "run_block", counted)
    with trial("blastn_scan", {"UNGAPPED": mode.split("+")[0], "PRELIM": mode == "all+dp"}):
        res = run_blastn(os.path.join(HERE, query), os.path.join(HERE, "genome.fa"),
                         BlastnOptions(task=task), device=_dev(each_device), num_threads=2)
    assert tabular_lines(res) == _golden(name)
    assert calls[:3] == [(0, 2), (0, 1), (1, 2)]


def test_one_segment_over_the_largest_buffer_is_an_error(each_device, tmp_path, monkeypatch):
    from clalign.errors import DeviceError

    qf, db = _random_data(tmp_path, seed=5)
    nt, st = _setup(qf, db, "small", 6, 7)
    monkeypatch.setattr(NuclDeviceWords, "alloc_limit", lambda self: 16)
    dw = NuclDeviceWords(nt, st, _dev(each_device), {"BLOCK_BASES": 1 << 20}, pipeline=False)
    with pytest.raises(DeviceError, match="largest buffer"):
        _device_words(dw, nt)


def test_split_block_enters_its_segments_once(each_device, tmp_path, monkeypatch):
    """The device's ungapped stage follows BLAST+'s store clears over the segments: a block run
    as halves enters each segment as the whole block would, and leaves the store's chains
    where the whole block leaves them."""
    qf, db = _random_data(tmp_path, seed=9)
    nt, st = _setup(qf, db, "small", 8, 11)
    over = {"BLOCK_BASES": 1 << 20, "UNGAPPED": "all"}
    whole = NuclDeviceWords(nt, st, _dev(each_device), over, pipeline=False, hits=True)
    want = [whole.pairs(oid) for oid in range(len(nt))]
    real = NuclDeviceWords._start

    def too_large(self, a, e, lane):   # as a block that overflows: its work dropped, no hits
        job = real(self, a, e, lane)
        if e - a > 1:
            lane.kernel_times()
            job["halves"] = True
        return job

    monkeypatch.setattr(NuclDeviceWords, "_start", too_large)
    halves = NuclDeviceWords(nt, st, _dev(each_device), over, pipeline=False, hits=True)
    got = [halves.pairs(oid) for oid in range(len(nt))]
    assert np.array_equal(halves.ung.k, whole.ung.k)
    assert np.array_equal(halves.ung.resets(0, len(halves.seg[3])), whole.ung.resets(0, len(whole.seg[3])))
    for g, w in zip(got, want):
        assert len(g) == len(w) and all(np.array_equal(x, y) for x, y in zip(g, w))
