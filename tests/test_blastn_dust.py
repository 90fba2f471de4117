"""DUST as BLAST+ 2.12 blastn masks queries (golden masks from blastn, see data/blastn/README.md)."""
import os

import numpy as np
import pytest

from clalign.blast.nucl_dust import dust_intervals, dust_mask

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn")


def _golden():
    seqs = {}
    name = None
    with open(os.path.join(HERE, "dust_queries.fa")) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                name = line[1:]
                seqs[name] = ""
            else:
                seqs[name] += line
    out = []
    with open(os.path.join(HERE, "dust_blastn.txt")) as f:
        for line in f:
            name, _, ivs = line.rstrip("\n").partition("\t")
            if ivs == "*":
                continue
            want = [tuple(map(int, x.split("-"))) for x in ivs.split()]
            out.append((name, seqs[name], want))
    return out


def test_dust_matches_blastn():
    bad = [(name, dust_intervals(s), want) for name, s, want in _golden()
           if dust_intervals(s) != want]
    assert not bad, bad[:3]


def test_dust_edge_cases():
    assert dust_intervals("") == []
    assert dust_intervals("ACG") == []
    assert dust_intervals("A" * 100) == [(0, 99)]
    assert dust_intervals("acgt" * 3 + "a" * 50) == dust_intervals("ACGT" * 3 + "A" * 50)
    # R, Y... read as A; N draws from the generator (never like a run of A's)
    assert dust_intervals("ACGTTGCA" + "R" * 50 + "GTTCAGACGATC") == [(7, 57)]
    assert dust_intervals("ACGTTGCA" + "N" * 50 + "GTTCAGACGATC") == []
    m = dust_mask("GATC" * 5 + "A" * 40 + "GATTACA")
    assert m.dtype == np.bool_ and m.sum() > 30


def test_dust_parameters_checked():
    with pytest.raises(ValueError):
        dust_intervals("ACGT", level=1)
    with pytest.raises(ValueError):
        dust_intervals("ACGT", window=65)


def test_compiled_dust_equals_reference():
    from clalign.blast.nucl_dust_nb import dust_intervals_fast
    for name, s, want in _golden():
        assert dust_intervals_fast(s) == want, name
    rng = np.random.default_rng(4)
    for _ in range(20):
        parts = [rng.choice(list("ACGTN")) * int(rng.integers(1, 90)) if rng.random() < 0.3 else
                 "".join(rng.choice(list("ACGTNR"), int(rng.integers(1, 120)))) for _ in range(6)]
        s = "".join(parts)
        assert dust_intervals_fast(s) == dust_intervals(s), s


def _read_pairs(fa, txt):
    seqs, name = {}, None
    for line in open(os.path.join(HERE, fa)):
        line = line.strip()
        if line.startswith(">"):
            name = line[1:]
            seqs[name] = ""
        else:
            seqs[name] += line
    for line in open(os.path.join(HERE, txt)):
        name, _, ivs = line.rstrip("\n").partition("\t")
        yield name, seqs[name], [tuple(map(int, x.split("-"))) for x in ivs.split()]


def test_lcase_masking_with_dust_matches_blastn():
    from clalign.blast.nucl_dust import query_mask_intervals
    n = 0
    for lcase, txt in ((True, "lcase_blastn_lc.txt"), (False, "lcase_blastn_nolc.txt")):
        for name, s, want in _read_pairs("lcase_queries.fa", txt):
            got = query_mask_intervals(s, dust=True, lcase=lcase)
            if not want and got == [(0, len(s) - 1)]:
                continue          # masked whole: blastn drops the query and writes no mask
            assert got == want, (lcase, name)
            n += 1
    assert n > 100


def test_query_masks_batched_equal_per_query():
    """One compiled DUST call over a batch (``query_masks``) gives each query's own masks."""
    from clalign.blast.nucl_dust import query_mask_intervals, query_masks
    rng = np.random.default_rng(5)
    texts = [name_seq[1].encode() for name_seq in _golden()][:10]
    for _ in range(20):
        parts = [rng.choice(list("ACGTNacgt")) * int(rng.integers(1, 90)) if rng.random() < 0.3 else
                 "".join(rng.choice(list("ACGTNRacgt"), int(rng.integers(1, 120)))) for _ in range(4)]
        texts.append("".join(parts).encode())
    texts.append(b"")
    for lcase in (False, True):
        for dust in (False, True):
            assert query_masks(texts, dust=dust, lcase=lcase) == [
                query_mask_intervals(t, dust=dust, lcase=lcase) for t in texts]
    for threads in (2, 3, 40):   # groups of queries on threads: the same masks, in order
        assert query_masks(texts, threads=threads) == query_masks(texts)
    assert query_masks([], threads=4) == []


