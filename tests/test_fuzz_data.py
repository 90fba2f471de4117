"""Fuzzing the data layer (issue 9): mutated FASTA files through ``clalign makedb`` and
``Database.from_fasta``, mutated database folders through ``Database.open``, ``makedb --verify``
and ``clalign sw``. Each run ends with exit 0 and the right content/scores (checked against a
plain reference FASTA reader and the Python Smith-Waterman reference), or exit 1/2 with one
line on stderr and no traceback; never an uncaught exception, never a changed input, never a
hang (a SIGALRM limit per example). Bounded for ``make test`` (80-200 examples a test,
derandomised: ~7 s alone on 2 cores); ``CLALIGN_FUZZ_EXAMPLES=N`` runs N random examples per
test instead (with shrinking).
"""
import contextlib
import gzip
import hashlib
import json
import os
import shutil
import signal
import tempfile

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from clalign.cli import main
from clalign.data import PROTEIN, Database, get_matrix, makedb
from clalign.errors import InputError
from clalign.sw.reference import sw_score

_N = int(os.environ.get("CLALIGN_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=_N or 200, derandomize=not _N, deadline=20000, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True,
                phases=list(Phase) if _N else [Phase.explicit, Phase.generate])
BLANKS = b" \t\r\n\v\f"
LETTERS = "ACDEFGHIKLMNPQRSTVWXYZUOJB-*acdefwxyz"


def reference_fasta(data):
    """(ids, descriptions, sequences, stops) by the documented rules, or None for an error."""
    if b"\0" in data:
        return None
    records, lines = [], data.split(b"\n")
    for line in lines:
        if line.startswith(b">"):
            head = line[1:].rstrip(b"\r").strip().split(None, 1)
            records.append([head[0] if head else b"", head[1] if len(head) > 1 else b"", []])
        elif records:
            records[-1][2].append(line)
        elif line.strip(BLANKS):
            return None
    out = ([], [], [], [])
    for ident, desc, body in records:
        seq = b"".join(body).translate(None, BLANKS).upper()
        stripped = seq.rstrip(b"*")
        if not stripped or any(chr(c) not in PROTEIN.letters for c in stripped):
            return None
        for lst, v in zip(out, (ident, desc, stripped, len(seq) - len(stripped))):
            lst.append(v)
    return out


def _blob(table, i):
    return np.asarray(table.blob[table.offsets[i]:table.offsets[i + 1]]).tobytes()


def content(db):
    return ([_blob(db.ids, i) for i in range(len(db))], [_blob(db.descriptions, i) for i in range(len(db))],
            [db.alphabet.decode(db.sequence(i)).encode() for i in range(len(db))], np.asarray(db.stops).tolist())


@contextlib.contextmanager
def time_limit(seconds=60):
    """A hang becomes a test failure (SIGALRM), not a stuck test run."""
    def alarm(signum, frame):
        raise TimeoutError(f"no answer in {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def one_line_error(r, statuses=(2,)):
    assert r.exit_code in statuses, (r.exit_code, r.stderr)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clalign: error: ") and "Traceback" not in r.stderr, r.stderr


def tree(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for f in files + dirs:
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not os.path.isfile(p):
                out[os.path.relpath(p, root)] = os.readlink(p) if os.path.islink(p) else "special"
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


record = st.tuples(
    st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=0, max_size=12),
    st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="\r\n"), max_size=20),
    st.text(st.sampled_from(LETTERS), min_size=0, max_size=120),
    st.integers(0, 3), st.integers(1, 70))
mutation = st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.floats(0, 1),
                     st.binary(min_size=1, max_size=3))


def render(records, crlf, blank_lines):
    nl = "\r\n" if crlf else "\n"
    parts = []
    for ident, desc, seq, stops, width in records:
        parts.append(f">{ident} {desc}".rstrip(" ") + nl)
        seq = seq + "*" * stops
        parts.extend(seq[i:i + width] + nl for i in range(0, len(seq), width))
        parts.append(nl * blank_lines)
    return "".join(parts).encode("utf-8")


def mutate(data, mutations):
    b = bytearray(data)
    for op, where, value in mutations:
        i = int(where * len(b))
        if op == "insert":
            b[i:i] = value
        elif op == "delete":
            del b[i:i + len(value)]
        elif b:
            b[min(i, len(b) - 1)] = value[0]
    return bytes(b)


@FUZZ
@given(st.lists(record, min_size=0, max_size=6), st.booleans(), st.integers(0, 2),
       st.lists(mutation, max_size=4), st.sampled_from(["plain", "gzip", "gzip_damaged"]), st.booleans(),
       st.sampled_from(["prot", "prot", "auto", "nucl"]),
       st.one_of(st.none(), st.none(), st.binary(max_size=300), st.text(">\r\n *ACGTmkv\t", max_size=300)))
def test_fuzz_fasta_through_makedb(records, crlf, blank_lines, mutations, packing, long_line, dbtype, junk):
    with time_limit():
        _fasta_case(records, crlf, blank_lines, mutations, packing, long_line, dbtype, junk)


