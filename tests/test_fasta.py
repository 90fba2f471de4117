import numpy as np
import pytest

from clalign.data import DNA, PROTEIN, parse_fasta, read_fasta
from clalign.errors import InputError

@pytest.fixture(autouse=True, params=["per-record", "compiled", "numpy"])
def reader(request):
    """Every test of this file runs with the three readers: the per-record one (small files),
    the compiled scan (clalign.data.fasta_nb, files of COMPILED_MIN_BYTES and more) and the
    numpy scan (clalign.data.fasta_np, tried first from NUMPY_MIN_BYTES; small chunks here)."""
    import clalign.data.fasta as fasta
    import clalign.data.fasta_np as fasta_np

    old = fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES, fasta.NUMPY_MIN_BYTES, fasta_np.CHUNK_BYTES
    fasta.NUMPY_MIN_BYTES = 1 << 62
    if request.param in ("compiled", "numpy"):
        fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES = 0, 0
    if request.param == "numpy":
        fasta.NUMPY_MIN_BYTES, fasta_np.CHUNK_BYTES = 0, 16
    yield request.param
    fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES, fasta.NUMPY_MIN_BYTES, fasta_np.CHUNK_BYTES = old


GOOD = ">sp|P1|A first protein\nmk*vl\nAC*\n\n>sp|P2\n\nWWY**\n>p3  spaced   description \r\nA C\tD\n"


def _variants(text):
    """(name, content, gzip) for plain LF, CRLF and gzip'd CRLF."""
    crlf = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return [("in.fa", text, False), ("in_crlf.fa", crlf, False), ("in.fa.gz", crlf, True)]


@pytest.mark.parametrize("variant", range(3))
def test_good_records(write_file, variant):
    name, content, gz = _variants(GOOD)[variant]
    recs = list(read_fasta(write_file(name, content, gzip=gz)))
    assert [r.id for r in recs] == ["sp|P1|A", "sp|P2", "p3"]
    assert [r.description for r in recs] == ["first protein", "", "spaced   description"]
    # uppercased, blanks and blank lines skipped, trailing '*' stripped, inner '*' kept (protein stop)
    assert [r.sequence for r in recs] == ["MK*VLAC", "WWY", "ACD"]


def test_gzip_detected_by_magic_not_suffix(write_file):
    path = write_file("no_suffix.txt", ">a\nACDE\n", gzip=True)
    assert [r.sequence for r in read_fasta(path)] == ["ACDE"]


def test_no_final_newline_and_leading_blank_lines(write_file):
    path = write_file("x.fa", "\n\n  \n>a\nAC\n>b\nDE")
    assert [(r.id, r.sequence) for r in read_fasta(path)] == [("a", "AC"), ("b", "DE")]


def test_empty_file_has_no_records(write_file):
    assert list(read_fasta(write_file("e.fa", ""))) == []


