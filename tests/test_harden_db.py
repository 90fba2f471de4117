"""Issue 9, database half: makedb never destroys what is not a database, replaces one safely,
leaves nothing after errors and signals; damaged or hostile folders and inputs are one clear
error naming the file, never a crash, an OOM or a silently wrong answer."""
import errno
import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from clalign.data import Database, as_database, dbwrite, fasta, makedb, parse_fasta, rawread, read_fasta
from clalign.data.cli import makedb as makedb_cli
from clalign.errors import InputError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FA = ">a one\nMKVLA\n>b\nACDEFGHIK\n>c\nWW*\n"
FA2 = ">x\nPPPP\n"


def snapshot(root):
    """Every path under root (hidden ones too) -> its kind and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as fh:
                    out[rel] = ("file", hashlib.sha256(fh.read()).hexdigest())
    return out


def cli(args):
    r = CliRunner().invoke(makedb_cli, [str(a) for a in args])
    return r.exit_code, r.stdout, r.stderr


def one_error(stderr, *names):
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("clalign: error: "), stderr
    assert "Traceback" not in stderr
    for name in names:
        assert str(name) in lines[0], (name, stderr)
    return lines[0]


@pytest.fixture
def db(tmp_path, write_file):
    fa = write_file("in.fa", FA)
    makedb(fa, tmp_path / "db", quiet=True)
    return tmp_path / "db"


# --- makedb --force replaces only a provable database ----------------------------------
def _not_a_db(kind, path):
    path.mkdir()
    if kind == "header_and_more":
        (path / "header.json").write_text('{"format": "clalign-db", "format_version": 1}')
        (path / "precious.txt").write_text("keep me")
    elif kind == "bad_header":
        (path / "header.json").write_text('{"format": "other"}')
    elif kind == "version":
        (path / "header.json").write_text(json.dumps(
            {"format": "clalign-db", "format_version": 2, "alphabet": "protein", "sequences": 0,
             "total_residues": 0, "max_length": 0}))
    elif kind == "empty":
        pass


@pytest.mark.parametrize("kind", ["header_and_more", "bad_header", "version", "empty"])
def test_force_refuses_what_is_not_a_database(tmp_path, write_file, kind):
    fa = write_file("in.fa", FA)
    _not_a_db(kind, tmp_path / "out")
    before = snapshot(tmp_path)
    status, _, err = cli([fa, tmp_path / "out", "--force"])
    assert status == 2
    assert "refusing to replace it even with --force" in one_error(err, tmp_path / "out")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("extra", ["file", "folder", "symlink"])
def test_force_refuses_database_with_foreign_entries(db, tmp_path, write_file, extra):
    fa = write_file("in2.fa", FA2)
    if extra == "file":
        (db / "notes.txt").write_text("mine")
    elif extra == "folder":
        (db / "sub").mkdir()
    else:
        os.symlink(tmp_path / "in2.fa", db / "residues2.npy")
    before = snapshot(tmp_path)
    status, _, err = cli([fa, db, "--force"])
    assert status == 2 and "not a clalign database" in one_error(err, db)
    assert snapshot(tmp_path) == before


def test_force_refuses_symlink_to_database_and_plain_file(db, tmp_path, write_file):
    fa = write_file("in2.fa", FA2)
    os.symlink(db, tmp_path / "link")
    before = snapshot(tmp_path)
    for target in (tmp_path / "link", tmp_path / "in.fa"):
        status, _, err = cli([fa, target, "--force"])
        assert status == 2 and "refusing" in one_error(err, target)
    assert snapshot(tmp_path) == before


def test_force_replaces_database_by_exchange(db, tmp_path, write_file, monkeypatch):
    calls = []
    real = dbwrite._renameat2
    monkeypatch.setattr(dbwrite, "_renameat2", lambda s, d, f: calls.append(f) or real(s, d, f))
    status, _, _ = cli([write_file("in2.fa", FA2), db, "--force", "-q"])
    assert status == 0 and calls == [dbwrite._RENAME_EXCHANGE]
    assert list(Database.open(db).ids) == ["x"]
    assert sorted(os.listdir(tmp_path)) == ["db", "in.fa", "in2.fa"]


def test_force_replace_without_exchange_and_failed_second_rename(db, tmp_path, write_file, monkeypatch):
    monkeypatch.setattr(dbwrite, "_renameat2", lambda s, d, f: False)
    before = snapshot(db)
    real = os.rename

    def rename(src, dst):
        if str(src).endswith(".tmp") and os.path.basename(str(dst)) == "db":
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    status, _, err = cli([write_file("in2.fa", FA2), db, "--force"])
    assert status == 2 and "Input/output error" in one_error(err, db)
    assert snapshot(db) == before and sorted(os.listdir(tmp_path)) == ["db", "in.fa", "in2.fa"]
    monkeypatch.setattr(os, "rename", real)
    assert cli([tmp_path / "in2.fa", db, "--force", "-q"])[0] == 0
    assert list(Database.open(db).ids) == ["x"]


# --- signals: SIGTERM cleans up at once, SIGKILL leftovers are cleaned by the next run --------
_KILLER = """
import os, signal, sys
from clalign.data import dbwrite
real_write, real_rename, sig, where = dbwrite._write_npy, os.rename, int(sys.argv[1]), sys.argv[2]
calls = []
def write_array(*a, **k):
    calls.append(1)
    if where == "write" and len(calls) == 3:
        os.kill(os.getpid(), sig)
    return real_write(*a, **k)
