"""clalign hmmsearch (MSV filter on the OpenCL device) against hmmsearch (Debian HMMER 3.3.2)
and pyhmmer's reference tables."""
import os
import shutil
import subprocess
import sys

import pytest

pyhmmer = pytest.importorskip("pyhmmer")
from click.testing import CliRunner

from clalign.cli import main  # noqa: E402
from clalign.data import Database  # noqa: E402
from clalign.hmm.search import hmmsearch  # noqa: E402

PYDATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
TXT = os.path.join(PYDATA, "hmms", "txt")
FAA = os.path.join(PYDATA, "seqs", "938293.PRJEB85.HG003687.faa")
HMMSEARCH = shutil.which("hmmsearch")
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def _rows(path):
    with open(path) as fh:
        return [ln.rstrip("\n") for ln in fh if not ln.startswith("#")]


ENGINES = ["opencl", "pyhmmer"]


def _run_clalign(tmp_path, hmm, extra=(), engine="opencl"):
    tbl, dom, out = (str(tmp_path / f"c.{x}") for x in ("tbl", "domtbl", "out"))
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", tbl, "--domtblout", dom, "-o", out, "--cpu", "2",
                                  "--filter-engine", engine, *extra, hmm, FAA])
    assert r.exit_code == 0, r.output
    return tbl, dom, out, r


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["PF02826", "RREFam"])
def test_equals_reference_tables(tmp_path, name, engine):
    """pyhmmer's shipped tables: PF02826 from hmmsearch 3.3, RREFam from hmmsearch 3.4."""
    tbl, dom, _, r = _run_clalign(tmp_path, os.path.join(TXT, name + ".hmm"), engine=engine)
    assert _rows(tbl) == _rows(os.path.join(PYDATA, "tables", name + ".tbl"))
    assert _rows(dom) == _rows(os.path.join(PYDATA, "tables", name + ".domtbl"))
    assert "sequences" in r.stderr and "2100 sequences" in r.stderr       # the summary line


@pytest.mark.skipif(HMMSEARCH is None, reason="hmmsearch binary (HMMER 3.3.2, Debian package hmmer) not installed")
@pytest.mark.parametrize("name,extra", [("PF02826", ()), ("RREFam", ()), ("Thioesterase", ("-E", "1e-3")),
                                        ("KR", ("--F1", "0.05")), ("LuxC", ("-Z", "1000"))])
@pytest.mark.parametrize("engine", ENGINES)
def test_equals_hmmsearch(tmp_path, name, extra, engine):
    hmm = os.path.join(TXT, name + ".hmm")
    tbl, dom, out, _ = _run_clalign(tmp_path, hmm, extra, engine)
    h = {x: str(tmp_path / f"h.{x}") for x in ("tbl", "domtbl", "out")}
    subprocess.run([HMMSEARCH, "--noali", "--tblout", h["tbl"], "--domtblout", h["domtbl"], "-o", h["out"],
                    *extra, hmm, FAA], check=True)
    assert _rows(tbl) == _rows(h["tbl"])
    assert _rows(dom) == _rows(h["domtbl"])
    assert _rows(out) == _rows(h["out"])          # the --noali report, minus '#' comment lines


def test_api_counts_and_superset():
    s = hmmsearch(os.path.join(TXT, "RREFam.hmm"), FAA, engine="opencl")
    res = list(s)
    assert len(res) == 10 and s.stats.sequences == 2100 and s.stats.residues == 682583   # hmmsearch counts '*'
    for r in res:
        assert r.n_device_pass >= r.n_past_msv


