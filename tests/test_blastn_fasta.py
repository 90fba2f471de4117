"""``nucl_setup.read_queries``'s numpy split (``nucl_fasta.split_records``) against its line-by-line
reading: the same queries, or the same error, for every layout."""
import random

import numpy as np
import pytest

from clalign.blast import nucl_fasta
from clalign.blast.nucl_setup import read_queries
from clalign.errors import InputError


def _both(tmp_path, data: bytes):
    p = tmp_path / "q.fa"
    p.write_bytes(data)

    def read():
        try:
            return [(q.qid, q.title, q.text, q.codes.tolist(), q.codes.flags.writeable)
                    for q in read_queries(str(p))]
        except InputError as exc:
            return ("error", str(exc))

    fast = read()
    orig = nucl_fasta.split_records
    nucl_fasta.split_records = lambda d: None
    try:
        slow = read()
    finally:
        nucl_fasta.split_records = orig
    return fast, slow


CASES = [
    b">r1 first read\nACGT\n>r2\nacgtnRYU\n",
    b">r1\nACGT\nTTGA\n\n\n>r2 x\nGG\n",                 # several lines, blank lines
    b">r1\r\nACGT\r\n>r2\r\nGG\r\n",                       # CRLF
    b">r1\nAC GT\n>r2\n  GG  \n",                           # spaces in sequence lines
    b">r1\nAC\tGT\n",                                       # a tab: not a letter
    b">r1\nACGT\n>\nGG\n>   \nTT\n",                        # empty headers: Query_k
    b">r1\nACGT\n>r2\n>r3\nGG\n",                           # an empty record
    b"ACGT\n>r1\nGG\n",                                     # letters before the first header
    b"\n\n>r1\nGG",                                         # no final newline
    b"",                                                    # nothing
    b"\n  \n",                                              # no header
    b">r1\nACXT\n",                                         # a bad letter
    b">r1\nAC-T\n",                                         # a gap: refused
    b">r1 \xff\xfe title\nACGT\n",                          # a header that is not UTF-8
    b" >r1\nACGT\n",                                        # not a header: a bad letter
]


@pytest.mark.parametrize("data", CASES)
def test_split_equals_lines(tmp_path, data):
    fast, slow = _both(tmp_path, data)
    assert fast == slow


def test_split_random_files(tmp_path):
    rng = random.Random(3)
    for _ in range(40):
        recs = []
        for k in range(rng.randint(1, 30)):
            seq = "".join(rng.choice("ACGTacgtNRY") for _ in range(rng.randint(1, 300)))
            width = rng.choice([60, 80, 1000])
            lines = [seq[i:i + width] for i in range(0, len(seq), width)]
            head = rng.choice([f"q{k}", f"q{k} some title", ""])
            recs.append(f">{head}\n" + "\n".join(lines) + "\n" * rng.randint(1, 2))
        fast, slow = _both(tmp_path, "".join(recs).encode())
        assert fast == slow
        assert fast[0][4] is True          # writable codes, as numpy made them before


@pytest.mark.parametrize("data", [CASES[0], CASES[1], CASES[3], CASES[5], CASES[8]])
def test_flat_form(tmp_path, data):
    """Both readings keep every query's letters and codes contiguous (``Queries.flat``), each
    query's text and codes the slices of them; a changed list has none."""
    from clalign.blast.nucl_setup import flat_queries

    p = tmp_path / "q.fa"
    p.write_bytes(data)
    for split in (nucl_fasta.split_records, lambda d: None):
        orig = nucl_fasta.split_records
        nucl_fasta.split_records = split
        try:
            qs = read_queries(str(p))
        finally:
            nucl_fasta.split_records = orig
        letters, codes, starts = flat_queries(qs)
        assert starts.dtype == np.int64 and len(starts) == len(qs) + 1 and starts[0] == 0
        for k, q in enumerate(qs):
            assert letters[starts[k]:starts[k + 1]] == q.text
            assert np.shares_memory(codes, q.codes)
            assert np.array_equal(codes[starts[k]:starts[k + 1]], q.codes)
        assert flat_queries(list(qs)) is None and flat_queries(qs[:]) is None
        for change in (lambda x: x.append(x[0]), lambda x: x.reverse(), lambda x: x.__setitem__(0, x[-1]),
                       lambda x: x.pop(), lambda x: x.__iadd__([x[0]])):
            qs2 = read_queries(str(p))
            change(qs2)
            assert flat_queries(qs2) is None


def test_split_records_layout():
    heads, letters, starts = nucl_fasta.split_records(b">a x\nAC\nGT\n\n>b\nT\n")
    assert heads == [b"a x", b"b"] and letters == b"ACGTT" and starts == [0, 4, 5]
    assert nucl_fasta.split_records(b">a\n>b\nT\n") is None
    assert np.array_equal(np.frombuffer(letters, np.uint8)[starts[0]:starts[1]],
                          np.frombuffer(b"ACGT", np.uint8))