def _fasta_case(records, crlf, blank_lines, mutations, packing, long_line, dbtype, junk):
    if long_line and records:
        ident, desc, seq, stops, _ = records[0]
        records = [(ident, desc, (seq or "M") * 2000, stops, 10 ** 6)] + records[1:]
    data = mutate(render(records, crlf, blank_lines), mutations)
    if junk is not None:          # raw bytes, or text made of FASTA's own punctuation
        data = junk if isinstance(junk, bytes) else junk.encode()
    raw = data
    if packing != "plain":
        raw = gzip.compress(data, mtime=0)
        if packing == "gzip_damaged":
            raw = raw[:len(raw) * 2 // 3] if len(raw) % 2 else raw[:10] + bytes([raw[10] ^ 0x55]) + raw[11:]
    expected = reference_fasta(data) if packing != "gzip_damaged" and dbtype == "prot" else None
    with tempfile.TemporaryDirectory() as tmp:
        fa = os.path.join(tmp, "in.fa")
        with open(fa, "wb") as fh:
            fh.write(raw)
        out = os.path.join(tmp, "db")
        r = CliRunner().invoke(main, ["makedb", fa, out, "-dbtype", dbtype, "-q"])
        with open(fa, "rb") as fh:
            assert fh.read() == raw
        got = None
        if r.exit_code == 0:
            got = content(Database.open(out))
            if expected is not None or dbtype == "prot" and packing != "gzip_damaged":
                assert expected is not None and expected[0], "accepted what the rules refuse"
                assert got == tuple(expected)
            assert CliRunner().invoke(main, ["makedb", "--verify", out]).exit_code == 0
        else:
            one_line_error(r)
            assert dbtype != "prot" or packing == "gzip_damaged" or expected is None or not expected[0], \
                (r.stderr, expected)
            assert sorted(os.listdir(tmp)) == ["in.fa"]
        try:
            mem = Database.from_fasta(fa, {"prot": "protein", "nucl": "dna", "auto": "auto"}[dbtype])
        except InputError:
            assert r.exit_code != 0
        else:   # the same records, or none at all (makedb refuses an empty database)
            assert content(mem) == got if r.exit_code == 0 else len(mem) == 0


QUERY = ">q\nMKVLAWWCDEHIKLM\n"
BASE = ">a one\nMKVLAHHW\n>b\nACDEFGHIKLMNPQRSTVWY\n>c three\nWW*\n>d\nKKKKLLLMMMPP**\n>e\nMKV\n"
FILES = ["residues", "offsets", "lengths", "order", "ids", "id_offsets", "descs", "desc_offsets", "stops", "header"]
json_value = st.one_of(st.integers(-2, 2 ** 63), st.floats(allow_nan=True), st.text(max_size=5), st.none(),
                       st.lists(st.integers(), max_size=2), st.booleans())
db_mutation = st.one_of(
    st.tuples(st.just("truncate"), st.sampled_from(FILES), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.sampled_from(FILES), st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("append"), st.sampled_from(FILES), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.sampled_from(FILES)),
    st.tuples(st.just("swap"), st.sampled_from(FILES), st.sampled_from(FILES)),
    st.tuples(st.just("special"), st.sampled_from(FILES), st.sampled_from(["fifo", "folder", "/dev/zero"])),
    st.tuples(st.just("header"), st.sampled_from(["sequences", "total_residues", "max_length", "trailing_stops",
                                                  "alphabet", "format_version", "format", "files", "source"]),
              json_value),
)


def _fname(name):
    return "header.json" if name == "header" else name + ".npy"


def apply_db_mutation(folder, m):
    kind, name = m[0], m[1]
    path = os.path.join(folder, _fname(name)) if kind != "header" else os.path.join(folder, "header.json")
    if os.path.islink(path) or not os.path.isfile(path):   # gone, or made special by an earlier mutation
        return
    if kind == "truncate":
        with open(path, "r+b") as fh:
            fh.truncate(int(m[2] * os.path.getsize(path)))
    elif kind == "flip":
        with open(path, "r+b") as fh:
            size = os.path.getsize(path)
            if size:
                fh.seek(min(int(m[2] * size), size - 1))
                b = fh.read(1)
                fh.seek(-1, 1)
                fh.write(bytes([b[0] ^ m[3]]))
    elif kind == "append":
        with open(path, "ab") as fh:
            fh.write(m[2])
    elif kind == "delete":
        os.remove(path)
    elif kind == "special":
        os.remove(path)
        if m[2] == "fifo":
            os.mkfifo(path)
        elif m[2] == "folder":
            os.mkdir(path)
        else:
            os.symlink(m[2], path)
    elif kind == "swap":
        other = os.path.join(folder, _fname(m[2]))
        if os.path.exists(other) and other != path:
            os.rename(path, path + ".x")
            os.rename(other, path)
            os.rename(path + ".x", other)
    else:
        try:
            with open(path, encoding="utf-8") as fh:
                header = json.load(fh)
            header[name] = m[2]
        except (OSError, ValueError, TypeError):
            return
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(header, fh)


@pytest.fixture(scope="module")
def base_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzzdb")
    (root / "base.fa").write_text(BASE)
    (root / "q.fa").write_text(QUERY)
    makedb(str(root / "base.fa"), str(root / "db"), quiet=True)
    return root


@settings(FUZZ, max_examples=_N or 150)
@given(mutations=st.lists(db_mutation, min_size=1, max_size=3))
def test_fuzz_database_folder(base_db, mutations):
    with time_limit():
        _folder_case(base_db, mutations)


def _folder_case(base_db, mutations):
    original = content(Database.open(str(base_db / "db")))
    scores = get_matrix("BLOSUM62").scores
    query = PROTEIN.encode("MKVLAWWCDEHIKLM")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "db")
        shutil.copytree(base_db / "db", folder)
        for m in mutations:
            apply_db_mutation(folder, m)
        before = tree(tmp)
        try:
            db = Database.open(folder)
        except InputError as exc:
            assert str(exc).startswith(folder) and "\n" not in str(exc)
            db = None
        v = CliRunner().invoke(main, ["makedb", "--verify", folder])
        if v.exit_code == 0:
            assert db is not None and content(db) == original, "verify passed a database that differs"
        else:
            one_line_error(v, statuses=(1,))
        r = CliRunner().invoke(main, ["sw", "-query", str(base_db / "q.fa"), "-db", folder, "-max_target_seqs", "50", "-evalue", "1e300"])
        if r.exit_code == 0:
            assert db is not None
            rows = [line.split("\t") for line in r.stdout.splitlines()[1:]]
            got = sorted(int(row[2]) for row in rows)
            ref = sorted(s for s in (sw_score(query, db.sequence(i), scores) for i in range(len(db))) if s > 0)
            # a subject scoring 0 has no local alignment: not a hit (as in BLAST)
            assert got == ref[len(ref) - len(got):] and len(got) == min(50, len(ref))
        else:
            one_line_error(r)
            assert db is None
        assert tree(tmp) == before


