"""SEG (``-seg``, ``-soft_masking``), ``-task blastp-fast`` (compressed-alphabet lookup, word
sizes 6 and 7), other word sizes/thresholds/windows and the one-hit finder against BLAST+ 2.12's own output (golden
files made by ``data/blastp/make_seg_fast.sh``, provenance in ``data/blastp/README.md``):
rows identical and in order. The SEG rule itself against ``segmasker`` 2.12 on synthetic
low-complexity sequences; the lookup tables against brute-force references."""
import itertools
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.lookup import build_lookup
from clalign.blast.lookup_compressed import (build_compressed_lookup, build_word_lookup,
                                             compressed_alphabet, scan_db)
from clalign.blast.matrix import blast_matrix
from clalign.blast.options import blastp_options
from clalign.blast.seg import SegParams, parse_seg, seg_segments
from clalign.blast.ungapped_onehit import one_hit_reference
from clalign.data.alphabet import PROTEIN
from clalign.data.database import Database
from clalign.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "blastp"
FIELDS = ("qseqid sseqid pident length mismatch gapopen nident positive ppos gaps btop qseq sseq "
          "evalue bitscore score").split()
CODE = {c: i for i, c in enumerate(PROTEIN.letters)}


@pytest.fixture(scope="module")
def proteome():
    db = Database.from_fasta(ROOT / "data" / "proteome.faa.gz", "protein")
    return Database(db.residues, db.offsets, db.ids, db.descriptions, "protein")


