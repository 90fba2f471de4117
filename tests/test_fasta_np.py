"""The numpy FASTA scan (clalign.data.fasta_np) against the per-record reader: on files of its
common case it must answer, with the same arrays; on any other file it hands over (the readers'
shared rules are tested in test_fasta.py, which runs every test with each reader)."""
import numpy as np

from clalign.errors import InputError

_HEADS = [">", ">x", ">x y", ">id de sc", ">sp|P1|A_B desc OS=x", ">a*b c", ">a\x01b c d"]
_LINES = ["ACGT", "acgu", "NNNN", "MKVLW", "mkvlwy", "M*K", "WY*", "*", "**", "Xo"]
_BAD_HEADS = [">id  two", "> lead", ">trail ", ">a\tb\r", ">\x0bz"]
_BAD_LINES = ["", " A", "A\r", "1", ".", "A C"]


def _files(bad):
    from hypothesis import strategies as st

    heads, lines = (_HEADS + _BAD_HEADS, _LINES + _BAD_LINES) if bad else (_HEADS, _LINES)
    record = st.tuples(st.sampled_from(heads), st.lists(st.sampled_from(lines), min_size=1, max_size=5))
    return st.lists(record, min_size=1, max_size=9)


def _text(records, final_nl=True):
    body = "\n".join(h + "\n" + "\n".join(lines) for h, lines in records)
    return (body + ("\n" if final_nl else "")).encode()


def _outcome(data, alphabet, numpy):
    import clalign.data.fasta as fasta

    old = fasta.NUMPY_MIN_BYTES, fasta.COMPILED_MIN_BYTES
    fasta.NUMPY_MIN_BYTES, fasta.COMPILED_MIN_BYTES = (0 if numpy else 1 << 62), 1 << 62
    try:
        p = fasta.parse_fasta_arrays("mem.fa", alphabet, data=data)
    except InputError as exc:
        return str(exc)
    finally:
        fasta.NUMPY_MIN_BYTES, fasta.COMPILED_MIN_BYTES = old
    dtypes = [str(a.dtype) for a in (p.residues, p.offsets, p.lengths, p.stops, p.id_blob, p.id_offsets)]
    return (dtypes, p.residues.tobytes(), p.offsets.tolist(), p.lengths.tolist(), p.stops.tolist(), p.alphabet,
            fasta._split(p.id_blob, p.id_offsets), fasta._split(p.desc_blob, p.desc_offsets))


def _check(bad, examples):
    from hypothesis import HealthCheck, given, settings, strategies as st

    import clalign.data.fasta as fasta
    import clalign.data.fasta_np as fasta_np

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(_files(bad), st.sampled_from(["auto", "protein", "dna", "letters"]), st.sampled_from([8, 40, 0]),
           st.booleans())
    def check(records, alphabet, chunk, final_nl):
        data = _text(records, final_nl)
        fasta_np.CHUNK_BYTES = chunk
        assert _outcome(data, alphabet, True) == _outcome(data, alphabet, False)

    old = fasta_np.CHUNK_BYTES
    try:
        check()
    finally:
        fasta_np.CHUNK_BYTES = old


def test_common_case_equals_per_record_reader():
    """Files of the common case (some with '*' tails, a few with an illegal letter for the
    alphabet or an empty record), cut into chunks of several sizes: same arrays or same error."""
    _check(False, 150)


def test_other_files_handed_over():
    """Blanks in sequence lines, CR, odd headers, empty lines: the same outcome as the reader."""
    _check(True, 150)


def test_numpy_scan_answers_common_case():
    """The numpy scan itself answers a clean protein file (the fall-back is not what passes)."""
    import clalign.data.fasta as fasta
    import clalign.data.fasta_np as fasta_np

    data = _text([(">sp|P1|X first one", ["MKVLWY", "ACD*"]), (">p2", ["acdefghik"]), (">p3 d", ["W"])] * 50)
    arr = np.frombuffer(data, dtype=np.uint8)
    old = fasta_np.CHUNK_BYTES
    try:
        fasta_np.CHUNK_BYTES = 64
        got = fasta_np.parse(arr, fasta.PROTEIN.lut, 100, 10, 1000, workers=3)
    finally:
        fasta_np.CHUNK_BYTES = old
    assert got is not None
    residues, offsets, lengths, stops = got[:4]
    assert lengths.tolist()[:3] == [9, 9, 1] and stops.tolist()[:3] == [1, 0, 0]
    assert fasta.PROTEIN.decode(residues[:9]) == "MKVLWYACD"
    assert bytes(got[4][:got[5][3]]) == b"sp|P1|Xp2p3" and bytes(got[6][:got[7][3]]) == b"first oned"
    assert fasta_np.parse(np.frombuffer(data.replace(b"MKVLWY", b"MK VLW"), np.uint8),
                          fasta.PROTEIN.lut, 100, 10, 1000) is None


def test_plain_file_read_in_parallel(tmp_path):
    """read_array: a plain file's bytes, read in pieces; None for gzip, small or missing files;
    a NUL byte in a header still gives read_bytes' error through parse_fasta_arrays."""
    import gzip
    import os

    import pytest

    import clalign.data.fasta as fasta
    from clalign.data.rawread import read_array

    data = _text([(">p%d desc" % i, ["MKVLWY" * 7, "ACD"]) for i in range(300)])
    plain, gz = tmp_path / "a.fa", tmp_path / "a.fa.gz"
    plain.write_bytes(data)
    gz.write_bytes(gzip.compress(data))
    assert read_array(plain, 5, 0).tobytes() == data
    assert read_array(gz, 5, 0) is None and read_array(plain, 5, len(data) + 1) is None
    assert read_array(tmp_path / "missing.fa", 2, 0) is None and read_array(tmp_path, 2, 0) is None
    fifo = tmp_path / "fifo.fa"
    os.mkfifo(fifo)
    assert read_array(fifo, 2, 0) is None          # not opened (would block for a writer)
    old = fasta.NUMPY_MIN_BYTES
    try:
        fasta.NUMPY_MIN_BYTES = 0
        p = fasta.parse_fasta_arrays(plain, "protein")
        assert p.lengths.tolist() == [45] * 300
        nul = tmp_path / "nul.fa"
        nul.write_bytes(data.replace(b"p7 desc", b"p7 d\0sc"))
        with pytest.raises(InputError, match="NUL byte"):
            fasta.parse_fasta_arrays(nul, "protein")
    finally:
        fasta.NUMPY_MIN_BYTES = old