ARRAY = {"offsets": np.int64, "lengths": np.int32, "order": np.int64, "stops": np.uint32,
         "residues": np.uint8, "id_offsets": np.int64, "desc_offsets": np.int64}


def _resave(folder, name, arr):
    """Replace one array and record it in header.json with a matching checksum: a hostile but
    self-consistent folder that only the open-time rules can refuse."""
    np.save(os.path.join(folder, name + ".npy"), arr)
    with open(os.path.join(folder, name + ".npy"), "rb") as fh:
        data = fh.read()
    with open(os.path.join(folder, "header.json"), encoding="utf-8") as fh:
        header = json.load(fh)
    header["files"][name + ".npy"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    with open(os.path.join(folder, "header.json"), "w", encoding="utf-8") as fh:
        json.dump(header, fh)


@settings(FUZZ, max_examples=_N or 80)
@given(name=st.sampled_from(sorted(ARRAY)), size_delta=st.sampled_from([0, 0, 0, -1, 1]),
       values=st.lists(st.integers(-3, 70), min_size=80, max_size=80), keep=st.integers(0, 79))
def test_fuzz_self_consistent_hostile_arrays(base_db, name, size_delta, values, keep):
    """Arrays replaced by small integers (edited in place or random), checksums rewritten: open
    and sw either refuse with one line or answer exactly like the reference on what opened."""
    with time_limit():
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "db")
            shutil.copytree(base_db / "db", folder)
            old = np.load(os.path.join(folder, name + ".npy"))
            n = max(old.size + size_delta, 0)
            new = np.resize(old.astype(np.int64), n)
            idx = keep % max(n, 1)
            if n:
                new[idx] = values[0]          # one edited value, often just out of range
                if values[1] % 4 == 0:        # or, now and then, all values random
                    new = np.array(values[:n], dtype=np.int64)
            dt = np.dtype(ARRAY[name])
            info = np.iinfo(dt)
            _resave(folder, name, np.clip(new, info.min, info.max).astype(dt))
            try:
                db = Database.open(folder)
            except InputError as exc:
                assert "\n" not in str(exc) and str(exc).startswith(folder)
                db = None
            r = CliRunner().invoke(main, ["sw", "-query", str(base_db / "q.fa"), "-db", folder,
                                          "-max_target_seqs", "50", "-evalue", "1e300"])
            if db is None:
                one_line_error(r)
                return
            assert r.exit_code == 0, r.stderr
            scores = get_matrix("BLOSUM62").scores
            query = PROTEIN.encode("MKVLAWWCDEHIKLM")
            got = sorted(int(row.split("\t")[2]) for row in r.stdout.splitlines()[1:])
            ref = sorted(s for s in (sw_score(query, db.sequence(i), scores) for i in range(len(db))) if s > 0)
            # a subject scoring 0 has no local alignment: not a hit (as in BLAST)
            assert got == ref[len(ref) - len(got):] and len(got) == min(50, len(ref))