def test_prepared_database_counts_terminal_stops(tmp_path):
    """A database made by ``clalign makedb`` keeps the trailing '*' HMMER counts in L: searching
    it gives the tables of the FASTA itself, of HMMER (pyhmmer's shipped tables; the hmmsearch
    binary when installed), and tlen = residues + stop. The bundled proteome is FAA gzipped;
    2,099 of its 2,100 proteins end in '*'."""
    fasta = os.path.join(DATA, "proteome.faa.gz")
    db = str(tmp_path / "db")
    r = CliRunner().invoke(main, ["makedb", "-q", "-dbtype", "prot", fasta, db])
    assert r.exit_code == 0, r.output

    def tables(hmm, target, tag, engine="opencl"):
        tbl, dom = str(tmp_path / f"{tag}.tbl"), str(tmp_path / f"{tag}.domtbl")
        r = CliRunner().invoke(main, ["hmmsearch", "--tblout", tbl, "--domtblout", dom, "--cpu", "2",
                                      "--filter-engine", engine, hmm, target])
        assert r.exit_code == 0, r.output
        return _rows(tbl), _rows(dom)

    hmms = os.path.join(DATA, "hmms.hmm")
    on_db = tables(hmms, db, "db")
    assert on_db == tables(hmms, fasta, "fa") and len(on_db[0]) > 10
    assert on_db == tables(hmms, db, "db_cpu", "pyhmmer") == tables(hmms, fasta, "fa_cpu", "pyhmmer")
    opened = Database.open(db)
    tlen = {row.split()[0]: int(row.split()[2]) for row in on_db[1]}
    hit = [i for i, name in enumerate(opened.ids) if name in tlen]
    assert [tlen[opened.ids[i]] for i in hit] == [int(opened.lengths[i] + opened.stops[i]) for i in hit]
    assert opened.stops[hit].min() == 1
    pf = os.path.join(TXT, "PF02826.hmm")
    assert tables(pf, db, "pf") == tuple(_rows(os.path.join(PYDATA, "tables", "PF02826." + x))
                                         for x in ("tbl", "domtbl"))
    if HMMSEARCH is not None:
        h = {x: str(tmp_path / f"h.{x}") for x in ("tbl", "domtbl")}
        subprocess.run([HMMSEARCH, "--noali", "--tblout", h["tbl"], "--domtblout", h["domtbl"], "-o", os.devnull,
                        hmms, FAA], check=True)     # FAA = the proteome unzipped (hmmsearch cannot rewind a .gz)
        assert on_db == (_rows(h["tbl"]), _rows(h["domtbl"]))


