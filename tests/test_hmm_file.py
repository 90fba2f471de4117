"""HMMER3 text HMM reader: real files (vs pyhmmer), every format version 3/a-3/f, gzip, errors."""
import gzip
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")

from clalign.errors import InputError
from clalign.hmm import read_hmm, read_hmms

PYDATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
TXT = os.path.join(PYDATA, "hmms", "txt")
AMINO_FILES = ["KR.hmm", "LuxC.hmm", "PF02826.hmm", "RREFam.hmm", "Thioesterase.hmm"]
HERE = os.path.join(os.path.dirname(__file__), "data", "hmm")


def _pyhmmer_models(path):
    with pyhmmer.plan7.HMMFile(path) as hf:
        return list(hf)


def _same_as_pyhmmer(ours, theirs):
    assert ours.name == theirs.name
    assert ours.acc == theirs.accession
    assert ours.desc == theirs.description
    assert ours.M == theirs.M
    np.testing.assert_array_equal(ours.mat[1:], np.asarray(theirs.match_emissions)[1:])
    np.testing.assert_array_equal(ours.ins, np.asarray(theirs.insert_emissions))
    np.testing.assert_array_equal(ours.t, np.asarray(theirs.transition_probabilities))
    if ours.compo is not None:
        np.testing.assert_array_equal(ours.compo, np.asarray(theirs.composition)[:20])


@pytest.mark.parametrize("name", AMINO_FILES)
def test_real_files_match_pyhmmer(name):
    path = os.path.join(TXT, name)
    ours = list(read_hmms(path))
    theirs = _pyhmmer_models(path)
    assert len(ours) == len(theirs) >= 1
    for a, b in zip(ours, theirs):
        _same_as_pyhmmer(a, b)
        assert a.version == "3/f"
        assert a.msv is not None and a.viterbi is not None and a.forward is not None


def test_pf02826_header_fields():
    h = read_hmm(os.path.join(TXT, "PF02826.hmm"))
    assert (h.name, h.acc, h.M) == ("2-Hacid_dh_C", "PF02826.20", 178)
    assert h.desc == "D-isomer specific 2-hydroxyacid dehydrogenase, NAD binding domain"
    assert h.msv == (-10.2529, 0.70685) and h.viterbi == (-10.9073, 0.70685) and h.forward == (-5.1587, 0.70685)
    assert h.ga == (25.1, 25.1) and h.tc == (25.1, 25.1) and h.nc == (25.0, 25.0)
    assert h.nseq == 138 and h.flags["CS"] and not h.flags["RF"]
    assert (h.mu, h.lam) == h.msv


def test_multi_model_file_order():
    names = [h.name for h in read_hmms(os.path.join(TXT, "RREFam.hmm"))]
    assert len(names) == 10 and names[0] == "Stand_Alone_Lasso_RRE" and names[-1] == "Thiaglutamate_B_RRE"


@pytest.mark.parametrize("v", "abcdef")
def test_every_format_version(v):
    path = os.path.join(HERE, f"tiny.3{v}.hmm")
    h = read_hmm(path)
    ref = read_hmm(os.path.join(HERE, "tiny.3f.hmm"))
    assert h.version == f"3/{v}" and h.M == 12
    np.testing.assert_array_equal(h.mat, ref.mat)
    np.testing.assert_array_equal(h.ins, ref.ins)
    np.testing.assert_array_equal(h.t, ref.t)
    _same_as_pyhmmer(h, _pyhmmer_models(path)[0])
    if v == "a":   # 3/a: one lambda, MSV mu = Viterbi mu
        assert h.msv == (-10.9073, 0.70685) and h.forward == (-5.1587, 0.70685)
    else:
        assert h.msv == (-10.2529, 0.70685)


def test_gzip_input():
    a = read_hmm(os.path.join(HERE, "tiny.3f.hmm.gz"))
    b = read_hmm(os.path.join(HERE, "tiny.3f.hmm"))
    np.testing.assert_array_equal(a.mat, b.mat)


@pytest.mark.parametrize("name,alph,line", [("RF00001.hmm", "RNA", 7), ("bmyD.hmm", "DNA", 5)])
def test_nucleotide_models_refused(name, alph, line):
    path = os.path.join(TXT, name)
    with pytest.raises(InputError) as ei:
        list(read_hmms(path))
    assert "nucleotide models are not supported" in str(ei.value)
    assert f"{path}:{line}:" in str(ei.value) and alph in str(ei.value)


def _tiny_lines():
    with open(os.path.join(HERE, "tiny.3f.hmm")) as fh:
        return fh.read().splitlines()


