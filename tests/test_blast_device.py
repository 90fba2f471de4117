"""BLASTP device phases against the compiled CPU path (itself checked against the plain-Python
rule in test_blast_ungapped.py) and, for counts, against the plain rule directly: the same
initial HSPs (subject, score, extents, hit offsets) for real queries x the bundled proteome and
for planted homologs, long repetitive subjects and subjects shorter than a word; the default
chunk kernel with its state in local and in global memory, presence bits local and global, hit
buffers small enough to need many rounds per chunk, staged (BALANCE) and direct binning, tasks
of one subject or many, several blocks; the earlier subject/sorted kernels too."""
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import read_queries
from clalign.blast.engine import Subjects, initial_hsps, setup_query
from clalign.blast.options import blastp_options
from clalign.blast.ungapped import extend_two_hit, word_hits
from clalign.data.database import Database

cl = pytest.importorskip("pyopencl")
from clalign.blast.device import DeviceUngapped  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: chunk kernel variants: state and presence bits in local/global memory, one hit per round
#: or many, tasks of one subject or many
CHUNK_LOCAL = {"KERNEL": "chunk", "WG": 64, "CAP_MAX": 64, "PV_LOCAL": True, "UNROLL": 2}
CHUNK_GLOBAL = {"KERNEL": "chunk", "WG": 32, "STATE": "global", "PV_LOCAL": False, "CAP_MAX": 32,
                "TASK": 256, "BALANCE": False}
#: each bin's owner extends its own hits in turn (the queued, work-group-wide extensions are the
#: default: DEFER)
CHUNK_OWNER = {"KERNEL": "chunk", "WG": 64, "CAP_MAX": 128, "DEFER": False}
#: one queued extension per owner and pass, and eight (the default is between: QUEUE); the
#: extensions' loops a residue per turn and eight (UNROLL)
CHUNK_Q1 = {"KERNEL": "chunk", "WG": 64, "CAP_MAX": 128, "QUEUE": 1, "UNROLL": 1}
CHUNK_Q8 = {"KERNEL": "chunk", "WG": 32, "CAP_MAX": 256, "QUEUE": 8, "TASK": 256, "UNROLL": 8}


@pytest.fixture(scope="module")
def proteome():
    return Subjects.from_database(Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein"))


def _same(dev, subjects, codes, opts):
    qs = setup_query(codes, subjects, opts)
    want = initial_hsps(qs, subjects)
    got = dev.initial_hsps(qs)
    assert got.shape == want.shape and np.array_equal(got, want)
    return len(want)


def _counts(qs, subjects):
    """(word hits, two-hit extensions) by the plain rule (``ungapped.two_hit_reference``'s loop)."""
    hits = ext = 0
    w, window = qs.opts.word_size, qs.opts.window
    for k in range(len(subjects.ids)):
        s = subjects.residues[subjects.offsets[k]:subjects.offsets[k + 1]]
        last_hit, flag = {}, {}
        for s_off, q_off in word_hits(qs.lookup, s):
            hits += 1
            d = q_off - s_off
            if flag.get(d, False):
                if s_off >= last_hit[d]:
                    last_hit[d], flag[d] = s_off, False
                continue
            diff = s_off - last_hit.get(d, s_off - window)
            if diff >= window:
                last_hit[d] = s_off
                continue
            if diff < w:
                continue
            ext += 1
            _, _, _, _, right, s_last = extend_two_hit(qs.matrix, qs.codes, s, s_off - diff + w,
                                                       s_off, q_off, qs.xdrop_ungapped, w)
            flag[d] = right
            last_hit[d] = s_last - (w - 1) if right else s_off
    return hits, ext


@pytest.mark.parametrize("override", [{"KERNEL": "chunk"}, CHUNK_GLOBAL, CHUNK_OWNER, CHUNK_Q1,
                                      CHUNK_Q8,
                                      {"KERNEL": "sorted", "WG": 128, "MATRIX_LOCAL": True},
                                      {"KERNEL": "subject", "WG": 32, "MATRIX_LOCAL": False,
                                       "SPLIT": 100}])
def test_real_queries(proteome, override):
    dev = DeviceUngapped(proteome, override=override, block_residues=200_000)
    assert len(dev.blocks) > 2
    n = sum(_same(dev, proteome, codes, blastp_options()) for _, _, codes in
            read_queries(ROOT / "data" / "queries.faa")[2:])
    assert n > 50


def _planted():
    rng = np.random.default_rng(5)
    q = rng.integers(1, 23, size=257).astype(np.uint8)
    seqs = [rng.integers(1, 23, size=n).astype(np.uint8) for n in (1, 2, 3, 4, 63, 64, 65, 127, 128, 129)]
    for ident in (0.4, 0.7, 0.95):
        s = q.copy()
        flip = rng.random(len(s)) > ident
        s[flip] = rng.integers(1, 23, size=int(flip.sum()))
        seqs.append(np.concatenate([rng.integers(1, 23, size=61).astype(np.uint8), s]))
    # a long subject of repeated copies (diagonal slots reused many times, dense chunks)
    seqs.append(np.tile(q[:90], 30))
    return q, seqs


def _subjects(seqs):
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in seqs])
    return Subjects(np.concatenate(seqs), offsets, [f"s{i}" for i in range(len(seqs))])


