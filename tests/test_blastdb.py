"""BLAST+ database reader: sequences, ids and titles equal the FASTA makeblastdb was given,
subject ids equal what BLAST+ 2.12 prints, and damaged databases give one-line errors.

The databases under data/blastdb/db were made here by makeblastdb 2.12 (data/blastdb/make.sh,
provenance in data/blastdb/README.md); test_makeblastdb_* build more when makeblastdb exists.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

from clalign.data import DNA, PROTEIN, Database, as_database
from clalign.data.blastdb import is_blastdb, open_blast_nucleotide, open_blastdb
from clalign.data.nucleotide import NCBI4NA_LETTERS, NucleotideDatabase
from clalign.errors import InputError

HERE = os.path.join(os.path.dirname(__file__), "data", "blastdb")
DB = os.path.join(HERE, "db")
PROT_DBS = ["prot_v4", "prot_v5", "prot_ps_v4", "prot_ps_v5", "prot_mv"]
NUCL_DBS = ["nucl_v4", "nucl_v5", "nucl_ps_v4", "nucl_ps_v5", "nucl_mv"]


def _fasta(name, alphabet):
    return Database.from_fasta(os.path.join(HERE, name), alphabet)


def _same_as_fasta(db, ref, parsed_ids):
    assert len(db) == len(ref)
    # makeblastdb keeps a trailing '*' as a residue; the reader moves it to stops, as our FASTA reader
    assert np.array_equal(db.lengths, ref.lengths) and np.array_equal(db.stops, ref.stops)
    assert np.array_equal(np.asarray(db.residues), np.asarray(ref.residues))
    assert np.array_equal(db.offsets, ref.offsets)
    for i in range(len(ref)):
        assert db.sequence_str(i) == ref.sequence_str(i)
    assert list(db.descriptions) == list(ref.descriptions)
    if not parsed_ids:
        assert list(db.ids) == list(ref.ids)


@pytest.mark.parametrize("name", PROT_DBS)
def test_protein_equals_fasta(name):
    db = open_blastdb(os.path.join(DB, name))
    assert db.alphabet is PROTEIN
    _same_as_fasta(db, _fasta("prot.fa", "protein"), "_ps_" in name)
    assert db.blast_ids.stitle(0) == ("U O J B Z X and a stop" if "_ps_" in name
                                      else "special U O J B Z X and a stop")
    assert len(db.blast_volumes) == (2 if name.endswith("_mv") else 1)


@pytest.mark.parametrize("name", NUCL_DBS)
def test_nucleotide_equals_fasta(name):
    ref = _fasta("nucl.fa", "dna")
    db = open_blastdb(os.path.join(DB, name))
    assert db.alphabet is DNA
    _same_as_fasta(db, ref, "_ps_" in name)
    nt = open_blast_nucleotide(os.path.join(DB, name))
    assert isinstance(db.nucleotide, NucleotideDatabase) and nt.total_bases == ref.total_residues
    for i in range(len(ref)):
        codes = ref.sequence(i)
        four = nt.ncbi4na(i)
        assert "".join(NCBI4NA_LETTERS[c] for c in four) == ref.sequence_str(i).replace("-", "N")
        two = nt.ncbi2na(i)
        plain = codes < 4
        assert np.array_equal(two[plain], codes[plain])  # ambiguous positions hold a random base
        assert nt.packed(i).size == (len(codes) + 3) // 4
    assert nt.runs[:, 2].max() <= 4095  # makeblastdb splits the 5000-N run


def test_ambiguity_formats_and_runs():
    nt = open_blast_nucleotide(os.path.join(DB, "nucl_v4"))
    ids = list(nt.ids)
    runs = nt.ambiguities(ids.index("runs"))
    assert runs.tolist() == [[20, 40, 15], [63, 16, 5], [82, 15, 15]]  # new format (runs > 15)
    split = nt.ambiguities(ids.index("split"))
    assert split[:, 1].sum() == 5000 and split[:, 1].max() == 4095
    lower = nt.ambiguities(ids.index("lower"))
    assert lower.tolist() == [[4, 2, 15], [10, 1, 5], [11, 1, 10]]  # old format


def _golden(name):
    with open(os.path.join(HERE, "golden", name + ".tsv")) as fh:
        return [line.rstrip("\n").split("\t") for line in fh]


@pytest.mark.parametrize("name,base", [("ids", 58), ("ids_ps", 58), ("nids", 81), ("nids_ps", 81)])
def test_blast_ids_as_blast_prints_them(name, base):
    db = open_blastdb(os.path.join(DB, name))
    b = db.blast_ids
    rows = _golden(name)
    assert len(rows) == len(db)
    for row in rows:
        oid = int(row[0]) - base  # every subject has its own length
        got = [b.sseqid(oid), b.sacc(oid), b.stitle(oid), b.sallseqid(oid), b.sallacc(oid),
               b.salltitles(oid), b.sgi(oid)]
        assert got == row[1:], (oid, got, row)
        assert db.ids[oid] == row[1]


def test_open_hooks_and_detection():
    prefix = os.path.join(DB, "prot_mv")
    assert is_blastdb(prefix) and not is_blastdb(os.path.join(DB, "nothing"))
    for db in (Database.open(prefix), as_database(prefix)):
        assert len(db) == 11 and db.blast_title == "prot.fa"
    with pytest.raises(InputError, match="no BLAST database"):
        open_blastdb(os.path.join(DB, "nothing"))


def test_kind_picked_by_alphabet_when_names_clash(tmp_path):
    for f in os.listdir(DB):
        if f.startswith(("prot_v4.", "nucl_v4.")):
            shutil.copy(os.path.join(DB, f), tmp_path / f.replace("prot_v4", "x").replace("nucl_v4", "x"))
    x = str(tmp_path / "x")
    assert as_database(x).alphabet is PROTEIN and as_database(x, "protein").alphabet is PROTEIN
    assert as_database(x, "dna").alphabet is DNA and len(as_database(x, "nucl")) == 21
    assert as_database(x, DNA).alphabet is DNA


def test_blastdb_env_and_nested_alias(tmp_path, monkeypatch):
    monkeypatch.setenv("BLASTDB", DB)
    assert len(open_blastdb("prot_v4")) == 11  # found through $BLASTDB, as BLAST+ does
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prot_v4").write_text(">local file\nMKV\n")  # an existing file beats $BLASTDB
    assert as_database("prot_v4").ids[0] == "local" and as_database("prot_v5").blast_title == "prot.fa"
    (tmp_path / "both.pal").write_text(f'TITLE two\nDBLIST "{os.path.join(DB, "prot_mv")}" prot_v5\n')
    db = open_blastdb(str(tmp_path / "both"))  # an alias of an alias and a volume ($BLASTDB)
    assert len(db) == 22 and db.blast_volumes[-1].endswith("prot_v5")
    assert db.sequence_str(11) == db.sequence_str(0) and db.ids[12] == db.ids[1]


def test_lazy_tables_bulk_and_subset():
    db = open_blastdb(os.path.join(DB, "prot_ps_v5"))
    ref = _fasta("prot.fa", "protein")
    lazy = db.subset([5, 2])  # before any bulk decode: only these headers are read
    assert list(lazy.ids) == [ref.ids[5], ref.ids[2]] and db.ids._blob is None
    assert list(lazy.descriptions) == [ref.descriptions[5], ref.descriptions[2]]
    assert db.ids.blob.tobytes().decode() == "".join(ref.ids)  # bulk form, decoded once
    sub = db.subset([3, 1])
    assert list(sub.ids) == [ref.ids[3], ref.ids[1]]


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 22])
def test_from_database_round_trip(chunk):
    ref = _fasta("nucl.fa", "dna")
    packed = NucleotideDatabase.from_database(ref, chunk=chunk)
    assert packed.runs.tolist() == NucleotideDatabase.from_database(ref).runs.tolist()  # pieces re-joined
    blast = open_blast_nucleotide(os.path.join(DB, "nucl_mv"))
    for i in range(len(ref)):  # same runs as makeblastdb's, but for its 4095-base split
        if blast.ambiguities(i)[:, 1].max(initial=0) < 4095:
            assert np.array_equal(packed.ambiguities(i), blast.ambiguities(i))
    for nt in (packed, blast):
        for i in range(len(ref)):
            assert np.array_equal(nt.codes(i), ref.sequence(i))
        residues, offsets = nt.all_codes(chunk=chunk)  # pieces of `chunk` bytes/bases
        assert np.array_equal(residues, ref.residues) and np.array_equal(offsets, ref.offsets)


# --- damaged databases -------------------------------------------------------------------
def _copy(tmp_path, name):
    for f in os.listdir(DB):
        if f.startswith(name + "."):
            shutil.copy(os.path.join(DB, f), tmp_path / f)
    return str(tmp_path / name)


def _patch(path, offset, data):
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


@pytest.mark.parametrize("what,message", [
    ("version", "format version"), ("seqtype", "sequence type"), ("count", "sequence count"),
    ("truncate_psq", "sequence offsets"), ("truncate_pin", "index field"), ("missing_phr", "header file"),
    ("total", "total length"), ("separator", "NUL-terminated"), ("code", "NCBIstdaa"),
])
def test_damaged_protein(tmp_path, what, message):
    p = _copy(tmp_path, "prot_v4")
    if what == "version":
        _patch(p + ".pin", 0, b"\0\0\0\x07")
    elif what == "seqtype":
        _patch(p + ".pin", 4, b"\0\0\0\0")
    elif what == "count":
        size = os.path.getsize(p + ".pin")
        raw = open(p + ".pin", "rb").read()
        pos = raw.index(b"\0\0\0\x0b")  # 11 sequences
        _patch(p + ".pin", pos, b"\x7f\xff\xff\xff")
        assert os.path.getsize(p + ".pin") == size
    elif what == "truncate_psq":
        os.truncate(p + ".psq", os.path.getsize(p + ".psq") - 5)
    elif what == "truncate_pin":
        os.truncate(p + ".pin", 30)
    elif what == "missing_phr":
        os.remove(p + ".phr")
    elif what == "total":
        raw = open(p + ".pin", "rb").read()
        n = raw.index(b"\0\0\0\x0b") + 4
        _patch(p + ".pin", n, b"\x01")
    elif what == "separator":
        _patch(p + ".psq", 0, b"\x01")
    elif what == "code":
        _patch(p + ".psq", 2, b"\x40")
    with pytest.raises(InputError, match=message) as err:
        open_blastdb(p)
    assert "\n" not in str(err.value) and "prot_v4" in str(err.value)


def test_damaged_ambiguity_and_header(tmp_path):
    p = _copy(tmp_path, "nucl_v4")
    nt = open_blast_nucleotide(p)
    i = list(nt.ids).index("runs")
    vol = __import__("clalign.data.blastdb", fromlist=["Volume"]).Volume(p, "nucl")
    _patch(p + ".nsq", int(vol.amb[i]) + 8, b"\xff\xff\xff\xff")  # a run start far past the end
    with pytest.raises(InputError, match="ambiguity table"):
        open_blast_nucleotide(p)
    q = _copy(tmp_path, "prot_ps_v4")
    _patch(q + ".phr", 1, b"\x85")  # a bad BER length
    db = open_blastdb(q)
    with pytest.raises(InputError, match="bad header of OID 0"):
        db.blast_ids.sseqid(0)


def test_alias_errors(tmp_path):
    p = _copy(tmp_path, "prot_mv")
    with open(p + ".pal", "a") as fh:
        fh.write("GILIST some.gil\n")
    with pytest.raises(InputError, match="GILIST"):
        open_blastdb(p)
    with open(p + ".pal", "w") as fh:
        fh.write(f"DBLIST {os.path.basename(p)}\n")
    with pytest.raises(InputError, match="refer to themselves"):
        open_blastdb(p)


def test_header_missing_a_required_field_is_an_input_error(tmp_path):
    """Found by test_fuzz_reader: one byte of nucl_v4.nhr changed (offset 466 to 32) leaves a
    general Seq-id without its db field; the reader said KeyError, now a one-line InputError."""
    for e in ("nin", "nsq", "nhr"):
        data = bytearray(open(os.path.join(DB, f"nucl_v4.{e}"), "rb").read())
        if e == "nhr":
            data[466] = 32
        (tmp_path / f"nucl_v4.{e}").write_bytes(bytes(data))
    db = open_blastdb(str(tmp_path / "nucl_v4"))
    with pytest.raises(InputError, match="required field"):
        for i in range(len(db)):
            db.blast_ids.sseqid(i)


def test_fuzz_reader(tmp_path):
    """Random byte changes and truncations: the reader succeeds or raises InputError, nothing else."""
    pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    names = ["prot_ps_v5", "nucl_v4"]
    files = {n: {e: open(os.path.join(DB, f"{n}.{e}"), "rb").read() for e in
                 (("pin", "psq", "phr") if n.startswith("prot") else ("nin", "nsq", "nhr"))} for n in names}

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(names), st.integers(0, 2), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                                                 max_size=4), st.integers(0, 10**6))
    def run(name, which, edits, cut):
        ext = list(files[name])[which]
        d = tmp_path / "f"
        d.mkdir(exist_ok=True)
        for e, data in files[name].items():
            data = bytearray(data)
            if e == ext:
                for pos, val in edits:
                    if data:
                        data[pos % len(data)] = val
                if cut % 3 == 0:
                    data = data[:cut % (len(data) + 1)]
            (d / f"{name}.{e}").write_bytes(bytes(data))
        try:
            db = open_blastdb(str(d / name))
            for i in range(len(db)):
                db.blast_ids.sseqid(i)
                db.blast_ids.salltitles(i)
        except InputError as exc:
            assert "\n" not in str(exc)

    run()


# --- fresh databases from makeblastdb, when BLAST+ is installed ----------------------------
def _makeblastdb(tmp_path, fasta, dbtype, *extra):
    out = str(tmp_path / "db")
    subprocess.run(["makeblastdb", "-in", fasta, "-dbtype", dbtype, "-out", out, *extra],
                   check=True, stdout=subprocess.DEVNULL)
    return out


needs_blast = pytest.mark.skipif(
    shutil.which("makeblastdb") is None,
    reason="makeblastdb (BLAST+) is not installed; the committed databases cover the reader")


def test_compact_in_slices(monkeypatch):
    """The threaded ``src[keep]`` (large volumes) equals numpy's, at sizes around the slices."""
    from clalign.data import blastdb

    monkeypatch.setattr(blastdb, "THREADED_MIN_BYTES", 0)
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 7, 8, 9, 1000, 100_003):
        src = rng.integers(0, 28, n).astype(np.uint8)
        for keep in (rng.random(n) < 0.97, np.zeros(n, bool), np.ones(n, bool)):
            got = blastdb._compact(src, keep)
            assert got.dtype == np.uint8 and np.array_equal(got, src[keep])