def test_internal_and_trailing_stops_match_pyhmmer(tmp_path):
    """A '*' inside a sequence is a residue for HMMER and for us; only trailing ones are stripped
    by our reader and given back to HMMER's length model. Scores compared at full precision."""
    from pyhmmer.easel import Alphabet, SequenceFile
    from pyhmmer.plan7 import Pipeline

    from clalign.data import read_fasta

    recs = list(read_fasta(FAA))
    lines = []
    for i, r in enumerate(recs):
        seq = r.sequence
        if i % 3 == 0:
            seq = seq[: len(seq) // 2] + "*" + seq[len(seq) // 2:]
        lines.append(f">{r.id} {r.description}\n{seq}{'*' if i % 2 else ''}\n")
    faa = tmp_path / "stops.faa"
    faa.write_text("".join(lines))
    hmm = os.path.join(TXT, "PF02826.hmm")
    got = list(hmmsearch(hmm, str(faa), F1=0.5, engine="opencl"))[0].hits
    aa = Alphabet.amino()
    with SequenceFile(str(faa), digital=True, alphabet=aa) as sf:
        seqs = sf.read_block()
    model = _pyhmmer_model(hmm)
    ref = Pipeline(aa, Z=len(recs), F1=0.5).search_hmm(model, seqs)
    key = lambda hits: [(h.name if isinstance(h.name, str) else h.name.decode(), h.score, h.evalue) for h in hits]
    assert key(got) == key(ref) and len(ref) > 0
    starred = {recs[i].id for i in range(0, len(recs), 3)}
    assert starred & {k[0] for k in key(ref)}, "no hit among the sequences with an inner '*'"


def _pyhmmer_model(path):
    from pyhmmer.plan7 import HMMFile

    with HMMFile(path) as hf:
        return hf.read()


def test_bad_inputs_leave_no_files(tmp_path):
    tbl = tmp_path / "x.tbl"
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", str(tbl), os.path.join(TXT, "RF00001.hmm"), FAA])
    assert r.exit_code == 2
    assert "nucleotide models are not supported" in r.output and "RF00001.hmm:7:" in r.output
    assert not tbl.exists() and not list(tmp_path.iterdir())
    bad = tmp_path / "bad.faa"
    bad.write_text(">a\nMK1V\n")
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", str(tbl), os.path.join(TXT, "PF02826.hmm"), str(bad)])
    assert r.exit_code == 2 and "bad.faa:2:" in r.output
    assert sorted(os.listdir(tmp_path)) == ["bad.faa"]
    r = CliRunner().invoke(main, ["hmmsearch", "--F1", "0", os.path.join(TXT, "PF02826.hmm"), FAA])
    assert r.exit_code == 2 and "--F1" in r.output


def test_parts_merge_like_one_search():
    """A model's survivors searched in many small parts (pyhmmer TopHits.merge) give the
    tables and report of one search over all of them: 14 models, parts of >= 3 targets."""
    import io

    from clalign.hmm.search import write_report

    hmm = os.path.join(DATA, "hmms.hmm")

    def tables(cpus, min_part, engine="opencl"):
        s = hmmsearch(hmm, FAA, cpus=cpus, min_part=min_part, engine=engine)
        res = list(s)
        out = []
        for fmt in ("targets", "domains"):
            buf = io.BytesIO()
            for i, r in enumerate(res):
                r.hits.write(buf, format=fmt, header=(i == 0))
            out.append(buf.getvalue().decode())
        rep = write_report(res, s.stats, hmmfile=hmm, seqdb=FAA)
        out.append("\n".join(ln for ln in rep.splitlines() if not ln.startswith("# Mc/sec")))
        return out, [r.n_past_msv for r in res]

    one, n_one = tables(1, 10 ** 9)
    many, n_many = tables(4, 3)
    assert n_one == n_many and sum(n_one) > 1000
    assert one == many
    # the pyhmmer engine: 14 models on 32 threads -> every model over 21 database parts
    cpu_parts, n_cpu = tables(32, 100, "pyhmmer")
    assert cpu_parts == one and n_cpu == n_one


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hmm", "golden")


def _table_lines(path):
    """A table's three header lines and its rows (the trailer names program, paths, date)."""
    with open(path) as fh:
        lines = [ln.rstrip("\n") for ln in fh]
    return lines[:3] + [ln for ln in lines[3:] if not ln.startswith("#")]


def _report_lines(path):
    """The -o report from the first query on, without HMMER's timing lines."""
    with open(path) as fh:
        lines = [ln.rstrip("\n") for ln in fh]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Query:"))
    return [ln for ln in lines[start:] if not ln.startswith(("# CPU time", "# Mc/sec"))]


def _mixed_names_faa(tmp_path):
    """The bundled proteome with long and short names mixed (tests/data/hmm/make_mixed_names.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hmm"))
    try:
        from make_mixed_names import write_mixed
    finally:
        sys.path.pop(0)
    faa = str(tmp_path / "mixed_names.faa")
    write_mixed(faa)
    return faa


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("tag,extra", [("mixed", ()), ("mixed_E1e-3", ("-E", "1e-3"))])
def test_name_widths_equal_hmmsearch_golden(tmp_path, tag, extra, engine):
    """Bundled 14 models x the bundled proteome with long and short names mixed
    (tests/data/hmm/make_mixed_names.py): tables byte-identical to hmmsearch 3.3.2's, headers
    and name-column widths included. With -E 1e-3 HMMER's hit lists hold unreported early
    targets whose long names widen the columns of some queries, and the late long names none."""
    faa = _mixed_names_faa(tmp_path)
    hmms = os.path.join(DATA, "hmms.hmm")
    tbl, dom, out = (str(tmp_path / f"c.{x}") for x in ("tbl", "domtbl", "out"))
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", tbl, "--domtblout", dom, "-o", out, "--cpu", "2",
                                  "--filter-engine", engine, *extra, hmms, faa])
    assert r.exit_code == 0, r.output
    assert _table_lines(tbl) == _table_lines(os.path.join(GOLDEN, tag + ".tbl"))
    assert _table_lines(dom) == _table_lines(os.path.join(GOLDEN, tag + ".domtbl"))
    assert _report_lines(out) == _report_lines(os.path.join(GOLDEN, tag + ".out"))
    if extra:                      # the case is a real one: some query's columns are wider than its rows need
        names, column = {}, {}
        for ln in _table_lines(tbl)[3:]:
            f = ln.split()
            names.setdefault(f[2], []).append(len(f[0]))
            column[f[2]] = len(ln) - len(ln[len(f[0]):].lstrip()) - 1
        assert any(column[q] > max(20, max(n)) for q, n in names.items())


@pytest.mark.parametrize("opt,val", [("-E", "nan"), ("-E", "inf"), ("-E", "-1"), ("--domE", "0"), ("--domE", "nan"),
                                     ("--incE", "inf"), ("--incE", "-0.5"), ("--incdomE", "nan"), ("--incdomE", "0"),
                                     ("--F1", "0"), ("--F1", "1.5"), ("--F1", "nan"), ("--F1", "-inf"),
                                     ("-Z", "0"), ("-Z", "inf"), ("-Z", "nan"), ("--cpu", "-1"), ("--cpu", "1.5")])
def test_bad_option_values_one_line_usage_error(tmp_path, opt, val):
    """Issue 9: NaN, infinite, negative and out-of-range thresholds are refused while parsing,
    one line naming the option, exit 2, nothing written."""
    tbl = tmp_path / "x.tbl"
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", str(tbl), opt, val, os.path.join(DATA, "hmms.hmm"), FAA])
    assert r.exit_code == 2, r.output
    err = [ln for ln in r.output.splitlines() if "error" in ln.lower()]
    assert len(err) == 1 and opt in err[0] and "Traceback" not in r.output
    assert not list(tmp_path.iterdir())


def test_search_options_api_validation():
    from clalign.errors import ParameterError
    from clalign.hmm.options import SearchOptions

    assert SearchOptions().changed() == {} and SearchOptions(E=1.0).changed() == {"E": 1.0}
    for kw in ({"E": float("nan")}, {"F1": 2.0}, {"Z": float("inf")}, {"cpus": -2}, {"incdomE": 0.0}):
        with pytest.raises(ParameterError, match=next(iter(kw)).replace("cpus", "cpu")):
            SearchOptions(**kw)
        with pytest.raises(ParameterError):
            hmmsearch(os.path.join(DATA, "hmms.hmm"), FAA, **kw)


@pytest.mark.parametrize("engine", ENGINES)
def test_name_widths_when_a_model_is_split(tmp_path, engine):
    """The same golden tables when every model's work is cut into many parts (pyhmmer: 21
    database parts each counting its own Z; OpenCL: survivors in parts of >= 3) and merged."""
    import io

    from clalign.hmm.tables import write_table

    faa = _mixed_names_faa(tmp_path)
    res = list(hmmsearch(os.path.join(DATA, "hmms.hmm"), faa, E=1e-3, cpus=32,
                         min_part=100 if engine == "pyhmmer" else 3, engine=engine))
    for fmt, ext in (("targets", "tbl"), ("domains", "domtbl")):
        buf = io.BytesIO()
        for i, r in enumerate(res):
            write_table(buf, r.hits, fmt, i == 0, r.name_width)
        path = tmp_path / f"c.{ext}"
        path.write_bytes(buf.getvalue())
        assert _table_lines(str(path)) == _table_lines(os.path.join(GOLDEN, f"mixed_E1e-3.{ext}"))


def test_filter_engine_choice(tmp_path, monkeypatch):
    """auto picks by the recorded rates (a CPU OpenCL device loses to pyhmmer's SSE filter, a
    GPU wins), remembers the choice per OpenCL setup, and an explicit engine is obeyed."""
    from clalign.hmm import choice

    monkeypatch.setenv("CLALIGN_CACHE_DIR", str(tmp_path))
    assert choice.choose_filter("pyhmmer", None, 2).engine == "pyhmmer"
    got = choice.choose_filter("auto", None, 2)
    assert (tmp_path / "hmm_filter_choice.json").exists()
    assert choice.choose_filter("auto", None, 2) == got                 # from the cache
    from clalign.runtime.device import select_devices

    import pyopencl as cl
    is_cpu = bool(select_devices(None)[0].type & cl.device_type.CPU)
    assert got.engine == ("pyhmmer" if is_cpu else "opencl"), got
    assert choice.choose_filter("opencl", None, 2).engine == "opencl"
    with pytest.raises(ValueError):
        choice.choose_filter("gpu", None, 2)
    assert choice.remembered(None, 2) == got.engine                      # what the CLI reads
    assert choice.remembered(None, 3) is None                           # another setup: nothing


def test_database_loaded_early_is_taken_once(tmp_path):
    """The CLI's early read (startup.Loading.early) is the one the search takes, once; another
    path, or a second search, reads anew."""
    from clalign.errors import InputError
    from clalign.hmm.startup import Loading

    proteome = os.path.join(DATA, "proteome.faa.gz")
    Loading.early(proteome)
    first = Loading.take(proteome)
    assert first is not Loading.take(proteome)
    db, _ = first.result()
    assert len(db) == 2100
    Loading.early(str(tmp_path / "missing.fa"))       # its error comes when the search asks
    with pytest.raises(InputError):
        Loading.take(str(tmp_path / "missing.fa")).result()


def _hit_record():
    """The PF02826 hit 938293.PRJEB85.HG003685_328 of pyhmmer's test proteome."""
    text = open(FAA).read()
    rec = text[text.index(">938293.PRJEB85.HG003685_328"):]
    return "".join(rec[:rec.index(">", 1)].splitlines()[1:])