def _write(tmp_path, lines, name="bad.hmm"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def _edit(lines, lineno, new):
    out = list(lines)
    out[lineno - 1] = new
    return out


@pytest.mark.parametrize("mutate,lineno,words", [
    (lambda L: _edit(L, 1, "HMMER9/z [x]"), 1, "HMMER3"),
    (lambda L: _edit(L, 5, "LENG  zero"), 5, "invalid model length"),
    (lambda L: _edit(L, 6, "ALPH  coins"), 6, "unsupported alphabet"),
    (lambda L: [ln for ln in L if not ln.startswith("STATS LOCAL MSV")], 19, "STATS"),
    (lambda L: _edit(L, 24, L[23].replace("2.82670", "2.8x670")), 24, "not a number"),
    (lambda L: _edit(L, 27, L[26].replace("      2 ", "      7 ")), 27, "expected match line to start with 2"),
    (lambda L: _edit(L, 26, "          0.01025  4.98150"), 26, "too few probability fields on transition line"),
    (lambda L: L[:-4], 57, "premature end"),
    (lambda L: L[:-1] + ["     13   1.0", "//"], 60, "expected closing //"),
    (lambda L: _edit(L, 24, " ".join(L[23].split()[:22])), 24, "missing annotation fields"),
])
def test_errors_name_file_and_line(tmp_path, mutate, lineno, words):
    path = _write(tmp_path, mutate(_tiny_lines()))
    with pytest.raises(InputError) as ei:
        list(read_hmms(path))
    msg = str(ei.value)
    assert msg.startswith(f"{path}:{lineno}:"), msg
    assert words.lower() in msg.lower(), msg


def test_empty_and_missing_files(tmp_path):
    p = tmp_path / "empty.hmm"
    p.write_text("")
    with pytest.raises(InputError, match="no HMM found"):
        list(read_hmms(str(p)))
    with pytest.raises(InputError, match="no such file"):
        list(read_hmms(str(tmp_path / "nope.hmm")))


def test_binary_and_hmmer2_refused(tmp_path):
    with pytest.raises(InputError, match="binary"):
        list(read_hmms(os.path.join(PYDATA, "hmms", "bin", "PF02826.h3m")))
    with pytest.raises(InputError, match="HMMER2"):
        list(read_hmms(os.path.join(PYDATA, "hmms", "txt2", "Thioesterase.hmm2")))


def test_read_hmm_needs_exactly_one():
    with pytest.raises(InputError, match="exactly one"):
        read_hmm(os.path.join(TXT, "RREFam.hmm"))


def test_gzip_error_names_file(tmp_path):
    p = tmp_path / "x.hmm.gz"
    p.write_bytes(gzip.compress(b"HMMER3/f [x]\nNAME a\n")[:-6])
    with pytest.raises(InputError) as ei:
        list(read_hmms(str(p)))
    assert str(p) in str(ei.value)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
@pytest.mark.parametrize("field", [3, 4])
def test_non_finite_stats_rejected_with_file_and_line(tmp_path, value, field):
    """HMMER reads a NaN STATS value and then loses every hit silently; we refuse the model."""
    lines = _tiny_lines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("STATS LOCAL MSV"))
    toks = lines[i].split()
    toks[field] = value
    path = _write(tmp_path, _edit(lines, i + 1, "  ".join(toks)))
    with pytest.raises(InputError) as ei:
        list(read_hmms(path))
    assert str(ei.value).startswith(f"{path}:{i + 1}:") and "finite" in str(ei.value)


@pytest.mark.parametrize("raw", [b"caf\xe9", "café".encode()])
def test_non_ascii_name_read_and_written_back_as_bytes(tmp_path, raw):
    """A Latin-1 (or UTF-8) NAME is accepted as HMMER accepts it; file_text() gives back the
    file's bytes for output."""
    from clalign.hmm.hmmtext import RAW, file_text

    data = open(os.path.join(HERE, "tiny.3f.hmm"), "rb").read()
    name_line = next(ln for ln in data.split(b"\n") if ln.startswith(b"NAME"))
    p = tmp_path / "n.hmm"
    p.write_bytes(data.replace(name_line, b"NAME  " + raw, 1))
    hmm = read_hmm(str(p))
    assert file_text(hmm.name).encode(*RAW) == raw


@pytest.mark.parametrize("lineno,new,words", [
    (3, "ACC   #", "too few fields on ACC line"),                    # '#' starts a comment, as in HMMER
    (10, "CS    yes\x1d", "must say yes/no"),                          # \x1d is no separator for HMMER
    (13, "NSEQ  0", "invalid nseq"),
    (15, "EFFN  0.0", "invalid eff_nseq"),
])
def test_hmmer_rejections_found_by_fuzzing(tmp_path, lineno, new, words):
    lines = _tiny_lines()
    path = _write(tmp_path, _edit(lines, lineno, new))
    with pytest.raises(InputError) as ei:
        list(read_hmms(path))
    assert str(ei.value).startswith(f"{path}:{lineno}:") and words in str(ei.value)