def test_mask_arrays_merge_where_needed(monkeypatch):
    """query_mask_arrays merges a query's DUST intervals when they are out of order, overlap or
    abut (never seen from DUST: its linker joins them), as merge_intervals does."""
    from clalign.blast import nucl_dust_nb
    from clalign.blast.nucl_dust import lowercase_intervals, merge_intervals, query_mask_arrays

    given = [[(5, 9), (1, 3)], [], [(0, 2), (3, 7)], [(4, 6), (5, 20), (30, 31)], [(2, 4)], [(9, 9), (2, 1)]]
    ivs = np.array([iv for g in given for iv in g], dtype=np.int64)
    counts = np.array([len(g) for g in given], dtype=np.int64)
    monkeypatch.setattr(nucl_dust_nb, "dust_arrays", lambda text, starts, threads=1: (ivs, counts))
    starts = np.arange(len(given) + 1, dtype=np.int64) * 40
    for lcase in (False, True):
        text = b"ACGTacgt" * (len(given) * 5) if lcase else b"A" * (len(given) * 40)
        got = query_mask_arrays(text, starts, lcase=lcase)
        low = [lowercase_intervals(text[s:e]) if lcase else [] for s, e in zip(starts[:-1], starts[1:])]
        assert [got[k] for k in range(len(given))] == [merge_intervals(l + g) for l, g in zip(low, given)]


def test_dust_many_from_letters_equals_from_codes():
    """_dust_many_text (letters, codes made in the compiled call) = _dust_many (codes)."""
    from clalign.blast.nucl_dust import DUST_LEVEL, DUST_LINKER, DUST_WINDOW, dust_codes
    from clalign.blast.nucl_dust_nb import _LUT64, _STATE0, _dust_many, _dust_many_text
    rng = np.random.default_rng(6)
    seqs = [name_seq[1].encode() for name_seq in _golden()][:10]
    seqs += ["".join(rng.choice(list("ACGTNRacgtn"), int(rng.integers(0, 300)))).encode()
             for _ in range(30)]
    text = np.frombuffer(b"".join(seqs), dtype=np.uint8)
    starts = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
    args = (DUST_LEVEL, DUST_WINDOW, DUST_LINKER, _STATE0)
    got = _dust_many_text(text, starts, _LUT64, *args)
    want = _dust_many(dust_codes(text).astype(np.int64), starts, *args)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(got[0]) > 5


def _microsatellite(rng):
    """Repeats of 1-6 base units with point mutations, between random stretches: the case
    where the perfect-interval list holds up to a window of entries."""
    parts = []
    for _ in range(int(rng.integers(2, 8))):
        r = rng.random()
        if r < 0.45:
            s = list("".join(rng.choice(list("ACGT"), int(rng.integers(1, 7)))) * int(rng.integers(3, 60)))
            for _ in range(int(rng.integers(0, 4))):
                s[int(rng.integers(0, len(s)))] = rng.choice(list("ACGTN"))
            parts.append("".join(s))
        elif r < 0.55:
            parts.append(rng.choice(list("ACGTN")) * int(rng.integers(1, 120)))
        else:
            parts.append("".join(rng.choice(list("ACGTNR"), int(rng.integers(1, 200)))))
    return "".join(parts)


def test_compiled_dust_equals_reference_on_microsatellites():
    """The compiled list updates (several insertions per walk, the list packed or grown) give
    the reference's intervals on repeat-rich sequences, on long repeats that slide the list
    through many times its first size, and on runs of them that make it pack."""
    from clalign.blast.nucl_dust_nb import dust_intervals_fast
    rng = np.random.default_rng(11)
    seqs = [_microsatellite(rng) for _ in range(60)]
    long = list("CAG" * 3000)
    for i in rng.integers(0, len(long), 40):
        long[int(i)] = rng.choice(list("ACGT"))
    seqs.append("".join(long))
    seqs.append("CA" * 5000 + "".join(rng.choice(list("ACGT"), 300)) + "TTAGGG" * 800)
    rng = np.random.default_rng(5)
    for _ in range(6):    # long repeats in a row: the list's end reached with few live entries (packed)
        seqs.append("".join("".join(rng.choice(list("ACGT"), int(rng.integers(1, 5)))) * int(rng.integers(100, 600))
                            + "".join(rng.choice(list("ACGT"), int(rng.integers(50, 300)))) for _ in range(12)))
    for s in seqs:
        assert dust_intervals_fast(s) == dust_intervals(s), s[:80]