def _same_as_hmmer(tmp_path, hmm, fasta):
    """clalign's -o/--tblout/--domtblout equal hmmsearch's, byte for byte (comment lines aside;
    '#'-named target rows kept)."""
    c = {x: str(tmp_path / f"c.{x}") for x in ("tbl", "domtbl", "out")}
    r = CliRunner().invoke(main, ["hmmsearch", "--cpu", "1", "--tblout", c["tbl"], "--domtblout", c["domtbl"],
                                  "-o", c["out"], hmm, fasta])
    assert r.exit_code == 0, r.output
    h = {x: str(tmp_path / f"h.{x}") for x in ("tbl", "domtbl", "out")}
    subprocess.run([HMMSEARCH, "--noali", "--tblout", h["tbl"], "--domtblout", h["domtbl"], "-o", h["out"],
                    hmm, fasta], check=True)

    def rows(p):
        return [ln for ln in open(p, "rb").read().split(b"\n") if not ln.startswith((b"# ", b"#-", b"#\n")) and ln != b"#"]
    for x in c:
        assert rows(c[x]) == rows(h[x]), x
    return c


@pytest.mark.skipif(HMMSEARCH is None, reason="hmmsearch binary (HMMER 3.3.2, Debian package hmmer) not installed")
def test_hash_names_and_latin1_model_name_as_hmmer(tmp_path):
    """A target named '#...' is a hit like any other (it used to crash the report), and a model
    NAME/DESC in Latin-1 or UTF-8 is written as the file's bytes, as hmmsearch writes it."""
    seq = _hit_record()
    fa = tmp_path / "t.fa"
    fa.write_text(f">#hash some desc\n{seq}\n>normal\n{seq}\n")
    data = open(os.path.join(TXT, "PF02826.hmm"), "rb").read()
    for i, (name, desc) in enumerate([(b"Hacid_\xe9t\xe9", b"d\xe9j\xe0 "), ("Hacid_été".encode(), "déjà ".encode())]):
        hmm = tmp_path / f"m{i}.hmm"
        hmm.write_bytes(data.replace(b"NAME  2-Hacid_dh_C", b"NAME  " + name, 1).replace(b"DESC  ", b"DESC  " + desc, 1))
        sub = tmp_path / f"run{i}"
        sub.mkdir()
        c = _same_as_hmmer(sub, str(hmm), str(fa))
        assert open(c["tbl"], "rb").read().count(b"#hash ") == 1 and name in open(c["out"], "rb").read()


