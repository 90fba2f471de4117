import numpy as np
import pytest

from clalign.data import PROTEIN, STANDARD_MATRICES, get_matrix
from clalign.errors import InputError

CANON = "ARNDCQEGHILKMFPSTWYVBZX*"


@pytest.mark.parametrize("name", STANDARD_MATRICES)
def test_standard_matrix_equals_scoring_matrices(name):
    from scoring_matrices import ScoringMatrix

    ref = ScoringMatrix.from_name(name)
    m = get_matrix(name.lower())
    assert m.name == name
    assert m.scores.dtype == np.int32 and m.scores.shape == (28, 28)
    for a in CANON:
        row = ref[a]
        for j, b in enumerate(ref.alphabet):
            assert m.scores[PROTEIN.encode(a)[0], PROTEIN.encode(b)[0]] == row[j], (a, b)
    assert np.array_equal(m.scores, m.scores.T)
    assert m.min == int(m.scores.min()) == int(ref.min()) and m.max == int(m.scores.max()) == int(ref.max())


@pytest.mark.parametrize("name", STANDARD_MATRICES)
def test_blast_fill_rules(name):
    m = get_matrix(name)
    s = m.scores
    code = {ch: i for i, ch in enumerate(PROTEIN.letters)}
    x, u, o, j, gap = code["X"], code["U"], code["O"], code["J"], code["-"]
    # U and O score like X (blast_stat.c copies the X row/column into them)
    for c in (u, o):
        assert np.array_equal(s[c, :], s[x, :]) and np.array_equal(s[:, c], s[:, x])
    # J is absent from NCBI's matrices: the default score (the minimum) everywhere, J/J included
    assert (s[j, :] == m.min).all() and (s[:, j] == m.min).all()
    assert (s[gap, :] == m.min).all() and (s[:, gap] == m.min).all()


def test_blosum62_spot_values():
    m = get_matrix("BLOSUM62")
    assert (m.score("W", "W"), m.score("A", "R"), m.score("*", "*"), m.score("*", "A")) == (11, -1, 1, -4)
    assert m.score("U", "C") == m.score("X", "C") == -2
    assert m.scores.flags.writeable is False
    assert get_matrix("blosum62") is m  # cached


def test_custom_ncbi_matrix_file(tmp_path):
    path = tmp_path / "MYMAT"
    path.write_text(
        "# a comment line\n"
        "   A  C  X  *  J\n"
        "A  5 -2 -1 -9  0   # trailing comment\n"
        "\n"
        "C -2  7 -1 -9  1\n"
        "X -1 -1 -1 -9  0\n"
        "* -9 -9 -9  1 -9\n"
        "J  0  1  0 -9  2.5\n"
    )
    m = get_matrix(str(path))
    assert m.name == "MYMAT"
    assert (m.score("A", "A"), m.score("C", "A"), m.score("J", "J"), m.score("J", "C")) == (5, -2, 3, 1)
    assert m.score("U", "A") == m.score("X", "A") == -1 and m.score("O", "C") == -1
    # letters the file lacks get its minimum
    assert m.score("W", "W") == -9 and m.score("-", "A") == -9
    assert (m.min, m.max) == (-9, 7)


@pytest.mark.parametrize("text,line,frag", [
    ("  A C\nA 1 2\nC 2\n", 3, "has 1 scores, expected 2"),
    ("  A C\nA 1 x\nC 2 1\n", 2, "not a number"),
    ("  A 1\nA 1 2\n", 1, "not a protein letter"),
    ("  A C\nA 1 2\nQ% 1 1\n", 3, "row label"),
    ("  A C\nA 1 2\nA 1 2\n", 3, "repeated"),
])
def test_custom_matrix_errors(tmp_path, text, line, frag):
    path = tmp_path / "BAD"
    path.write_text(text)
    with pytest.raises(InputError) as ei:
        get_matrix(str(path))
    assert str(ei.value).startswith(f"{path}:{line}: ") and frag in str(ei.value)


def test_unknown_matrix():
    with pytest.raises(InputError, match="unknown matrix 'BLOSUM99'"):
        get_matrix("BLOSUM99")
