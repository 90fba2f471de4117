import json
import os

import numpy as np
import pytest

from clalign.data import DNA, PROTEIN, Database, as_database, dbwrite, makedb
from clalign.errors import InputError

FA = ">s1 first one\nMKVLA\n>s2\nAC\n>s3 third\nWWPPE\n>s4 dup len\nAC*\n>s5 ünïcode desc\nmkvlaggg\n"


def _same(a, b):
    assert len(a) == len(b)
    assert a.alphabet is b.alphabet
    assert np.array_equal(np.asarray(a.residues), np.asarray(b.residues))
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.lengths, b.lengths)
    assert np.array_equal(a.order, b.order)
    assert list(a.ids) == list(b.ids) and list(a.descriptions) == list(b.descriptions)
    assert np.array_equal(np.asarray(a.stops), np.asarray(b.stops))


def test_from_fasta_api(write_file):
    db = Database.from_fasta(write_file("a.fa", FA))
    assert len(db) == 5 and db.alphabet is PROTEIN
    assert db.residues.dtype == np.uint8 and db.offsets.dtype == np.int64 and db.lengths.dtype == np.int32
    assert db.order.dtype == np.int64
    assert db.lengths.tolist() == [5, 2, 5, 2, 8]
    assert db.offsets.tolist() == [0, 5, 7, 12, 14, 22]
    assert db.total_residues == 22 and db.max_length == 8
    # stable: equal lengths keep input order
    assert db.order.tolist() == [1, 3, 0, 2, 4]
    assert list(db.ids) == ["s1", "s2", "s3", "s4", "s5"]
    assert db.descriptions[4] == "ünïcode desc" and db.descriptions[1] == ""
    assert PROTEIN.decode(db.sequence(2)) == "WWPPE" and db.sequence_str(-1) == "MKVLAGGG"


def test_makedb_open_roundtrip(write_file, tmp_path, capsys):
    fa = write_file("a.fa.gz", FA, gzip=True)
    out = tmp_path / "db"
    db = makedb(fa, out)
    assert "5 sequences, 22 residues" in capsys.readouterr().err
    mem = Database.from_fasta(fa)
    opened = Database.open(out)
    _same(opened, mem)
    _same(db, mem)
    assert isinstance(opened.residues, np.memmap)
    header = json.loads((out / "header.json").read_text())
    assert header["format_version"] == 1 and header["alphabet"] == "protein"
    assert (header["sequences"], header["total_residues"], header["max_length"]) == (5, 22, 8)
    assert header["source"] == "a.fa.gz" and header["created_by"].startswith("clalign ")
    for f in os.listdir(out):  # nothing pickled
        if f.endswith(".npy"):
            np.load(out / f, allow_pickle=False)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_makedb_real_proteome(data_dir, tmp_path):
    db = makedb(os.path.join(data_dir, "proteome.faa.gz"), tmp_path / "p", quiet=True)
    assert len(db) == 2100 and db.total_residues == 680484 and db.alphabet is PROTEIN
    assert (np.diff(db.lengths[db.order]) >= 0).all()
    _same(db, Database.from_fasta(os.path.join(data_dir, "proteome.faa.gz")))


def test_makedb_dna(write_file, tmp_path):
    db = makedb(write_file("d.fa", ">c1\nACGTACGTACGTACGTNNRY\n>c2\nacgu\n"), tmp_path / "d", quiet=True)
    assert db.alphabet is DNA and db.sequence_str(0) == "ACGTACGTACGTACGTNNRY" and db.sequence_str(1) == "ACGT"
    with pytest.raises(InputError, match="illegal character 'Q' for the dna alphabet"):
        makedb(write_file("q.fa", ">c1\nACGQ\n"), tmp_path / "q", alphabet="dna", quiet=True)