def test_unnamed_target_and_empty_database_refused(tmp_path):
    """HMMER refuses a FASTA record without a name and an empty sequence file; so do we (API and
    CLI), instead of a misaligned table or a ZeroDivisionError."""
    from clalign.errors import InputError

    fa = tmp_path / "t.fa"
    fa.write_text(f">ok\n{_hit_record()}\n>\nMKTAYIAKQR\n")
    with pytest.raises(InputError, match="sequence 2 has no name|Line 3: no FASTA name"):   # either engine
        list(hmmsearch(os.path.join(TXT, "PF02826.hmm"), str(fa)))
    with pytest.raises(InputError, match="empty"):
        list(hmmsearch(os.path.join(TXT, "PF02826.hmm"), Database.from_sequences([])))
    tbl = tmp_path / "x.tbl"
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", str(tbl), os.path.join(TXT, "PF02826.hmm"), str(fa)])
    assert r.exit_code == 2 and str(fa) in r.stderr and "name" in r.stderr and "Traceback" not in r.output
    empty = tmp_path / "empty.fa"
    empty.write_text("")
    r = CliRunner().invoke(main, ["hmmsearch", "--tblout", str(tbl), os.path.join(TXT, "PF02826.hmm"), str(empty)])
    assert r.exit_code == 2 and str(empty) in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["empty.fa", "t.fa"]


