"""Nucleotide Karlin-Altschul parameters against the values blastn 2.12 prints (data/blastn/README.md)."""
import pytest

from clalign.stats.karlin import KarlinParams
from clalign.stats.nucl import nucl_gapped_params, reduce_pair, round_score

# blastn -task T -reward R -penalty P -gapopen O -gapextend E: "Gapped Lambda K H" footer
BLASTN_GAPPED = [
    (1, -2, 0, 0, 1.28, 0.460, 0.850), (1, -2, 2, 1, 1.29, 0.490, 0.920),
    (2, -3, 0, 0, 0.550, 0.210, 0.460), (2, -3, 5, 2, 0.625, 0.410, 0.780),
    (1, -3, 2, 2, 1.37, 0.700, 1.20), (2, -4, 0, 0, 0.640, 0.460, 0.850),
    (2, -4, 4, 4, 0.665, 0.620, 1.10), (1, -5, 0, 0, 1.39, 0.747, 1.38),
    (4, -5, 0, 0, 0.220, 0.0610, 0.220), (1, -1, 3, 2, 1.09, 0.310, 0.550),
    (5, -4, 10, 6, 0.163, 0.0680, 0.160), (3, -4, 6, 3, 0.389, 0.250, 0.560),
    (2, -6, 0, 0, 0.687, 0.711, 1.31), (1, -3, 1, 1, 1.21, 0.340, 0.710),
]


@pytest.mark.parametrize("reward,penalty,go,ge,lam,k,h", BLASTN_GAPPED)
def test_gapped_tables_match_blastn(reward, penalty, go, ge, lam, k, h):
    p = nucl_gapped_params(reward, penalty, go, ge).karlin
    assert (round(p.lam, 3), round(p.K, 4), round(p.H, 3)) == (
        pytest.approx(lam, abs=6e-4), pytest.approx(k, abs=6e-5), pytest.approx(h, abs=6e-3))


def test_infinite_gap_costs_take_ungapped_block():
    ung = KarlinParams(1.33, 0.621, 1.12)   # blastn -reward 1 -penalty -2 -gapopen 5 -gapextend 5
    got = nucl_gapped_params(1, -2, 5, 5, ung)
    assert got.karlin == ung and got.alpha == pytest.approx(1.33 / 1.12) and got.beta == 0
    assert nucl_gapped_params(2, -3, 6, 4, ung).beta == -2


def test_alpha_beta_and_round_down():
    g = nucl_gapped_params(2, -4, 4, 4)       # 1/-2 row (2, 2, ..., alpha 1.2, beta 0) scaled by 2
    assert g.alpha == pytest.approx(0.6) and g.beta == 0 and not g.round_down
    for r, p in ((2, -3), (2, -5), (2, -7), (4, -6), (3, -4)):
        assert nucl_gapped_params(r, p, *_some_costs(r, p)).round_down
    g = nucl_gapped_params(2, -3, 5, 2)
    assert round_score(27, g) == 26 and round_score(28, g) == 28
    assert reduce_pair(4, -6) == (2, 3, 2)


def _some_costs(r, p):
    from clalign.stats.nucl import nucl_rows
    linear, rows, _, _ = nucl_rows(r, p)
    return (0, 0) if linear else rows[0][:2]


def test_unsupported_pairs_and_costs():
    with pytest.raises(ValueError, match="not supported"):
        nucl_gapped_params(1, -6, 0, 0)
    with pytest.raises(ValueError, match="Gap existence"):
        nucl_gapped_params(1, -2, 1, 0)
    with pytest.raises(ValueError):
        nucl_gapped_params(1, 2, 0, 0)


def test_evalues_and_bits_match_blastn_outfmt6():
    """Raw score -> E-value and bit score text exactly as blastn 2.12 printed them
    (data/blastn/stats, README)."""
    import glob
    import os

    from clalign.output.tabular import format_bitscore, format_evalue
    from clalign.stats.nucl import nucl_evalue_bits, nucl_search_space
    files = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "data", "blastn", "stats",
                                          "st_*.tsv")))
    assert len(files) == 6
    n = 0
    for f in files:
        _, _, r, p, go, ge = os.path.basename(f)[:-4].split("_")
        par = nucl_gapped_params(int(r), int(p), int(go), int(ge))
        for line in open(f):
            _, sc, ev, bs, ql, sl = line.split()
            _, sp = nucl_search_space(par, int(ql), int(sl), 1)
            e, b = nucl_evalue_bits(int(sc), par, sp)
            assert (format_evalue(e), format_bitscore(b)) == (ev, bs), (f, line)
            n += 1
    assert n > 70
