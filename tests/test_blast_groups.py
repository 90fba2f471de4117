"""blast.groups.row_groups: the (first row, group) np.unique gives for rows compared by bytes,
with and without hash collisions."""
import numpy as np
import pytest

from clalign.blast import groups


def _want(cols):
    rows = np.ascontiguousarray(np.stack([np.ascontiguousarray(c).view(np.int64) for c in cols], axis=1))
    _, first, inv = np.unique(rows.view(np.dtype((np.void, rows.shape[1] * 8))).reshape(-1),
                              return_index=True, return_inverse=True)
    return first, np.asarray(inv).reshape(-1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mix", [None, 0, 1])     # 0 and 1: hashes collide, the rows' own unique
def test_row_groups_equal_unique(seed, mix, monkeypatch):
    if mix is not None:
        monkeypatch.setattr(groups, "_MIX", np.int64(mix))
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 3000)), int(rng.integers(1, 6))
    base = rng.random((int(rng.integers(1, 12)), k))
    base[0, 0] = 0.0
    f = base[rng.integers(0, len(base), n)]              # few distinct float rows, repeated
    ints = rng.integers(-3, 3, (n, k)) * (10 ** 15 if seed % 2 else 1)
    for cols in ([f[:, j] for j in range(k)], [ints[:, j] for j in range(k)],
                 [f[:, 0], ints[:, 0]]):
        first, inv = groups.row_groups(cols)
        wf, wi = _want(cols)
        assert np.array_equal(first, wf) and np.array_equal(inv, wi)