def test_planted_and_boundaries():
    q, seqs = _planted()
    subjects = _subjects(seqs)
    variants = [CHUNK_LOCAL, CHUNK_GLOBAL, CHUNK_Q1, CHUNK_Q8,
                {"KERNEL": "sorted", "WG": 32}, {"KERNEL": "subject", "WG": 32, "SPLIT": 64}]
    for override in variants:
        for block in (64, 300, 1 << 20):
            dev = DeviceUngapped(subjects, override=override, block_residues=block)
            assert _same(dev, subjects, q, blastp_options(evalue=1000)) > 0


@pytest.mark.parametrize("override", [CHUNK_LOCAL, CHUNK_GLOBAL, CHUNK_Q8])
def test_chunk_counts_match_plain_rule(override):
    """Word hits and two-hit extensions counted by the kernel = the plain rule's, including a
    short query against long repetitive subjects (many slot reuses, dense chunks) and a
    low-complexity pair (every word hits every query offset)."""
    q, seqs = _planted()
    rng = np.random.default_rng(7)
    short = q[30:80]
    poly = np.full(40, 1, dtype=np.uint8)
    seqs = seqs + [np.tile(short, 12), np.full(300, 1, dtype=np.uint8),
                   rng.integers(1, 23, size=700).astype(np.uint8)]
    subjects = _subjects(seqs)
    for codes in (q, short, poly):
        qs = setup_query(codes, subjects, blastp_options(evalue=1000))
        dev = DeviceUngapped(subjects, override=override, block_residues=900)
        got = dev.initial_hsps(qs)
        assert np.array_equal(got, initial_hsps(qs, subjects))
        hits, ext = _counts(qs, subjects)
        assert (dev.times.counts["hits"], dev.times.counts["extensions"]) == (hits, ext)
        assert hits > 0


def test_unknown_parameter():
    from clalign.errors import ParameterError

    q, seqs = _planted()
    with pytest.raises(ParameterError, match="NOPE"):
        DeviceUngapped(_subjects(seqs), override={"NOPE": 1})


def test_chunk_outfmt6_equals_golden(monkeypatch, tmp_path):
    """The whole blastp search through the chunk kernel writes BLAST+'s rows (first three
    queries x the proteome, golden file of test_blastp_cli)."""
    from clalign.blast import blastp as bp
    from clalign.blast import device as dmod

    class Chunk(dmod.DeviceUngapped):
        def __init__(self, subjects, device=None, stream=None):
            super().__init__(subjects, device, override={"KERNEL": "chunk", "WG": 64}, stream=stream)
            assert self.kernel == "chunk"

    monkeypatch.setattr(dmod, "DeviceUngapped", Chunk)
    recs = (ROOT / "data" / "queries.faa").read_text().split(">")[1:4]
    query = tmp_path / "q.faa"
    query.write_text("".join(">" + r for r in recs))
    ids = [r.split()[0] for r in recs]
    got = bp.tabular_lines(bp.run_blastp(query, ROOT / "data" / "proteome.faa.gz",
                                         blastp_options(), device=cl.get_platforms()[0].get_devices()[0]))
    want = [line for line in (ROOT / "tests/data/blastp/queries_proteome.tsv").read_text().splitlines()
            if line.split("\t")[0] in ids]
    assert len(want) > 10 and got == want


def test_chunk_output_regrowth_and_tiny_query(monkeypatch):
    """A launch finding more initial HSPs than reserved is repeated with room for all; a query
    shorter than a word has no hits."""
    from clalign.blast import device_chunk

    q, seqs = _planted()
    subjects = _subjects(seqs)
    monkeypatch.setattr(device_chunk, "MIN_OUT_ROWS", 1)
    dev = DeviceUngapped(subjects, override=CHUNK_LOCAL)
    assert _same(dev, subjects, q, blastp_options(evalue=1000)) > max(dev.blocks[0].n >> 8, 1)
    qs = setup_query(q[:2], subjects, blastp_options(evalue=1000))
    assert dev.initial_hsps(qs).shape == (0, 7)


def test_bench_blast_device_tiny(capsys, tmp_path):
    """tools/bench_blast_device.py: the variants agree with each other and with the CPU path."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import bench_blast_device

    res = bench_blast_device.main(["-n", "150", "--queries", str(ROOT / "data" / "queries.faa"),
                                   "--variants", '[{"KERNEL": "chunk", "WG": 64}, {"KERNEL": "subject"}]',
                                   "--cpu-check", "2", "--results", str(tmp_path / "r.json")])
    assert [r["same_rows_as_first"] for r in res] == [True, True]
    assert res[0]["hits"] > 0 and res[0]["init_hsps"] == res[1]["init_hsps"]
    assert '"identical_to_cpu": true' in capsys.readouterr().out