def test_makedb_refuses_existing_and_force(write_file, tmp_path):
    fa = write_file("a.fa", FA)
    out = tmp_path / "db"
    makedb(fa, out, quiet=True)
    with pytest.raises(InputError, match="already exists; use --force"):
        makedb(fa, out, quiet=True)
    makedb(write_file("b.fa", ">x\nAAA\n"), out, force=True, quiet=True)
    assert len(Database.open(out)) == 1
    other = tmp_path / "notadb"
    other.mkdir()
    with pytest.raises(InputError, match="not a clalign database"):
        makedb(fa, other, force=True, quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.fa", "b.fa", "db", "notadb"]


def test_makedb_bad_fasta_leaves_nothing(write_file, tmp_path):
    fa = write_file("bad.fa", ">a\nAC\n>b\nA1C\n")
    with pytest.raises(InputError, match=r"bad.fa:4: illegal character '1'"):
        makedb(fa, tmp_path / "db", quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.fa"]


def test_makedb_interrupted_while_writing_leaves_nothing(write_file, tmp_path, monkeypatch):
    fa = write_file("a.fa", FA)
    real = dbwrite._write_npy
    calls = []

    def boom(*a, **k):
        calls.append(a[0])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(dbwrite, "_write_npy", boom)
    with pytest.raises(KeyboardInterrupt):
        makedb(fa, tmp_path / "db", quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.fa"]


def test_open_errors(tmp_path, write_file):
    with pytest.raises(InputError, match="no header.json"):
        Database.open(tmp_path)
    fa = write_file("a.fa", FA)
    makedb(fa, tmp_path / "db", quiet=True)
    os.remove(tmp_path / "db" / "lengths.npy")
    with pytest.raises(InputError, match="lengths.npy is missing"):
        Database.open(tmp_path / "db")


def test_as_database_three_forms(write_file, tmp_path):
    fa = write_file("a.fa", FA)
    mem = Database.from_fasta(fa)
    assert as_database(mem) is mem
    _same(as_database(fa), mem)
    makedb(fa, tmp_path / "db", quiet=True)
    _same(as_database(tmp_path / "db"), mem)
    _same(as_database(str(tmp_path / "db")), mem)
    with pytest.raises(InputError, match="no such file"):
        as_database(tmp_path / "missing")
    with pytest.raises(InputError, match="neither a prepared database folder nor a FASTA file"):
        as_database(write_file("x.txt", "hello\n"))
    with pytest.raises(InputError, match="not a prepared database"):
        as_database(tmp_path)


def test_subset(write_file, tmp_path):
    fa = write_file("a.fa", FA)
    makedb(fa, tmp_path / "db", quiet=True)
    for db in (Database.from_fasta(fa), Database.open(tmp_path / "db")):
        sub = db.subset([4, 0, 4])
        assert len(sub) == 3 and list(sub.ids) == ["s5", "s1", "s5"]
        assert [sub.sequence_str(i) for i in range(3)] == ["MKVLAGGG", "MKVLA", "MKVLAGGG"]
        assert sub.offsets.tolist() == [0, 8, 13, 21] and sub.lengths.tolist() == [8, 5, 8]
        assert sub.order.tolist() == [1, 0, 2] and sub.descriptions[0] == "ünïcode desc"
        assert len(db.subset(np.array([], dtype=np.int64))) == 0
        sorted_db = db.subset(db.order)
        assert (np.diff(sorted_db.lengths) >= 0).all()


def test_from_sequences():
    db = Database.from_sequences(["MKV", "acdef"], ids=["a", "b"])
    assert db.sequence_str(1) == "ACDEF" and list(db.ids) == ["a", "b"] and db.total_residues == 8


STOPS_FA = ">a\nMKV\n>b\nMKV*\n>c\nMK*V**\n*\n>d\nMKV\n**\r\n\r\n>e\nWW\n"
STOPS = [0, 1, 3, 2, 0]


def test_stops_from_fasta_save_open(write_file, tmp_path):
    """Trailing-stop counts survive makedb/save and open (memory-mapped, like the other arrays)."""
    fa = write_file("s.fa.gz", STOPS_FA, gzip=True)
    mem = Database.from_fasta(fa)
    assert mem.stops.tolist() == STOPS and mem.stops.dtype == np.uint32
    assert mem.lengths.tolist() == [3, 3, 4, 3, 2]
    db = makedb(fa, tmp_path / "db", quiet=True)
    assert db.stops.tolist() == STOPS
    header = json.loads((tmp_path / "db" / "header.json").read_text())
    assert header["format_version"] == 1 and header["trailing_stops"] == 6
    assert np.load(tmp_path / "db" / "stops.npy", mmap_mode="r").dtype == np.uint32
    for mmap in (True, False):
        _same(Database.open(tmp_path / "db", mmap=mmap), mem)
    mem.save(tmp_path / "db2")
    _same(Database.open(tmp_path / "db2"), mem)
    sub = Database.open(tmp_path / "db2").subset([3, 0, 2, 3])
    assert sub.stops.tolist() == [2, 0, 3, 2] and sub.stops.dtype == np.uint32


def test_stops_zero_when_unknown(write_file, tmp_path):
    assert Database.from_sequences(["MKV", "AC"]).stops.tolist() == [0, 0]
    assert Database.from_sequences([]).stops.size == 0
    # a database written before the counts were kept: no stops.npy, no header key
    fa = write_file("s.fa", STOPS_FA)
    out = tmp_path / "old"
    makedb(fa, out, quiet=True)
    os.remove(out / "stops.npy")
    header = json.loads((out / "header.json").read_text())
    del header["trailing_stops"], header["files"]   # neither was written then
    (out / "header.json").write_text(json.dumps(header))
    old = Database.open(out)
    assert old.stops.tolist() == [0] * 5 and old.lengths.tolist() == [3, 3, 4, 3, 2]
    assert old.sequence_str(2) == "MK*V" and old.subset([2]).stops.tolist() == [0]


def test_stops_file_errors(write_file, tmp_path):
    fa = write_file("s.fa", STOPS_FA)
    makedb(fa, tmp_path / "db", quiet=True)
    os.remove(tmp_path / "db" / "stops.npy")      # the header says it was written: truncated copy
    with pytest.raises(InputError, match="stops.npy is missing"):
        Database.open(tmp_path / "db")
    np.save(tmp_path / "db" / "stops.npy", np.zeros(4, dtype=np.uint32))
    with pytest.raises(InputError, match=r"stops.npy: file is 144 bytes, header.json records 148"):
        Database.open(tmp_path / "db")
    header = json.loads((tmp_path / "db" / "header.json").read_text())
    del header["files"]
    (tmp_path / "db" / "header.json").write_text(json.dumps(header))
    with pytest.raises(InputError, match=r"stops.npy: shape \(4,\) where shape \(5,\) is expected"):
        Database.open(tmp_path / "db")
    with pytest.raises(ValueError, match="one entry per sequence"):
        Database(np.zeros(3, np.uint8), np.array([0, 3]), ["a"], [""], "protein", stops=np.zeros(2, np.uint32))


def test_stops_of_real_proteome(data_dir, tmp_path):
    db = makedb(os.path.join(data_dir, "proteome.faa.gz"), tmp_path / "p", quiet=True)
    assert int(db.stops.sum()) == 2099 and int(db.lengths.sum()) + 2099 == 682583    # hmmsearch's count