@pytest.mark.skipif(HMMSEARCH is None, reason="hmmsearch binary (HMMER 3.3.2, Debian package hmmer) not installed")
def test_header_order_that_crashed_pyhmmer(tmp_path):
    """Found by fuzzing: a GA line before ALPH segfaulted the process (HMMER inside pyhmmer; the
    hmmsearch 3.3.2 binary crashes on it too). Header lines mean the same in any order, so we
    search it and give the tables hmmsearch gives for HMMER's own order."""
    from clalign.hmm.hmmfile import _read_text
    from clalign.hmm.hmmtext import hmmer_order

    data = open(os.path.join(TXT, "PF02826.hmm")).read().split("\n")
    i_alph = next(k for k, ln in enumerate(data) if ln.startswith("ALPH"))
    i_ga = next(k for k, ln in enumerate(data) if ln.startswith("GA"))
    data[i_alph], data[i_ga] = data[i_ga], data[i_alph]
    hmm = tmp_path / "ga_first.hmm"
    hmm.write_text("\n".join(data))
    fa = tmp_path / "t.fa"
    fa.write_text(f">hit\n{_hit_record()}\n>decoy\nMKTAYIAKQRQISFVKSHFSRQ\n")
    ordered = tmp_path / "ordered.hmm"
    ordered.write_bytes(hmmer_order(_read_text(str(hmm))))
    c = _same_as_hmmer(tmp_path, str(ordered), str(fa))
    r = CliRunner().invoke(main, ["hmmsearch", "--cpu", "1", "--tblout", str(tmp_path / "g.tbl"), str(hmm), str(fa)])
    assert r.exit_code == 0, r.output
    assert _rows(str(tmp_path / "g.tbl")) == _rows(c["tbl"])