BAD = [
    # (content, expected line, message fragment)
    ("ACDE\n>a\nAC\n", 1, "before the first '>'"),
    ("\n\nACDE\n>a\nAC\n", 3, "before the first '>'"),
    (">a\nAC\n>b\n>c\nDE\n", 3, "empty sequence"),
    (">a\nAC\n>b\n\n\n", 3, "empty sequence"),
    (">a\n****\n", 1, "empty sequence"),
    (">a\nACDE\nAC1E\n", 3, "illegal character '1'"),
    (">a\nAC\n>b\nACDE\nACDE\nAC.DE\n", 6, "illegal character '.'"),
    (">a\nAC>DE\n", 2, "illegal character '>'"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
@pytest.mark.parametrize("variant", range(3))
def test_malformed_one_line_error_with_file_and_line(write_file, case, variant):
    text, line, frag = BAD[case]
    name, content, gz = _variants(text)[variant]
    path = write_file(name, content, gzip=gz)
    with pytest.raises(InputError) as ei:
        list(read_fasta(path))
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:{line}: "), msg
    assert frag in msg
    assert ei.value.path == path and ei.value.line == line


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_fasta(str(tmp_path / "nope.fa")))
    with pytest.raises(InputError, match="directory"):
        list(read_fasta(str(tmp_path)))


def test_corrupt_gzip(write_file):
    path = write_file("bad.gz", b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(InputError, match="gzip"):
        list(read_fasta(path))


def test_protein_codes(write_file):
    p = parse_fasta(write_file("p.fa", ">a\nmkUOJ\n>b\nx*\n"), "protein")
    assert p.alphabet is PROTEIN
    assert p.lengths.tolist() == [5, 1]
    assert PROTEIN.decode(p.residues) == "MKUOJX"


def test_dna_codes_and_errors(write_file):
    p = parse_fasta(write_file("d.fa", ">a\nacgtn\nRYu*\n"), "dna")
    assert DNA.decode(p.residues) == "ACGTNRYT"
    with pytest.raises(InputError, match=r":2: .*'\*' \(stop\) inside"):
        parse_fasta(write_file("d2.fa", ">a\nAC*GT\n"), "dna")
    with pytest.raises(InputError, match=r":3: illegal character 'E' for the dna alphabet"):
        parse_fasta(write_file("d3.fa", ">a\nACGT\nACEGT\n"), "dna")


def test_auto_alphabet(write_file):
    assert parse_fasta(write_file("d.fa", ">a\nACGTACGTNN\n>b\nacgu\n"), "auto").alphabet is DNA
    assert parse_fasta(write_file("p.fa", ">a\nMKVLACGT\n"), "auto").alphabet is PROTEIN
    # headers do not count towards the guess
    assert parse_fasta(write_file("h.fa", ">MKVLWWPPEE\nACGT\n"), "auto").alphabet is DNA


def test_matches_pyhmmer_on_real_proteome(data_dir):
    easel = pytest.importorskip("pyhmmer.easel")
    path = f"{data_dir}/proteome.faa.gz"
    recs = list(read_fasta(path))
    with easel.SequenceFile(path, digital=False) as fh:
        ref = [(s.name, s.description, s.sequence.rstrip("*")) for s in fh]
    assert len(recs) == 2100
    assert [(r.id, r.description, r.sequence) for r in recs] == ref
    p = parse_fasta(path, "protein")
    assert np.array_equal(p.residues, PROTEIN.encode("".join(s for _, _, s in ref)))


STOPS = (">a head*er with a star\nMKV\n>b one\nMKV*\n>c several\nMK*V***\n"
         ">d split\nMKV*\n*\n\n  *\t*\n>e inner only\nM*KV\n>f last\nMKV**")


@pytest.mark.parametrize("variant", range(3))
def test_trailing_stop_counts(write_file, variant):
    """Per record, the '*' stripped from its end: header stars and inner stars do not count,
    blanks, blank lines and CRs between the stops are allowed; plain, CRLF and gzip alike."""
    name, content, gz = _variants(STOPS)[variant]
    p = parse_fasta(write_file(name, content, gzip=gz), "protein")
    assert p.stops.dtype.kind == "u" and p.stops.shape == p.lengths.shape
    assert p.stops.tolist() == [0, 1, 3, 4, 0, 2]
    assert PROTEIN.decode(p.residues) == "MKV" "MKV" "MK*V" "MKV" "M*KV" "MKV"


def test_trailing_stop_counts_long_tails_and_other_alphabets(write_file, monkeypatch):
    import clalign.data.fasta as fasta

    text = ">a\nMK" + "*" * 150 + "\n" + "\r\n" * 100 + ">b\nM*\n>c\nM" + "*\n" * 70 + ">d\nMK\n"
    path = write_file("long.fa", text)
    assert parse_fasta(path, "protein").stops.tolist() == [150, 1, 70, 0]
    monkeypatch.setattr(fasta, "_TAIL_STEPS", 1)       # the per-record fallback gives the same
    assert parse_fasta(path, "protein").stops.tolist() == [150, 1, 70, 0]
    monkeypatch.undo()
    assert parse_fasta(write_file("d.fa", ">a\nACG*\n*\n>b\nAC\n"), "dna").stops.tolist() == [2, 0]
    assert parse_fasta(write_file("l.fa", ">a\nAC\n>b\nAC*\n"), "letters").stops.tolist() == [0, 1]
    no_stars = parse_fasta(write_file("n.fa", ">a\nAC\n>b\nDE\n>c\nF"), "protein").stops
    assert no_stars.tolist() == [0, 0, 0] and no_stars.dtype.kind == "u"
    assert parse_fasta(write_file("e.fa", ""), "protein").stops.size == 0


def test_trailing_stops_of_real_proteome(data_dir):
    """Every protein of the bundled proteome ends in one '*' but one: HMMER counts 682,583
    residues in it (pyhmmer's tables), our reader keeps 680,484 plus 2,099 stops."""
    p = parse_fasta(f"{data_dir}/proteome.faa.gz", "protein")
    assert int(p.lengths.sum()) == 680484 and int(p.stops.sum()) == 2099
    assert np.bincount(p.stops).tolist() == [1, 2099]

