import numpy as np
import pytest

from clalign.data import DNA, PROTEIN, alphabet_by_name
from clalign.errors import InputError


def test_protein_codes_are_ncbistdaa():
    assert PROTEIN.letters == "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"
    assert PROTEIN.size == 28
    expect = {"-": 0, "A": 1, "B": 2, "C": 3, "X": 21, "Y": 22, "Z": 23, "U": 24, "*": 25, "O": 26, "J": 27}
    for ch, code in expect.items():
        assert PROTEIN.encode(ch)[0] == code
    codes = PROTEIN.encode(PROTEIN.letters)
    assert codes.dtype == np.uint8 and codes.tolist() == list(range(28))


def test_protein_lowercase_and_roundtrip():
    assert PROTEIN.decode(PROTEIN.encode("mkvlU*oj")) == "MKVLU*OJ"


@pytest.mark.parametrize("bad", ["AC1D", "AC D", "ACD.", "é", "AC€"])
def test_protein_illegal_letter(bad):
    with pytest.raises(InputError, match="illegal character"):
        PROTEIN.encode(bad)


def test_dna_codes_and_u_as_t():
    assert DNA.encode("ACGT").tolist() == [0, 1, 2, 3]
    assert DNA.decode(DNA.encode("acgu")) == "ACGT"
    assert DNA.size == 16 and set("NRYKMSWBDHV-") <= set(DNA.letters)
    with pytest.raises(InputError):
        DNA.encode("ACGE")


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 7, 8, 9, 63, 64, 65])
def test_dna_pack2_roundtrip_random(n):
    rng = np.random.default_rng(n)
    codes = rng.integers(0, 4, n).astype(np.uint8)
    if n:
        amb = rng.random(n) < 0.2
        codes[amb] = rng.integers(4, 16, int(amb.sum()))
    packed, table = DNA.pack2(codes)
    assert packed.dtype == np.uint8 and packed.size == (n + 3) // 4
    assert np.array_equal(DNA.unpack2(packed, n, table), codes)


def test_dna_pack2_layout_and_runs():
    codes = DNA.encode("ACGTNNNNGRA")
    packed, table = DNA.pack2(codes)
    # NCBI2na order: first base in the high bits; ambiguous bases hold A (0) in the packed bytes
    assert packed[0] == 0b00011011 and packed[1] == 0 and packed[2] == (2 << 6) | (0 << 4) | (0 << 2)
    assert table.tolist() == [[4, 4, DNA.letters.index("N")], [9, 1, DNA.letters.index("R")]]
    assert DNA.decode(DNA.unpack2(packed, codes.size, table)) == "ACGTNNNNGRA"
    # without the table the ambiguity is lost (as in a bare NCBI2na stream)
    assert DNA.decode(DNA.unpack2(packed, codes.size)) == "ACGTAAAAGAA"


def test_alphabet_by_name():
    assert alphabet_by_name("prot") is PROTEIN and alphabet_by_name("nucl") is DNA
    with pytest.raises(InputError):
        alphabet_by_name("rna")