def test_slane_path_equals_reference_tables(tmp_path, monkeypatch):
    """The GPU path on this CPU device: S-lane kernels, the MSV test taken from their bytes
    per length class (clalign.hmm.bytepass), bare sequences for the hit-list pass."""
    import clalign.hmm.engine as E

    monkeypatch.setattr(E, "shared_layout", lambda Ms, algo="msv", device=None: [{"WAVE": 32} for _ in Ms])
    tbl, dom, _, r = _run_clalign(tmp_path, os.path.join(TXT, "PF02826.hmm"))
    assert _rows(tbl) == _rows(os.path.join(PYDATA, "tables", "PF02826.tbl"))
    assert _rows(dom) == _rows(os.path.join(PYDATA, "tables", "PF02826.domtbl"))
    assert "TCUPS" in r.stderr


def test_slane_stage_threads_and_device_viterbi(tmp_path, monkeypatch):
    """The GPU path with several device-stage threads at once (S-lane MSV, the bias filter's
    shared pool, the device Viterbi filter) writes pyhmmer's tables, models in file order."""
    import clalign.hmm.engine as E
    from clalign.hmm import search

    monkeypatch.setattr(E, "shared_layout", lambda Ms, algo="msv", device=None: [{"WAVE": 32} for _ in Ms])
    monkeypatch.setattr(search, "MSV_WORKERS", 3)
    monkeypatch.setenv("CLALIGN_HMM_VITERBI", "device")
    text = open(os.path.join(TXT, "PF02826.hmm")).read()
    hmm = tmp_path / "three.hmm"
    hmm.write_text("".join(text.replace("NAME  2-Hacid_dh_C", f"NAME  copy{k}", 1) for k in range(3)))
    tbl, dom, _, r = _run_clalign(tmp_path, str(hmm))
    ref = tmp_path / "ref"
    ref.mkdir()
    rtbl, rdom, _, _ = _run_clalign(ref, str(hmm), engine="pyhmmer")
    assert _rows(tbl) == _rows(rtbl) and len(_rows(tbl)) > 3
    assert _rows(dom) == _rows(rdom)
    assert "bias, Viterbi and Forward filters on the device" in r.stderr and "TCUPS" in r.stderr


def test_pass_from_bytes_equals_scores():
    """clalign.hmm.bytepass: per length class thresholds give msv_pass of every target's score
    (bundled proteome lengths with its stops, every bundled model, all 256 bytes and overflow)."""
    import numpy as np

    from clalign.data import as_database
    from clalign.hmm import reference
    from clalign.hmm.bytepass import msv_pass_bytes
    from clalign.hmm.hmmfile import read_hmms
    from clalign.hmm.profile import build_msv_profile
    from clalign.hmm.pvalue import msv_pass

    lengths = reference.hmmer_lengths(as_database(os.path.join(DATA, "proteome.faa.gz")))
    lengths = np.concatenate((lengths, [0, 1, 2, 35000]))
    rng = np.random.default_rng(5)
    for hmm in read_hmms(os.path.join(DATA, "hmms.hmm")):
        prof = build_msv_profile(hmm)
        raw = (rng.integers(0, 256, lengths.size) | (rng.random(lengths.size) < 0.02) << 8).astype(np.uint32)
        for F1, slack in ((0.02, 1e-3), (0.3, 0.0)):
            want = msv_pass(reference.msv_from_bytes(prof, raw & 255, (raw >> 8) & 1, lengths), lengths, hmm, F1,
                            slack_bits=slack) & (lengths > 0)
            assert np.array_equal(msv_pass_bytes(prof, hmm, raw, lengths, F1, slack), want), hmm.name