SYNTH = "tests/data/blastp/synth_db.faa.gz"
CASES = {   # golden -> (query, database (None: the proteome without stops), options, columns)
    "seg_hard_fields": ("seg_queries.faa", None, dict(seg=SegParams()), FIELDS),
    "seg_10_1.8_2.1_soft_e1e-3": ("seg_queries.faa", None,
                                  dict(seg=SegParams(10, 1.8, 2.1), soft_masking=True, evalue=1e-3),
                                  None),
    "fast_proteome": ("fast_queries.faa", None, dict(task="blastp-fast"), None),
    "fast_synth": ("synth_queries.faa", SYNTH, dict(task="blastp-fast"), None),
    "fast_w7_blosum45_seg": ("synth_queries.faa", SYNTH,
                             dict(task="blastp-fast", word_size=7, matrix="BLOSUM45",
                                  seg=SegParams()), None),
    "ws2_synth": ("synth_queries.faa", SYNTH, dict(word_size=2), None),
    "ws4_t15_synth": ("synth_queries.faa", SYNTH, dict(word_size=4, threshold=15), None),
    "t13.5_a25_synth": ("synth_queries.faa", SYNTH, dict(threshold=13.5, window=25), None),
    "onehit_synth": ("synth_queries.faa", SYNTH, dict(window=0), None),
    "onehit_fast_synth": ("synth_queries.faa", SYNTH, dict(task="blastp-fast", window=0), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_blast_plus(name, proteome):
    query, db, kw, cols = CASES[name]
    opts = blastp_options(max_target_seqs=500, **kw)
    res = run_blastp(GOLD / query, proteome if db is None else ROOT / db, opts)
    got = list(tabular_lines(res, columns=cols) if cols else tabular_lines(res))
    assert got == (GOLD / f"{name}.tsv").read_text().splitlines()


def _fasta(path):
    name, out = None, []
    for line in Path(path).read_text().splitlines():
        if line.startswith(">"):
            name = line[1:].split()[0]
            out.append([name, ""])
        else:
            out[-1][1] += line.strip()
    return out


def _union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@pytest.mark.parametrize("params", ["12_2.2_2.5", "10_2.0_2.3", "8_1.5_1.9"])
def test_seg_equals_segmasker(params):
    """The first 200 records of the synthetic set (repeats, biased and X/U/B/* rich stretches)
    masked as segmasker masks them; window 10 exercises BLAST+'s tabulated logarithms."""
    w, lo, hi = params.split("_")
    gold, cur = {}, None
    for line in (GOLD / f"segmasker_{w}_{lo}_{hi}.txt").read_text().splitlines():
        if line.startswith(">"):
            cur = line[1:].split()[0]
            gold[cur] = []
        elif line.strip():
            a, b = line.split(" - ")
            gold[cur].append((int(a), int(b)))
    p = SegParams(int(w), float(lo), float(hi))
    for k, (name, seq) in enumerate(_fasta(GOLD / "seg_synthetic.faa")[:200]):
        codes = np.array([CODE[c] for c in seq], dtype=np.uint8)
        want = _union(gold.get(name, []))
        assert seg_segments(codes, p) == want, name
        if k < 40:      # the plain Python reference of the compiled loops too
            assert seg_segments(codes, p, compiled=False) == want, name


def test_seg_edges():
    assert seg_segments(np.zeros(0, dtype=np.uint8)) == []
    assert seg_segments(np.full(11, CODE["Q"], dtype=np.uint8)) == []      # shorter than a window
    assert seg_segments(np.full(12, CODE["Q"], dtype=np.uint8)) == [(0, 11)]
    assert seg_segments(np.full(40, CODE["X"], dtype=np.uint8)) == []      # all bogus: no entropy
    assert parse_seg("no") is None and parse_seg("yes") == SegParams()
    assert parse_seg("10 1.8 2.1") == SegParams(10, 1.8, 2.1)
    assert SegParams(12, 2.5, 2.2).checked().hicut == 2.5                  # hicut raised to locut
    assert SegParams(0, 0, -1).checked() == SegParams()                   # <= 0: defaults
    for bad in ("12 2.2", "true", "YES", "12.5 2.2 2.5", "x y z"):           # as blastp refuses
        with pytest.raises(InputError):
            parse_seg(bad)


def _brute_standard(q, m, t, w):
    """Every (word code, offset) by scoring all 28**w words; threshold 0: exact words only
    (BLAST+ builds no neighbourhood then)."""
    m = np.asarray(m[:28, :28], dtype=np.int32)
    grid = np.array(list(itertools.product(range(28), repeat=w)), dtype=np.int64)
    codes = (grid << (5 * np.arange(w - 1, -1, -1))).sum(1)
    out = set()
    for off in range(len(q) - w + 1):
        word = q[off:off + w]
        score = sum(m[word[p]][grid[:, p]] for p in range(w))
        hit = (score >= t) if t > 0 else np.zeros(len(grid), dtype=bool)
        hit |= (grid == np.asarray(word)).all(1)
        out |= {(int(c), off) for c in codes[hit]}
    return out


def test_standard_lookup_mask_and_word_sizes():
    """build_lookup (dense, W <= 3) and build_word_lookup (pruned, W 4-5) against brute force;
    the two agree on W = 3 with a real query and the proteome's letters."""
    rng = np.random.default_rng(3)
    m = blast_matrix("BLOSUM62")
    q = rng.integers(0, 28, size=30).astype(np.uint8)
    mask = np.zeros(30, dtype=bool)
    mask[7:12] = True
    for build, w, t, n in ((build_lookup, 2, 8, 30), (build_lookup, 2, 0, 30),
                           (build_word_lookup, 2, 9, 30), (build_word_lookup, 4, 24, 9)):
        lk = build(q[:n], m, t, w, mask=mask[:n])
        got = {(c, int(o)) for c in np.flatnonzero(lk.present) for o in lk.offsets(c)}
        want = {(c, o) for c, o in _brute_standard(q[:n].tolist(), m, t, w)
                if not mask[o:o + w].any()}
        assert got == want
    codes = np.frombuffer(b"MKVLAAGIVGLLLAAQPAMAEWQYDKSRCCHHNPPQRXBZUO*", dtype=np.uint8)
    codes = np.array([CODE[chr(c)] for c in codes], dtype=np.uint8)
    a, b = build_lookup(codes, m, 11, 3), build_word_lookup(codes, m, 11, 3)
    assert np.array_equal(a.starts, b.starts) and np.array_equal(a.qoffs, b.qoffs)


def test_compressed_lookup_against_brute_force():
    """Neighbours of 6-letter words over 15 groups, scores x100, with X/U words skipped."""
    alpha = compressed_alphabet("BLOSUM62", 6)
    assert alpha.size == 15 and alpha.table[CODE["X"]] < 0 and alpha.table[CODE["B"]] >= 0
    rng = np.random.default_rng(5)
    q = rng.integers(1, 23, size=12).astype(np.uint8)
    q[9] = CODE["X"]
    lk = build_compressed_lookup(q, "BLOSUM62", 21.0, 6)
    cm = alpha.matrix.astype(np.int32)
    nz = np.flatnonzero(np.diff(lk.starts))
    got = {(int(c), int(o)) for c in nz for o in lk.offsets(c)}
    want = set()
    for off in range(len(q) - 5):
        word = q[off:off + 6]
        g = alpha.table[word].astype(np.int64)
        if (g < 0).any():
            continue
        score = np.zeros((15,) * 6, dtype=np.int32)
        for p in range(6):   # axis p is the group of letter p
            score += cm[word[p]].reshape([15 if k == p else 1 for k in range(6)])
        hits = np.nonzero(score >= 2100)
        index = sum(hits[p].astype(np.int64) * 15 ** p for p in range(6))
        want |= {(int(c), off) for c in index} | {(int((g * 15 ** np.arange(6)).sum()), off)}
    assert got == want


def test_option_rules():
    fast = blastp_options(task="blastp-fast")
    assert (fast.word_size, fast.threshold, fast.compressed, fast.window) == (6, 21, True, 40)
    assert blastp_options(task="blastp-fast", matrix="BLOSUM45").threshold == 21   # not the matrix's 14
    assert blastp_options(word_size=7).compressed and blastp_options(word_size=7).threshold == 11
    for bad in (dict(task="blastp-fast", word_size=3), dict(word_size=1), dict(word_size=8)):
        with pytest.raises(InputError):
            blastp_options(**bad)


def test_one_hit_scan_against_reference():
    """The compiled one-hit finder (``scan_db`` with window 0) against the plain reference on
    random subjects with planted query copies, word sizes 2-4 (low thresholds: many hits)."""
    rng = np.random.default_rng(9)
    m = blast_matrix("BLOSUM62")
    q = rng.integers(1, 23, size=60).astype(np.uint8)
    subjects = [rng.integers(1, 23, size=n).astype(np.uint8) for n in (1, 5, 80, 200)]
    subjects[2][10:40] = q[5:35]
    subjects[3][150:190] = q[20:60]
    res = np.concatenate(subjects)
    offsets = np.r_[0, np.cumsum([len(x) for x in subjects])].astype(np.int64)
    ident = np.full(256, -1, dtype=np.int16)
    ident[:28] = np.arange(28)
    for w, t in ((2, 7), (3, 9), (4, 14)):
        lk = build_word_lookup(q, m, t, w) if w > 3 else build_lookup(q, m, t, w)
        rows = scan_db(q, m, lk.starts, lk.qoffs, ident, 32, False, res, offsets, 0,
                       len(subjects), 0, w, 12, 10)
        for k, sub in enumerate(subjects):
            hits = []
            for s_off in range(len(sub) - w + 1):
                code = 0
                for c in sub[s_off:s_off + w]:
                    code = (code << 5) | int(c)
                hits += [(s_off, int(o)) for o in lk.offsets(code)]
            want = one_hit_reference(hits, m, q, sub, w, 12, 10)
            got = sorted((tuple(r[1:]) for r in rows[rows[:, 0] == k].tolist()),
                         key=lambda h: (-h[0], h[2], -h[3], h[1]))
            assert got == want
            assert k < 2 or want     # the planted copies are found


def test_seg_on_device_path(tmp_path, proteome):
    """The device word-finder phases search the masked query too (PoCL in CI): the first four
    SEG queries give BLAST+'s rows."""
    recs = _fasta(GOLD / "seg_queries.faa")[:4]
    query = tmp_path / "q.faa"
    query.write_text("".join(f">{n}\n{s}\n" for n, s in recs))
    names = {n for n, _ in recs}
    want = [r for r in (GOLD / "seg_hard_fields.tsv").read_text().splitlines()
            if r.split("\t")[0] in names]
    got = list(tabular_lines(run_blastp(query, proteome, blastp_options(seg=SegParams()),
                                        device="0:0"), columns=FIELDS))
    assert got == want and want


def test_fully_masked_query_is_skipped_with_a_warning(tmp_path):
    """SEG masks the whole query: no ungapped statistics, so BLAST+ warns and reports nothing
    for it (blastp 2.12 prints "Could not calculate ungapped Karlin-Altschul parameters")."""
    query = tmp_path / "q.faa"
    query.write_text(">allq\n" + "Q" * 30 + "\n")
    warned = []
    res = list(run_blastp(query, ROOT / "tests/data/blastdb/prot.fa",
                          blastp_options(seg=SegParams(), evalue=1000),
                          warn=lambda q, m: warned.append((q, m))))
    assert [r.hits for r in res] == [[]] and warned and warned[0][0] == "allq"