def rename(src, dst):
    real_rename(src, dst)
    if where == "swap":
        os.kill(os.getpid(), sig)
dbwrite._write_npy = write_array
os.rename = rename
if where == "swap":
    dbwrite._renameat2 = lambda s, d, f: False
standalone = sys.argv[3] == "standalone"
sys.argv = ["clalign", *([] if standalone else ["makedb"]), *sys.argv[4:]]
if standalone:
    from clalign.data.cli import makedb as main
else:
    from clalign.cli import main
main()
"""


def _killed_run(sig, where, *args, how="group"):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", _KILLER, str(int(sig)), where, how, *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)


@pytest.mark.parametrize("how", ["group", "standalone"])
def test_sigterm_while_writing_leaves_nothing_and_keeps_old(db, tmp_path, write_file, how):
    fa = write_file("in2.fa", FA2)
    before = snapshot(tmp_path)
    r = _killed_run(signal.SIGTERM, "write", fa, db, "--force", how=how)
    assert r.returncode == 128 + signal.SIGTERM and "Traceback" not in r.stderr, r.stderr
    assert snapshot(tmp_path) == before


def test_sigkill_while_writing_then_next_run_cleans(db, tmp_path, write_file):
    fa = write_file("in2.fa", FA2)
    before = snapshot(db)
    r = _killed_run(signal.SIGKILL, "write", fa, db, "--force")
    assert r.returncode == -signal.SIGKILL
    left = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(left) == 1 and snapshot(db) == before           # the old database is untouched
    assert cli([fa, db, "--force", "-q"])[0] == 0
    assert sorted(os.listdir(tmp_path)) == ["db", "in.fa", "in2.fa"]


@pytest.mark.parametrize("recover_by", ["open", "makedb"])
def test_sigkill_between_the_two_renames_recovers_old(db, tmp_path, write_file, recover_by):
    fa = write_file("in2.fa", FA2)
    before = snapshot(db)
    r = _killed_run(signal.SIGKILL, "swap", fa, db, "--force")
    assert r.returncode == -signal.SIGKILL and not os.path.exists(db)
    assert [n.endswith(".old") for n in os.listdir(tmp_path) if n.startswith(".")] == [True, False] or \
        sorted(n.rsplit(".", 1)[1] for n in os.listdir(tmp_path) if n.startswith(".")) == ["old", "tmp"]
    if recover_by == "open":
        assert list(Database.open(db).ids) == ["a", "b", "c"] and snapshot(db) == before
    else:
        assert cli([fa, db, "--force", "-q"])[0] == 0 and list(Database.open(db).ids) == ["x"]
    assert sorted(os.listdir(tmp_path)) == ["db", "in.fa", "in2.fa"]


def test_derived_files_are_written_atomically_with_checksums(tmp_path, write_file):
    fa = write_file("in.fa", FA)
    makedb(fa, tmp_path / "db", quiet=True, derived=lambda d: {"nt_extra": np.arange(len(d), dtype=np.int64)})
    h = json.loads((tmp_path / "db" / "header.json").read_text())
    assert "nt_extra.npy" in h["files"] and np.load(tmp_path / "db" / "nt_extra.npy").tolist() == [0, 1, 2]
    assert cli(["--verify", tmp_path / "db"])[0] == 0
    assert cli([fa, tmp_path / "db", "--force", "-q"])[0] == 0         # still provably a database
    with pytest.raises(ValueError, match="derived file 'x'"):
        makedb(fa, tmp_path / "db2", quiet=True, derived=lambda d: {"x": np.zeros(1)})
    assert sorted(os.listdir(tmp_path)) == ["db", "in.fa"]


def test_output_created_meanwhile_is_never_replaced(tmp_path, write_file, monkeypatch):
    """Another process creating OUT (even an empty folder) while we build: we fail, it stays."""
    real = dbwrite._write_npy

    def write(h, a):
        if not (tmp_path / "db").exists():
            (tmp_path / "db").mkdir()
        return real(h, a)

    monkeypatch.setattr(dbwrite, "_write_npy", write)
    status, _, err = cli([write_file("in.fa", FA), tmp_path / "db"])
    assert status == 2 and "output already exists" in one_error(err, tmp_path / "db")
    assert sorted(os.listdir(tmp_path)) == ["db", "in.fa"] and os.listdir(tmp_path / "db") == []
    # in the last instant (after that check) the rename itself refuses: RENAME_NOREPLACE
    (tmp_path / "new").mkdir()
    with pytest.raises(OSError) as exc:
        dbwrite._renameat2(str(tmp_path / "new"), str(tmp_path / "db"), dbwrite._RENAME_NOREPLACE)
    assert exc.value.errno == errno.EEXIST and (tmp_path / "new").is_dir()


def test_leftovers_of_live_processes_are_kept(db, tmp_path, write_file):
    live = tmp_path / f"{dbwrite._prefix(str(db))}{dbwrite._HOST}-{os.getpid()}-0123abcd.tmp"
    live.mkdir()
    assert cli([write_file("in2.fa", FA2), db, "--force", "-q"])[0] == 0
    assert live.is_dir()


# --- output errors: one line, exit 2, nothing left --------------------------------------------
def _enospc(self, data):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("case", ["readonly", "missing_parent", "is_file", "enospc", "too_long"])
def test_output_errors(tmp_path, write_file, monkeypatch, case):
    fa = write_file("in.fa", FA)
    out = tmp_path / "db"
    if case == "readonly":
        ro = tmp_path / "ro"
        ro.mkdir()
        out = ro / "db"
        if os.geteuid() == 0:   # root writes anywhere: make the folder refuse as a read-only one would
            monkeypatch.setattr(os, "access", lambda *a, **k: False)
        else:
            ro.chmod(0o555)
    elif case == "missing_parent":
        out = tmp_path / "nope" / "db"
    elif case == "is_file":
        out = tmp_path / "in.fa"
    elif case == "enospc":
        monkeypatch.setattr(dbwrite._Hashing, "write", _enospc)
    else:
        out = tmp_path / ("x" * 300)
    before = snapshot(tmp_path)
    status, stdout, err = cli([fa, out, "--force"])
    line = one_error(err)
    assert status == 2 and stdout == ""
    want = {"readonly": "permission denied", "missing_parent": "parent folder does not exist",
            "is_file": "not a folder", "enospc": "No space left on device", "too_long": "longer than the file system"}
    assert want[case] in line and (str(out) in line or str(out.parent) in line)
    assert snapshot(tmp_path) == before


def test_files_follow_umask(tmp_path, write_file):
    old = os.umask(0o027)
    try:
        makedb(write_file("in.fa", FA), tmp_path / "db", quiet=True)
    finally:
        os.umask(old)
    assert (tmp_path / "db").stat().st_mode & 0o777 == 0o750
    assert {(p.stat().st_mode & 0o777) for p in (tmp_path / "db").iterdir()} == {0o640}


# --- damaged databases -----------------------------------------------------------------------
def _resave(db, name, arr):
    """Replace one array and record it in header.json as makedb would (a consistent checksum), so
    the open-time rules themselves must catch it."""
    np.save(db / f"{name}.npy", arr)
    h = json.loads((db / "header.json").read_text())
    data = (db / f"{name}.npy").read_bytes()
    h["files"][f"{name}.npy"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (db / "header.json").write_text(json.dumps(h))


DAMAGE = {  # name -> (file, new array or None, expected message)
    "offsets_decrease": ("offsets", np.array([0, 5, 4, 16], np.int64), "offsets.npy: decreases"),
    "offsets_end": ("offsets", np.array([0, 5, 14, 99], np.int64), "offsets.npy: must run from 0 to 16"),
    "lengths_wrong": ("lengths", np.array([5, 9, 3], np.int32), "lengths.npy: differ from the differences"),
    "lengths_dtype": ("lengths", np.array([5, 9, 2], np.int64), "lengths.npy: dtype int64 where int32"),
    "order_range": ("order", np.array([2, 0, 7], np.int64), "order.npy: is not a permutation"),
    "order_dup": ("order", np.array([2, 0, 0], np.int64), "order.npy: is not a permutation"),
    "order_unsorted": ("order", np.array([0, 1, 2], np.int64), "order.npy: does not sort"),
    "order_count": ("order", np.array([2, 0], np.int64), r"order.npy: shape \(2,\) where shape \(3,\)"),
    "order_2d": ("order", np.array([[2, 0, 1]], np.int64), r"order.npy: shape \(1, 3\)"),
    "residues_code": ("residues", np.array([1] * 15 + [200], np.uint8), "residues.npy: code 200 is outside"),
    "stops_huge": ("stops", np.array([0, 0, 2 ** 32 - 1], np.uint32), r"stops.npy: counts must lie in 0..1048576"),
    "stops_many": ("stops", np.array([0, 0, 2 ** 20 + 1], np.uint32), r"stops.npy: counts must lie in 0..1048576"),
    "id_offsets_beyond": ("id_offsets", np.array([0, 1, 2, 9], np.int64), "id_offsets.npy: must run from 0 to 3"),
    "ids_dtype": ("ids", np.array([97, 98, 99], np.int32), "ids.npy: dtype int32 where uint8"),
    "desc_offsets_decrease": ("desc_offsets", np.array([0, 3, 1, 3], np.int64), "desc_offsets.npy: decreases"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_array_is_refused_on_open_and_by_verify(db, case):
    name, arr, msg = DAMAGE[case]
    _resave(db, name, arr)
    before = snapshot(db)
    with pytest.raises(InputError, match=msg):
        Database.open(db)
    with pytest.raises(InputError, match=msg):
        as_database(str(db))
    status, out, err = cli(["--verify", db])
    assert status == 1 and out == "" and str(db / f"{name}.npy") in one_error(err)
    assert snapshot(db) == before


@pytest.mark.parametrize("how", ["truncate", "pad", "empty", "garbage", "huge_shape", "pickle", "header_text"])
def test_damaged_npy_file(db, how):
    f = db / "offsets.npy"
    raw = f.read_bytes()
    if how == "truncate":
        f.write_bytes(raw[:-5])
    elif how == "pad":
        f.write_bytes(raw + b"\0" * 8)
    elif how == "empty":
        f.write_bytes(b"")
    elif how == "garbage":
        f.write_bytes(b"\x93NUMPY\x01\x00" + b"\xff" * 40)
    elif how == "header_text":      # numpy's own parser raises tokenize.TokenError on this one
        f.write_bytes(raw[:80] + b"{" + raw[81:])
    elif how == "huge_shape":
        f.write_bytes(raw.replace(b"(4,)", b"(4611686018427387904,)".ljust(4)))
    else:
        np.save(f, np.array([object()], dtype=object), allow_pickle=True)
    h = json.loads((db / "header.json").read_text())
    del h["files"]                 # no recorded sizes: the .npy checks themselves must catch it
    (db / "header.json").write_text(json.dumps(h))
    with pytest.raises(InputError, match=r"offsets.npy: "):
        Database.open(db)
    with pytest.raises(InputError, match=r"offsets.npy: "):
        Database.open(db, mmap=False)


HEADER_EDITS = {
    "sequences": ({"sequences": 4}, r"offsets.npy: shape \(4,\) where shape \(5,\)"),
    "negative": ({"sequences": -1}, "'sequences' must be a non-negative integer"),
    "float": ({"total_residues": 16.0}, "'total_residues' must be a non-negative integer"),
    "huge": ({"sequences": 2 ** 62}, r"offsets.npy: shape"),
    "alphabet": ({"alphabet": "klingon"}, "unknown alphabet 'klingon'"),
    "version": ({"format_version": 2}, "format version 2 is not supported"),
    "format": ({"format": "x"}, "not a clalign database header"),
    "max_length": ({"max_length": 3}, "max_length 3 differs"),
    "trailing_stops": ({"trailing_stops": 7}, "trailing_stops differs"),
    "files": ({"files": {"../etc": {"bytes": 1, "sha256": "0" * 64}}}, "field 'files'"),
    "files_size": ({"files": {"order.npy": {"bytes": 1, "sha256": "0" * 64}}}, "order.npy: file is 152 bytes"),
}


@pytest.mark.parametrize("case", sorted(HEADER_EDITS))
def test_header_edits(db, case):
    edit, msg = HEADER_EDITS[case]
    h = json.loads((db / "header.json").read_text())
    h.update(edit)
    (db / "header.json").write_text(json.dumps(h))
    with pytest.raises(InputError, match=msg):
        Database.open(db)
    assert cli(["--verify", db])[0] == 1


@pytest.mark.parametrize("name", ["residues.npy", "header.json"])
@pytest.mark.parametrize("kind", ["fifo", "folder", "dev_zero"])
def test_special_files_in_the_folder_do_not_hang(db, name, kind):
    os.remove(db / name)
    if kind == "fifo":
        os.mkfifo(db / name)
    elif kind == "folder":
        (db / name).mkdir()
    else:
        os.symlink("/dev/zero", db / name)
    with pytest.raises(InputError, match=name.replace(".", r"\.") + "|header"):
        Database.open(db)
    status, _, err = cli(["--verify", db])
    assert status == 1 and one_error(err, db)


def test_header_not_json_or_not_object(db):
    for text in ("[1, 2]", "{", "\xff\xfe", "null", "[" * 100000 + "]" * 100000):
        (db / "header.json").write_bytes(text.encode("latin-1"))
        with pytest.raises(InputError, match="header"):
            Database.open(db)


def test_verify_ok_checksum_and_usage(db, tmp_path):
    status, out, err = cli(["--verify", db])
    assert status == 0 and out == f"{db}: OK (3 sequences, 16 residues, protein; 9 files match their sha256)\n"
    f = db / "residues.npy"
    raw = bytearray(f.read_bytes())
    raw[-1] = 1 if raw[-1] != 1 else 2        # a valid code: open cannot tell, --verify can
    f.write_bytes(bytes(raw))
    assert Database.open(db) is not None
    status, out, err = cli(["--verify", db])
    assert status == 1 and "checksum (sha256) differs" in one_error(err, f)
    status, _, err = cli(["--verify", db, tmp_path / "x"])
    assert status == 2 and "exactly one database folder" in one_error(err)
    status, _, err = cli(["--verify", tmp_path / "nope"])
    assert status == 1 and "no such prepared database folder" in one_error(err, tmp_path / "nope")
    status, _, err = cli([tmp_path / "in.fa"])
    assert status == 2 and "needs a FASTA file and an output folder" in one_error(err)


def test_verify_old_database_without_checksums(db):
    h = json.loads((db / "header.json").read_text())
    del h["files"]
    (db / "header.json").write_text(json.dumps(h))
    status, out, _ = cli(["--verify", db])
    assert status == 0 and "no checksums recorded" in out


def test_verify_finds_unstable_order(db):
    _resave(db, "order", np.array([2, 0, 1], np.int64))    # lengths 5, 9, 2: fine
    assert cli(["--verify", db])[0] == 0
    _resave(db, "lengths", np.array([5, 5, 2], np.int32))
    _resave(db, "offsets", np.array([0, 5, 10, 12], np.int64))
    h = json.loads((db / "header.json").read_text())
    h.update(total_residues=12, max_length=5)
    (db / "header.json").write_text(json.dumps(h))
    _resave(db, "residues", np.ones(12, np.uint8))
    _resave(db, "order", np.array([2, 1, 0], np.int64))
    assert Database.open(db).order.tolist() == [2, 1, 0]
    status, _, err = cli(["--verify", db])
    assert status == 1 and "ties of equal length are not in input order" in one_error(err, db / "order.npy")


# --- arrays handed to the API ----------------------------------------------------------------
def test_api_arrays_are_validated():
    with pytest.raises(ValueError, match="residues: code 30 is outside the protein alphabet"):
        Database(np.array([1, 30], np.uint8), np.array([0, 2]), ["a"], [""], "protein")
    with pytest.raises(ValueError, match="residues: values must lie in 0..255"):
        Database(np.array([1, 256]), np.array([0, 2]), ["a"], [""], "protein")
    with pytest.raises(ValueError, match="offsets: must run from 0 to 2"):
        Database(np.array([1, 2], np.uint8), np.array([0, 3]), ["a"], [""], "protein")
    with pytest.raises(ValueError, match="order: is not a permutation"):
        Database(np.array([1, 2], np.uint8), np.array([0, 1, 2]), ["a", "b"], ["", ""], "protein",
                 order=np.array([0, 0]))
    with pytest.raises(ValueError, match="must be a 1-D array of integers"):
        Database(np.array([1.5, 2]), np.array([0, 2]), ["a"], [""], "protein")
    with pytest.raises(ValueError, match=r"sequences\[1\]: code 16 is outside the dna alphabet"):
        Database.from_sequences([np.array([0, 1]), np.array([16])], alphabet="dna")
    with pytest.raises(ValueError, match=r"sequences\[0\]: values must lie in 0..255"):
        Database.from_sequences([np.array([300], np.int64)])
    from clalign.data import StringTable
    ids = StringTable(np.array([97, 98]), np.array([0, 2]))          # int64 blob: converted, not misread
    assert list(Database(np.array([1], np.uint8), np.array([0, 1]), ids, [""], "protein").ids) == ["ab"]
    with pytest.raises(ValueError, match=r"ids.blob: values must lie in 0..255"):
        Database(np.array([1], np.uint8), np.array([0, 1]), StringTable(np.array([97, 300]), np.array([0, 2])),
                 [""], "protein")
    ok = Database.from_sequences([np.array([1, 2, 3]), "MKV"])
    assert ok.sequence_str(0) == "ABC" and ok.residues.dtype == np.uint8


@pytest.mark.parametrize("call", [
    lambda: Database.from_fasta(2), lambda: Database.open(3), lambda: makedb(2, "out"),
    lambda: makedb("in.fa", 1), lambda: parse_fasta(None), lambda: read_fasta(1), lambda: as_database(5),
    lambda: Database.from_sequences("MKV"), lambda: Database.from_sequences(["MK"], ids=[5]),
    lambda: Database.from_sequences([3.5]),
])
def test_wrong_types_are_typeerrors_and_fds_untouched(call):
    before = [os.fstat(fd).st_ino for fd in (0, 1, 2)]
    with pytest.raises(TypeError):
        call()
    assert [os.fstat(fd).st_ino for fd in (0, 1, 2)] == before


def test_typeerror_names_the_argument():
    with pytest.raises(TypeError, match="path must be a file path .* not int"):
        Database.from_fasta(2)
    with pytest.raises(TypeError, match="fasta must be a file path"):
        makedb(2, "out")


# --- bounded input -----------------------------------------------------------------------------
def test_dev_zero_and_nul_bytes(tmp_path, write_file):
    with pytest.raises(InputError, match="/dev/zero:1: NUL byte"):
        Database.from_fasta("/dev/zero")
    fa = write_file("z.fa", b">a\nMKV\n" + b"\0" * 100)
    status, _, err = cli([fa, tmp_path / "db"])
    assert status == 2 and "z.fa:3: NUL byte" in one_error(err)
    assert sorted(os.listdir(tmp_path)) == ["z.fa"]


@pytest.mark.parametrize("kind", ["plain", "gzip", "pipe"])
def test_input_larger_than_the_bound(tmp_path, write_file, monkeypatch, kind):
    monkeypatch.setattr(rawread, "MAX_INPUT_BYTES", 1000)
    text = ">a\n" + "ACDE" * 400 + "\n"
    if kind == "pipe":
        fa = str(tmp_path / "fifo")
        os.mkfifo(fa)
        writer = subprocess.Popen([sys.executable, "-c", f"open({fa!r}, 'w').write({text!r} * 100)"])
    else:
        fa = write_file("big.fa", text * (1 if kind == "plain" else 1000), gzip=kind == "gzip")
    try:
        with pytest.raises(InputError, match="larger than 1,000 bytes"):
            parse_fasta(fa)
    finally:
        if kind == "pipe":
            writer.kill()
            writer.wait()


def test_header_and_sequence_too_long(write_file, monkeypatch):
    monkeypatch.setattr(fasta, "MAX_HEADER_BYTES", 50)
    with pytest.raises(InputError, match=r"h.fa:3: header line longer than 50 bytes"):
        parse_fasta(write_file("h.fa", ">a\nMK\n>" + "b" * 60 + "\nMK\n"))
    monkeypatch.setattr(fasta, "MAX_SEQUENCE_LENGTH", 10)
    with pytest.raises(InputError, match=r"s.fa:3: sequence longer than 10 residues"):
        parse_fasta(write_file("s.fa", ">a\nMK\n>b\nMKVLA\nMKVLA*\n"))
    assert parse_fasta(write_file("t.fa", ">a\nMKVLA\nMKVL*\n")).lengths.tolist() == [9]
    monkeypatch.setattr(fasta, "MAX_STOPS", 3)
    with pytest.raises(InputError, match=r"u.fa:3: more than 3 trailing '\*'"):
        parse_fasta(write_file("u.fa", ">a\nMK***\n>b\nMK*\n***\n"))


def test_gzip_bomb_stops_at_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(rawread, "MAX_INPUT_BYTES", 1 << 20)
    path = tmp_path / "bomb.fa.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b">a\n")
        for _ in range(64):
            fh.write(b"A" * (1 << 20))
    with pytest.raises(InputError, match="bomb.fa.gz: larger than"):
        Database.from_fasta(path)


def test_largest_in_threads_equals_max(monkeypatch):
    """The open-time check's maximum over a large residue array, taken in threads."""
    from clalign.data import dbfolder

    monkeypatch.setattr(dbfolder, "PARALLEL_MAX_BYTES", 16)
    rng = np.random.default_rng(5)
    for n in (17, 1000, 100003):
        a = rng.integers(0, 20, n).astype(np.uint8)
        a[rng.integers(0, n)] = 27
        assert dbfolder._largest(a) == 27 == int(a.max())