def test_target_codes_compiled_and_numpy(monkeypatch):
    """clalign.hmm.targets: pyhmmer's own reading of the bundled proteome (Easel codes, '*'
    stops included) from both translations (numpy for small batches, compiled for large)."""
    import numpy as np
    from pyhmmer.easel import Alphabet, SequenceFile

    from clalign.data import as_database
    from clalign.hmm import targets

    path = os.path.join(DATA, "proteome.faa.gz")
    db = as_database(path)
    with SequenceFile(path, digital=True, alphabet=Alphabet.amino()) as fh:
        ref = [bytes(s.sequence) for s in fh]
    idx = np.array([5, 0, 2099, 7, 7, 1000], dtype=np.int64)
    idx = np.concatenate((idx, np.arange(2100)))
    for threshold in (1 << 62, 0):
        monkeypatch.setattr(targets, "COMPILED_MIN_RESIDUES", threshold)
        monkeypatch.setattr(targets, "COMPILED_LOADED_MIN", threshold)
        for sel in (idx, idx[:0], idx[:1]):
            out, off = targets.Targets(db, db.stops).codes(sel)
            assert [out[a:b].tobytes() for a, b in zip(off[:-1], off[1:])] == [ref[i] for i in sel]


def test_blocks_in_one_assignment_and_targets_built_up_front(tmp_path, monkeypatch):
    """clalign.hmm.targets: a block filled by slice assignment holds the very sequences in order;
    a search that builds every target's sequence before its threads start (forced here; by
    default from 35 models at F1 0.02) writes the reference tables, bare (-Z unset) or
    described (-Z)."""
    import numpy as np
    from pyhmmer.easel import Alphabet

    from clalign.data import as_database
    from clalign.hmm import targets

    assert not targets.prebuild_all(34, 0.02) and targets.prebuild_all(35, 0.02)
    assert targets.prebuild_all(1, 1.0) and not targets.prebuild_all(1000, 0.0)
    db = as_database(FAA)
    t = targets.Targets(db, db.stops)
    t.build_all(Alphabet.amino())
    assert len(t.seqs) == len(db) and not t.described
    idx = np.array([7, 0, 7, len(db) - 1])
    blk = targets.block(t, idx, Alphabet.amino(), described=False)
    assert len(blk) == 4 and all(blk[k] is t.seqs[int(i)] for k, i in enumerate(idx))
    assert blk.largest() is t.seqs[int(idx[np.argmax([len(t.seqs[int(i)]) for i in idx])])]
    monkeypatch.setattr(targets, "PREBUILD_SHARE", 0.0)
    tbl, dom, _, _ = _run_clalign(tmp_path, os.path.join(TXT, "PF02826.hmm"))
    assert _rows(tbl) == _rows(os.path.join(PYDATA, "tables", "PF02826.tbl"))
    assert _rows(dom) == _rows(os.path.join(PYDATA, "tables", "PF02826.domtbl"))
    if HMMSEARCH is not None:
        hmm = os.path.join(TXT, "LuxC.hmm")
        (tmp_path / "z").mkdir()
        ctbl, _, _, _ = _run_clalign(tmp_path / "z", hmm, ("-Z", "1000"))
        h = str(tmp_path / "h.tbl")
        subprocess.run([HMMSEARCH, "--noali", "--tblout", h, "-o", os.devnull, "-Z", "1000", hmm, FAA], check=True)
        assert _rows(ctbl) == _rows(h)


def test_model_pyhmmer_refuses_is_an_error_in_model_order(monkeypatch):
    """A model whose pyhmmer search fails (its second pass runs in a worker's callback) is an
    InputError naming it, raised when the main loop reaches it: the models before it are yielded."""
    from clalign.errors import InputError
    from clalign.hmm import search as S

    orig = S._Search._pyhmmer_part

    def part(self, phmm, block, *a):
        if phmm.name in ("LuxC", b"LuxC"):
            raise ValueError("refused")
        return orig(self, phmm, block, *a)

    monkeypatch.setattr(S._Search, "_pyhmmer_part", part)
    hmms = os.path.join(DATA, "hmms.hmm")
    got = []
    with pytest.raises(InputError, match="cannot search model 'LuxC'"):
        for r in hmmsearch(hmms, FAA, cpus=2, engine="opencl"):
            got.append(r.hmm.name)
    names = [ln.split()[1] for ln in open(hmms) if ln.startswith("NAME ")]
    assert got == names[:names.index("LuxC")]
