"""Fuzzing the CLI (issue 9): mutated HMM files through `clalign hmmsearch`, hostile option values
through `clalign sw` and `clalign hmmsearch`.

Every example must end with exit status 0 and correct results (tables equal to HMMER's
hmmsearch where it accepts the file too; SW scores equal to the reference), or exit status 2
with one `clalign: error:` line naming the input or option: never a traceback, never a
signal or hang, never a changed input, never a leftover temporary file.

Bounded for `make test` (derandomized, a few dozen examples, seconds on PoCL). For a longer
hunt: ``CLALIGN_FUZZ_EXAMPLES=2000 CLALIGN_FUZZ_SEED=7 pytest test_fuzz_cli.py``.
"""
import faulthandler
import hashlib
import os
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from clalign.cli import main  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "data", "hmm", "tiny.3f.hmm")
HMMSEARCH = shutil.which("hmmsearch")
EXAMPLES = int(os.environ.get("CLALIGN_FUZZ_EXAMPLES", "0"))
SEED = os.environ.get("CLALIGN_FUZZ_SEED")


def _settings(n):
    """n examples in `make test` (derandomized: the same ones every run); more on request."""
    kw = dict(max_examples=EXAMPLES or n, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    if SEED is None:
        kw["derandomize"] = True
    return settings(**kw)


def _seed(f):
    return hypothesis.seed(int(SEED))(f) if SEED is not None else f


TARGETS = (">t1 first\nMKVLAAGIVGLPNVGKSTLFNALTG\n>t2\nACDEFGHIKLMNPQRSTVWY\n>t3\nW\n"
           ">t4 long\n" + "GKSTLFNALTGAMKVLAAGIVGLPNV" * 20 + "\n")


def _invoke(args):
    """CliRunner.invoke with a hang guard: a run still going after 120 s dumps every thread's
    stack and ends the test process (a hang is a failure, never a stuck CI job)."""
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        return CliRunner().invoke(main, args)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _check_outcome(r, tmp, inputs, outputs, needles):
    """0, or 2 with one error line naming one of the needles; no traceback, nothing left over."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output and "Traceback" not in r.stderr
    for p, h in inputs.items():
        assert _digest(p) == h, f"input {p} changed"
    assert not [n for n in os.listdir(tmp) if ".clalign-" in n], os.listdir(tmp)
    if r.exit_code == 0:
        return True
    assert r.exit_code == 2, (r.exit_code, r.output)
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("clalign: error:")]
    assert len(errs) == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert any(n in errs[0] for n in needles), (needles, errs[0])
    for o in outputs:
        assert not os.path.exists(o), f"partial output {o}"
    return False


# --- HMM file mutations -------------------------------------------------------------------------
_TOKENS = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e309", "*", "", "x", "-0", "3.4e38", "\xe9",
                           "99999999999999999999", "//", "HMM", "STATS", "NAME", "#", "\t", "1.#INF"])


_BASES = sorted(os.path.join(HERE, "data", "hmm", f) for f in os.listdir(os.path.join(HERE, "data", "hmm"))
                if f.startswith("tiny.3") and f.endswith(".hmm"))


@st.composite
def _mutated_hmm(draw):
    lines = open(draw(st.sampled_from(_BASES)), "rb").read().split(b"\n")
    if draw(st.booleans()):                 # two models in one file
        lines = lines + lines
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["token", "number", "delete", "duplicate", "swap", "truncate", "bytes",
                                     "blank"]))
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "number":                # a value of the model, still a number
            toks = lines[i].split()
            if toks:
                j = draw(st.integers(0, len(toks) - 1))
                v = draw(st.one_of(st.floats(allow_nan=False, width=32).map(repr),
                                   st.integers(-3, 10 ** 6).map(str), st.just("*")))
                toks[j] = v.encode()
                lines[i] = b"  ".join(toks)
        elif kind == "token":
            toks = lines[i].split()
            if toks:
                j = draw(st.integers(0, len(toks) - 1))
                toks[j] = draw(_TOKENS).encode("latin-1")
                lines[i] = b"  ".join(toks)
        elif kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "truncate":
            lines[i] = lines[i][:draw(st.integers(0, max(0, len(lines[i]) - 1)))]
            lines = lines[:i + 1]
        elif kind == "bytes":
            lines[i] = lines[i] + draw(st.binary(min_size=1, max_size=6))
        else:
            lines[i] = b""
    return b"\n".join(lines)


def _rows(path):
    return [ln.split()[:18] for ln in open(path, "rb").read().split(b"\n") if ln and not ln.startswith(b"#")]


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@_seed
@_settings(25)
@given(data=_mutated_hmm())
def test_fuzz_hmm_file_through_hmmsearch(fuzz_dir, data):
    tmp = fuzz_dir / hashlib.sha1(data).hexdigest()[:12]
    tmp.mkdir(exist_ok=True)
    hmm, fa, tbl = str(tmp / "m.hmm"), str(tmp / "t.fa"), str(tmp / "c.tbl")
    with open(hmm, "wb") as fh:
        fh.write(data)
    with open(fa, "w") as fh:
        fh.write(TARGETS)
    out = str(tmp / "c.out")
    for leftover in (tbl, out):
        if os.path.exists(leftover):
            os.unlink(leftover)
    inputs = {hmm: _digest(hmm), fa: _digest(fa)}
    r = _invoke(["hmmsearch", "--cpu", "1", "-E", "1000", "--domE", "1000", "--F1", "1",
                                  "--tblout", tbl, "-o", out, hmm, fa])
    hypothesis.event(f"exit {r.exit_code}")
    ok = _check_outcome(r, str(tmp), inputs, [tbl, out], [hmm])
    if ok and HMMSEARCH:
        # accepted: the tables are HMMER's (when HMMER accepts the file too; we are stricter on NaN STATS)
        h = str(tmp / "h.tbl")
        p = subprocess.run([HMMSEARCH, "--cpu", "1", "-E", "1000", "--domE", "1000", "--F1", "1", "--tblout", h,
                            "-o", os.devnull, hmm, fa], capture_output=True, timeout=60)
        if p.returncode == 0:
            assert _rows(tbl) == _rows(h)


# --- option values ------------------------------------------------------------------------------
_NUMBERS = st.one_of(st.integers(-2 ** 40, 2 ** 40).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.sampled_from(["nan", "inf", "-inf", "1e309", "0x10", "", " ", "1,5", "٣", "1_0", "--", "-"]))


@pytest.fixture(scope="module")
def sw_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("swfuzz")
    q, db = d / "q.fa", d / "db.fa"
    q.write_text(">q\nMKVLAAGIVGLPNVGKSTLF\n")
    db.write_text(TARGETS)
    return str(d), str(q), str(db)


@_seed
@_settings(40)
@given(opt=st.sampled_from(["-gapopen", "-gapextend", "-max_target_seqs"]), val=_NUMBERS,
       outfmt=st.sampled_from(["tsv", "json"]))
def test_fuzz_sw_option_values(sw_files, opt, val, outfmt):
    from clalign.data import PROTEIN, get_matrix, read_fasta
    from clalign.sw.reference import sw_score

    d, q, db = sw_files
    out = os.path.join(d, "o.txt")
    if os.path.exists(out):
        os.unlink(out)
    inputs = {q: _digest(q), db: _digest(db)}
    r = _invoke(["sw", "-query", q, "-db", db, "-outfmt", outfmt, "-out", out, "-evalue", "1e300", opt, val])
    # a gap pair without BLAST+ statistics is refused naming the pair and the supported ones
    gap = ["gap existence"] if opt in ("-gapopen", "-gapextend") else []
    if _check_outcome(r, d, inputs, [out], [opt] + gap):
        args = {"-gapopen": 11, "-gapextend": 1, "-max_target_seqs": 10}
        args[opt] = int(val)
        assert args["-gapopen"] >= 0 and args["-gapextend"] >= 0 and args["-max_target_seqs"] >= 1
        if outfmt == "tsv":
            rows = [ln.split("\t") for ln in open(out).read().splitlines()[1:]]
            m = get_matrix("BLOSUM62")
            qc = PROTEIN.encode("MKVLAAGIVGLPNVGKSTLF")
            want = sorted((sw_score(qc, PROTEIN.encode(rec.sequence), m.scores, args["-gapopen"], args["-gapextend"])
                           for rec in read_fasta(db)), reverse=True)
            want = [w for w in want if w > 0][:args["-max_target_seqs"]]   # score 0: no local alignment, no hit
            assert [int(x[2]) for x in rows] == want


@_seed
@_settings(30)
@given(opt=st.sampled_from(["-E", "--domE", "--incE", "--incdomE", "--F1", "-Z", "--cpu"]), val=_NUMBERS)
def test_fuzz_hmmsearch_option_values(sw_files, opt, val):
    d, _, db = sw_files
    tbl, out = os.path.join(d, "h.tbl"), os.path.join(d, "h.out")
    for p in (tbl, out):
        if os.path.exists(p):
            os.unlink(p)
    inputs = {TINY: _digest(TINY), db: _digest(db)}
    r = _invoke(["hmmsearch", "--tblout", tbl, "-o", out, opt, val, TINY, db])
    if _check_outcome(r, d, inputs, [tbl, out], [opt, opt.lower()]):
        v = float(val)
        assert np.isfinite(v) and v >= 0
        assert open(tbl).read().rstrip().endswith("# [ok]")