@needs_blast
@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("version,extra", [("4", ()), ("5", ("-max_file_sz", "300000"))])
def test_makeblastdb_proteome(tmp_path, version, extra, threaded, monkeypatch):
    from clalign.data import blastdb

    if threaded:
        monkeypatch.setattr(blastdb, "THREADED_MIN_BYTES", 0)
    src = os.path.join(os.path.dirname(__file__), "..", "data", "proteome.faa.gz")
    fasta = str(tmp_path / "proteome.faa")
    import gzip
    with gzip.open(src, "rb") as fi, open(fasta, "wb") as fo:
        fo.write(fi.read())
    db = open_blastdb(_makeblastdb(tmp_path, fasta, "prot", "-blastdb_version", version, *extra))
    ref = Database.from_fasta(fasta, "protein")
    assert ref.stops.sum() == 2099  # prodigal's trailing '*'
    _same_as_fasta(db, ref, False)


@needs_blast
def test_makeblastdb_long_nucleotide(tmp_path):
    rng = np.random.default_rng(5)
    seqs = []
    for n in (4, 8, 4095, 4096, 4097, 70001):
        s = np.array(list("ACGT"))[rng.integers(0, 4, n)]
        k = rng.integers(0, n, max(1, n // 300))
        s[k] = np.array(list("NRYKMSWBDHV"))[rng.integers(0, 11, k.size)]
        seqs.append("".join(s))
    fasta = tmp_path / "g.fa"
    fasta.write_text("".join(f">s{i}\n{s.lower() if i % 2 else s}\n" for i, s in enumerate(seqs)))
    nt = open_blast_nucleotide(_makeblastdb(tmp_path, str(fasta), "nucl", "-parse_seqids"))
    for i, s in enumerate(seqs):
        assert nt.sequence_str(i) == s
        assert nt.ids[i] == f"s{i}"


def test_makedb_nucl_writes_2bit_and_open_nucleotide(tmp_path):
    from click.testing import CliRunner

    from clalign.data.cli import makedb
    from clalign.data.nucleotide import PACKED_FILES, open_nucleotide

    fasta = os.path.join(HERE, "nucl.fa")
    out = tmp_path / "nt"
    r = CliRunner().invoke(makedb, [fasta, str(out), "-dbtype", "nucl", "-q"])
    assert r.exit_code == 0, r.output
    assert all((out / f"{n}.npy").exists() for n in PACKED_FILES)
    ref = _fasta("nucl.fa", "dna")
    for src in (str(out), fasta, os.path.join(DB, "nucl_v5"), ref):
        nt = open_nucleotide(src)
        assert [nt.sequence_str(i) for i in range(len(nt))] == [ref.sequence_str(i) for i in range(len(ref))]
        assert list(nt.ids) == list(ref.ids)
    assert isinstance(open_nucleotide(str(out)).data, np.memmap)  # the saved 2-bit files, mapped
    np.save(out / "nt_starts.npy", np.array([10**9], dtype=np.int64))  # inconsistent: packed again
    assert open_nucleotide(str(out)).sequence_str(0) == ref.sequence_str(0)
    with pytest.raises(InputError, match="not a nucleotide database"):
        open_nucleotide(os.path.join(DB, "prot_v4"))


@needs_blast
def test_makeblastdb_stops_like_fasta(tmp_path):
    fasta = tmp_path / "st.fa"
    fasta.write_text(">a\nMKVLAAGIVALLLAAGCSSK**\n>b\nMKVLAAGIV*ALLLAAGCSSK*\n>c\nW\n")
    db = open_blastdb(_makeblastdb(tmp_path, str(fasta), "prot"))
    _same_as_fasta(db, Database.from_fasta(str(fasta), "protein"), False)
    assert db.stops.tolist() == [2, 1, 0] and db.sequence_str(1) == "MKVLAAGIV*ALLLAAGCSSK"


def test_sw_same_on_blastdb_and_fasta():
    """An engine gives the same scores on a makeblastdb database as on its FASTA (sw on PoCL)."""
    from clalign.sw import sw_scores

    q = "MKUOJBZXACDEFGHIKLMNPQRSTVWY"
    want = sw_scores(q, os.path.join(HERE, "prot.fa"))
    for name in ("prot_v4", "prot_ps_v5", "prot_mv"):
        assert np.array_equal(sw_scores(q, os.path.join(DB, name)), want)


def test_fuzz_alias_file(tmp_path):
    """Arbitrary alias text: a database or an InputError, nothing else."""
    pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    for f in os.listdir(DB):
        if f.startswith("prot_mv."):
            shutil.copy(os.path.join(DB, f), tmp_path / f)
    words = st.sampled_from(["DBLIST", "TITLE", "GILIST", "NSEQ", "prot_mv.00", "prot_mv.01", "prot_mv",
                             '"prot_mv.00', "\0", "#", "\n", " ", "x.pal", "/nonexistent"])

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(words, st.text(max_size=8)), max_size=12))
    def run(parts):
        (tmp_path / "prot_mv.pal").write_text(" ".join(parts), encoding="utf-8", errors="replace")
        try:
            open_blastdb(str(tmp_path / "prot_mv"))
        except InputError as exc:
            assert "\n" not in str(exc)

    run()


def test_subject_ids_of_fasta_equal_blastdb_without_parse_seqids():
    from clalign.data.deflines import subject_ids

    fasta, blast = subject_ids(_fasta("prot_ids.fa", "protein")), subject_ids(open_blastdb(os.path.join(DB, "ids")))
    cols = ("sseqid", "sacc", "stitle", "sallseqid", "sallacc", "sgi")
    for oid in range(len(blast)):  # the last has a ctrl-A in its defline: a space in BLAST's title
        assert [getattr(fasta, c)(oid) for c in cols] == [getattr(blast, c)(oid) for c in cols]
    # control characters in a description: makeblastdb 2.12 made the title "a x   b#c d" of ">a x<TAB>b<^B>c d"
    assert subject_ids(Database.from_sequences(["MK"], ["a"], ["x\tb\x02c d"])).stitle(0) == "a x   b#c d"
    # and UTF-8: ">u1 café α-helix" gave sseqid "u1", stitle "u1 caf## ##-helix" (one '#' a byte)
    ids = subject_ids(Database.from_sequences(["MK"], ["u1"], ["café α-helix"]))
    assert (ids.sseqid(0), ids.stitle(0)) == ("u1", "u1 caf## ##-helix")
