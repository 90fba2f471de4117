"""Mini-extension of lookup hits (na_ungapped.c rules) on planted word hits near byte,
context and subject boundaries."""
import numpy as np

from clalign.blast.nucl_extend import (choose_extend, compress_query, na_extend,
                                       na_extend_aligned, small_na_extend,
                                       small_na_extend_aligned, subject_base)


def _pack(b):
    b = np.concatenate([b, np.zeros((-len(b)) % 4, dtype=np.uint8)])
    return (b[0::4] << 6 | b[1::4] << 4 | b[2::4] << 2 | b[3::4]).astype(np.uint8)


def _case(rng, width, word, step):
    """A query (two contexts with a sentinel, some N) and a subject sharing a planted region."""
    q1 = rng.integers(0, 4, 60).astype(np.uint8)
    q2 = rng.integers(0, 4, 60).astype(np.uint8)
    q = np.concatenate([q1, [15], q2]).astype(np.uint8)
    q[rng.random(len(q)) < 0.03] = 14
    q[60] = 15
    sb = rng.integers(0, 4, int(rng.integers(20, 90))).astype(np.uint8)
    qa = int(rng.integers(0, len(q) - 10))
    sa = int(rng.integers(0, len(sb) - 5))
    n = int(min(len(q) - qa, len(sb) - sa, rng.integers(width, word + 6)))
    sb[sa:sa + n] = np.where(q[qa:qa + n] < 4, q[qa:qa + n], sb[sa:sa + n])
    hits = []
    for so in range(0, len(sb) - width + 1, step):
        qo = qa + so - sa
        if 0 <= qo <= len(q) - width and (q[qo:qo + width] == sb[so:so + width]).all():
            hits.append((qo, so))
    return q, sb, _pack(sb), hits


def test_generic_and_aligned_agree_and_give_exact_words():
    rng = np.random.default_rng(11)
    found = 0
    for _ in range(1000):
        width, word = (8, 12) if rng.random() < 0.5 else (12, 28)
        q, sb, s, hits = _case(rng, width, word, 4)
        for qo, so in hits:
            a = na_extend(q, s, qo, so, width, word, len(sb))
            b = na_extend_aligned(q, s, qo, so, width, word, len(sb))
            assert a == b
            if a is not None:
                found += 1
                qs, ss = a
                assert (q[qs:qs + word] == sb[ss:ss + word]).all()
                assert ss >= 0 and ss + word <= len(sb)
    assert found > 30


def test_generic_unaligned_widths():
    rng = np.random.default_rng(5)
    for _ in range(600):
        q, sb, s, hits = _case(rng, 11, 16, 6)
        for qo, so in hits:
            got = na_extend(q, s, qo, so, 11, 16, len(sb))
            # independent statement: extend left greedily (capped), then right (capped)
            qq = np.concatenate([[15], q, [15]])      # sentinels around the batch
            left = 0
            while left < min(5, so) and qq[qo - left] == sb[so - 1 - left]:
                left += 1
            need = 5 - left
            if need and so + 11 + need > len(sb):
                assert got is None
                continue
            right = 0
            while right < need and qq[qo + 12 + right] == sb[so + 11 + right]:
                right += 1
            assert got == (None if left + right < 5 else (qo - left, so - left))


def test_small_extenders_use_compressed_query_and_context_bounds():
    rng = np.random.default_rng(3)
    seen = 0
    for _ in range(800):
        width, word = 8, 11
        q, sb, s, hits = _case(rng, width, word, 1)
        cq = compress_query(q)
        for qo, so in hits:
            ctx = (0, 60) if qo < 60 else (61, 121)
            got = small_na_extend(cq, s, qo, so, width, word, len(sb), *ctx)
            if got is None:
                continue
            seen += 1
            qs, ss = got
            assert ctx[0] <= qs and qs + word <= ctx[1] and 0 <= ss and ss + word <= len(sb)
            assert all((int(q[qs + k]) & 3) == subject_base(s, ss + k) for k in range(word))
    assert seen > 20
    # aligned one-byte extender: width 8 on 4-aligned subject offsets, word <= width + 4
    for _ in range(800):
        q, sb, s, hits = _case(rng, 8, 11, 4)
        cq = compress_query(q)
        for qo, so in hits:
            ctx = (0, 60) if qo < 60 else (61, 121)
            got = small_na_extend_aligned(cq, s, qo, so, 8, 11, len(sb), *ctx, len(q))
            if got is not None:
                qs, ss = got
                assert ctx[0] <= qs and 0 <= ss
                assert all((int(q[qs + k]) & 3) == subject_base(s, ss + k) for k in range(11))


def test_compress_query_layout():
    q = np.array([0, 1, 2, 3, 14, 1], dtype=np.uint8)
    cq = compress_query(q)
    assert list(cq[:3]) == [0b00, 0b0001, 0b000110]
    assert cq[3] == 0b00011011 and cq[4] == 0b01101110 and cq[5] == 0b10111001
    assert cq[6] == 0b11100100 and cq[7] == 0b10010000 and cq[8] == 0b01000000


def test_choose_extend():
    assert choose_extend("megablast", 11, 28, 18) == "generic"
    assert choose_extend("megablast", 12, 28, 17) == "generic"
    assert choose_extend("megablast", 12, 28, 16) == "aligned"
    assert choose_extend("small", 8, 11, 4) == "small_aligned"
    assert choose_extend("small", 8, 28, 21) == "small"
    assert choose_extend("small", 11, 11, 1) == "direct"


def test_compiled_compress_query_equals_spec(monkeypatch):
    """nucl_words.compress_query_nb and compress_query_threads (the set-up's, cut into ranges on
    1-7 threads, more than steps included) equal compress_query for lengths 0-9 and 1000."""
    from clalign.blast import nucl_flat_nb
    from clalign.blast.nucl_words import compress_query_nb, compress_query_threads

    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1)   # threads on these small inputs
    rng = np.random.default_rng(2)
    for n in list(range(10)) + [1000]:
        q = rng.integers(0, 16, n).astype(np.uint8)
        want = compress_query(q)
        assert np.array_equal(compress_query_nb(q), want)
        for t in (1, 2, 3, 7):
            got = compress_query_threads(q, t)
            assert got.dtype == want.dtype and np.array_equal(got, want), (n, t)