def test_nul_byte_and_trailing_comment_token(tmp_path):
    lines = _tiny_lines()
    p = tmp_path / "nul.hmm"
    p.write_bytes("\n".join(lines[:29] + [lines[29] + "\0"] + lines[30:]).encode() + b"\n")
    with pytest.raises(InputError, match=r"nul.hmm:30: NUL byte"):
        list(read_hmms(str(p)))
    ok = read_hmm(_write(tmp_path, _edit(lines, 24, lines[23] + "  #c"), "c.hmm"))   # HMMER ignores it too
    assert ok.M == read_hmm(os.path.join(HERE, "tiny.3f.hmm")).M


def test_header_order_given_to_pyhmmer(tmp_path):
    """HMMER's reader (pyhmmer, hmmsearch 3.3.2) crashes on a GA line before ALPH, which we read;
    hmmer_order() puts the header in HMMER's own order, the model unchanged."""
    import io

    from clalign.hmm.hmmfile import _read_text
    from clalign.hmm.hmmtext import hmmer_order

    lines = _tiny_lines()
    i_alph = next(k for k, ln in enumerate(lines) if ln.startswith("ALPH"))
    i_ga = next(k for k, ln in enumerate(lines) if ln.startswith("GA"))
    lines[i_alph], lines[i_ga] = lines[i_ga], lines[i_alph]
    path = _write(tmp_path, lines)
    ours = read_hmm(path)
    with pyhmmer.plan7.HMMFile(io.BytesIO(hmmer_order(_read_text(path)))) as hf:
        (theirs,) = list(hf)
    _same_as_pyhmmer(ours, theirs)


@pytest.mark.parametrize("edit", ["CONS  no", ""])
def test_3f_model_without_consensus_refused(tmp_path, edit):
    """Found by fuzzing: HMMER stops ('HMM must have a consensus') on a 3/e-3/f model whose
    header lacks 'CONS yes'; we refuse it with file:line instead of a pyhmmer traceback."""
    lines = _tiny_lines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("CONS"))
    path = _write(tmp_path, _edit(lines, i + 1, edit))
    with pytest.raises(InputError, match="needs 'CONS yes'") as ei:
        list(read_hmms(path))
    assert str(ei.value).startswith(f"{path}:")


def test_expf_equals_libm_near_and_far_from_midpoints():
    """c_expf asks libm only near float32 rounding midpoints; every value equals libm's expf."""
    from clalign.hmm import hmmprob

    if hmmprob._LIBM is None:
        pytest.skip("no loadable libm: the correctly rounded value is the documented fallback")
    rng = np.random.default_rng(7)
    x = -(rng.integers(0, 2_000_000, 200_000) / 1e5).astype(np.float32)       # HMM files' 5 decimals
    x = np.concatenate([x, np.float32([-np.inf, 0.0, -0.0, -88.0, -104.0])])
    f = hmmprob._LIBM.expf
    want = np.array([f(float(v)) for v in x.tolist()], dtype=np.float32)
    got = hmmprob.c_expf(x)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    rounded = np.exp(x.astype(np.float64)).astype(np.float32)
    assert (rounded.view(np.uint32) != want.view(np.uint32)).any()     # the case the midpoint test is for


def _fields(h):
    import dataclasses

    return [(f.name, v.tobytes() if isinstance(v, np.ndarray) else v)
            for f in dataclasses.fields(h) for v in [getattr(h, f.name)]]


def test_read_in_processes_equals_serial(tmp_path, monkeypatch):
    """clalign.hmm.hmmpool: a file cut into pieces read by 3 processes gives the serial reader's
    models (every field, line numbers included); a broken model in a later piece raises the
    serial reader's error (a blank line and a comment between models move no cut)."""
    from clalign.hmm import hmmpool

    text = open(os.path.join(TXT, "RREFam.hmm")).read()
    path = tmp_path / "many.hmm"
    path.write_text(text.replace("//\n", "//\n\n# between\n", 3))
    assert len(hmmpool.pieces(path.read_text(), 3)) == 3
    with monkeypatch.context() as m:          # no serial fallback: the processes read it
        m.setattr(hmmpool, "read_hmms_text", None)
        pooled = hmmpool.read_all(path, procs=3)
    assert [_fields(h) for h in pooled] == [_fields(h) for h in read_hmms(path)]
    bad = path.read_text().rsplit("\nLENG", 1)
    path.write_text(bad[0] + "\nLENG  x" + bad[1].split("\n", 1)[1])
    with pytest.raises(InputError) as serial:
        list(read_hmms(path))
    with pytest.raises(InputError) as pooled:
        hmmpool.read_all(path, procs=3)
    assert str(pooled.value) == str(serial.value)
