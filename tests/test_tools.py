"""Tests of the benchmark tools: the synthetic database generator and bench_sw's plumbing."""
import gzip
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")
if ROOT not in sys.path:                 # the tools are modules of the package ``tools``
    sys.path.insert(0, ROOT)

from tools import bench_sw  # noqa: E402
from tools import gen_protein_db as gen  # noqa: E402


def _parse(text):
    """Minimal independent FASTA parser: [(header, [lines])]."""
    recs = []
    for line in text.splitlines():
        if line.startswith(">"):
            recs.append((line[1:], []))
        else:
            recs[-1][1].append(line)
    return recs


def test_generator_is_deterministic():
    a_len, a_res = gen.generate(700, seed=7)
    b_len, b_res = gen.generate(700, seed=7)
    c_len, c_res = gen.generate(700, seed=8)
    assert np.array_equal(a_len, b_len) and np.array_equal(a_res, b_res)
    assert not np.array_equal(a_len, c_len)
    assert a_len.dtype == np.int32 and a_res.dtype == np.uint8
    assert a_res.size == int(a_len.sum())


def test_length_and_composition_statistics():
    lengths, residues = gen.generate(20000, seed=1)
    assert 340 <= lengths.mean() <= 380          # Swiss-Prot mean ~360
    assert 275 <= np.median(lengths) <= 305      # Swiss-Prot median ~290
    assert lengths.min() >= gen.MIN_LEN and lengths.max() <= gen.MAX_LEN
    assert lengths.max() > 3000                  # a long tail
    counts = np.bincount(residues, minlength=256)
    assert set(np.nonzero(counts)[0]) == {ord(c) for c in gen.ROBINSON_PERMILLE}
    p = np.array(list(gen.ROBINSON_PERMILLE.values()))
    p /= p.sum()
    freq = np.array([counts[ord(c)] for c in gen.ROBINSON_PERMILLE]) / residues.size
    assert np.abs(freq - p).max() < 0.002


def _share_above(lengths, cut):
    m = lengths > cut
    return m.mean(), lengths[m].sum() / lengths.sum()


def test_longtail_model_is_at_least_as_heavy_as_swissprot():
    """Issue 14: >= 0.2 % of the sequences above 2,000 aa holding >= 5 % of the residues,
    up to 35,000; Swiss-Prot 2012_11 has 0.12 % above 3,072 aa holding 1.59 % (CUDASW++ 3.0)."""
    lengths = gen.generate_lengths(570000, seed=1).astype(np.int64)    # lengths only: 0.1 s
    assert 355 <= lengths.mean() <= 365 and 285 <= np.median(lengths) <= 295
    seqs, res = _share_above(lengths, 2000)
    assert seqs >= 0.002 and res >= 0.05
    seqs, res = _share_above(lengths, 3072)
    assert seqs >= 0.0012 and res >= 0.0159
    assert 30000 < lengths.max() <= gen.MAX_LEN == 35000
    assert lengths.min() >= gen.MIN_LEN


@pytest.mark.parametrize("n, seed", [(2000, 1), (5000, 9), (20000, 3)])
def test_longtail_share_holds_in_small_databases(n, seed):
    """The tail is drawn at stratified quantiles, so even small databases carry it."""
    lengths = gen.generate_lengths(n, seed).astype(np.int64)
    assert (lengths >= gen.TAIL_MIN).sum() >= round(n * gen.TAIL_WEIGHT)
    seqs, res = _share_above(lengths, 1999)
    assert seqs >= 0.002 and res >= 0.04


def test_lognormal_model_reproduces_earlier_figures():
    """``--model lognormal`` is the pre-issue-14 model: 570,000 sequences, seed 1, gave the
    204,866,741 residues and the 7,978 aa maximum quoted in docs/perf/sw.md."""
    lengths = gen.generate_lengths(570000, seed=1, model="lognormal")
    assert int(lengths.sum(dtype=np.int64)) == 204866741 and int(lengths.max()) == 7978
    with pytest.raises(ValueError):
        gen.generate_lengths(10, 1, model="gamma")


def test_residue_table_sums_exactly():
    table = gen._residue_table()
    assert table.size == 65536


@pytest.mark.parametrize("compress", [False, True])
def test_fasta_well_formed(tmp_path, compress):
    lengths, residues = gen.generate(300, seed=3)
    lengths[:3] = [59, 60, 61]  # around the line width
    residues = residues[: int(lengths.sum())]
    path = str(tmp_path / ("db.fa.gz" if compress else "db.fa"))
    gen.write_fasta(path, lengths, residues, compress=compress)
    raw = (gzip.open(path, "rb") if compress else open(path, "rb")).read().decode()
    assert raw.endswith("\n") and "\n\n" not in raw
    recs = _parse(raw)
    assert len(recs) == 300
    seqs = []
    for i, (header, lines) in enumerate(recs):
        assert header == f"synth|{i + 1:06d} synthetic protein len={lengths[i]}"
        assert all(len(line) == 60 for line in lines[:-1]) and 1 <= len(lines[-1]) <= 60
        seqs.append("".join(lines))
    assert [len(s) for s in seqs] == list(lengths)
    assert "".join(seqs).encode() == residues.tobytes()
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_fasta_reads_back_with_clalign(tmp_path):
    try:
        from clalign.data import read_fasta
    except ImportError:
        from clalign.data.fasta import read_fasta
    lengths, residues = gen.generate(200, seed=4)
    path = str(tmp_path / "db.fa")
    gen.write_fasta(path, lengths, residues)
    recs = list(read_fasta(path))
    assert [r.id for r in recs] == [gen.seq_id(i, 200) for i in range(200)]
    assert recs[5].description == f"synthetic protein len={lengths[5]}"
    assert "".join(r.sequence for r in recs).encode() == residues.tobytes()


def test_generator_cli(tmp_path):
    out = tmp_path / "x.fa"
    proc = subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", "50",
                           "--seed", "2", "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "mean length" in proc.stderr and "longtail model" in proc.stderr
    assert out.read_text().count(">") == 50
    old = tmp_path / "y.fa"
    proc = subprocess.run([sys.executable, "-m", "tools.gen_protein_db", "-n", "50",
                           "--seed", "2", "--model", "lognormal", "-o", str(old)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "lognormal model" in proc.stderr


def test_bench_help():
    proc = subprocess.run([sys.executable, "-m", "tools.bench_sw", "--help"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0
    for opt in ("-n", "--seed", "--queries", "--max-queries", "--device", "--out", "--no-peers",
                "--matrix", "--gapopen", "--gapextend"):
        assert opt in proc.stdout


def test_query_selection_spans_lengths(tmp_path):
    path = tmp_path / "q.fa"
    path.write_text("".join(f">gi|1|sp|P{i:05d}.2|X desc\n{'A' * (100 * i)}\n" for i in range(1, 21)))
    queries = bench_sw.read_queries(str(path))
    assert queries[0][0] == "P00001"
    picked = bench_sw.pick_queries(queries, 5)
    assert [len(s) for _, s in picked] == [100, 600, 1100, 1500, 2000]
    assert len(bench_sw.pick_queries(queries, None)) == 20
    bad = tmp_path / "bad.fa"
    bad.write_text("ACD\n>x\nAC\n")
    with pytest.raises(bench_sw.BenchError, match="bad.fa:1:"):
        bench_sw.read_queries(str(bad))


def test_peers_agree_on_tiny_run(tmp_path):
    pytest.importorskip("parasail")
    pytest.importorskip("pyopal")
    q = tmp_path / "q.fa"
    q.write_text(">q1\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQ\n"
                 ">q2\nWWWCCCHHHMMM\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tools.bench_sw", "-n", "300",
                           "--queries", str(q), "--no-clalign", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "score check parasail vs pyopal: identical" in proc.stdout
    assert (out / "sw_bench.csv").read_text().startswith("query,length,")


def test_bench_sw_build_choice():
    from tools import bench_sw_build as bsb

    assert bsb.parse_spec("tuned") == {}
    assert bsb.parse_spec("CELL=ptx,ROWS=48") == {"CELL": "ptx", "ROWS": 48}
    report = {"builds": [{"variant": "a", "kernel": "inter", "build_s": 22.0}, {"variant": "b", "kernel": "inter",
                                                                                "build_s": 1.0},
                         {"variant": "c", "kernel": "inter", "build_s": 0.9}, {"variant": "d", "kernel": "inter",
                                                                                "error": "timeout"}],
              "speed": [{"variant": "a", "tcups_first_pass": 2.5, "scores_equal_first": True},
                        {"variant": "b", "tcups_first_pass": 2.0, "scores_equal_first": True},
                        {"variant": "c", "tcups_first_pass": 2.4, "scores_equal_first": False}]}
    assert bsb.choose_best(report, 4.0) == "b"       # a builds too slowly, c's scores differ
    assert bsb.choose_best(report, 40.0) == "a"


def test_tools_are_package_modules():
    """Every tool imports as ``tools.NAME`` and none edits sys.path to find its siblings."""
    import importlib

    names = sorted(f[:-3] for f in os.listdir(TOOLS) if f.endswith(".py") and f != "__init__.py")
    for name in names:
        text = open(os.path.join(TOOLS, name + ".py"), encoding="utf-8").read()
        assert "sys.path.insert" not in text and "sys.path.append" not in text, name
        importlib.import_module(f"tools.{name}")


def test_cli_timeline_records_a_command(tmp_path):
    """tools/cli_timeline.py runs a clalign command in-process: its exit status, import spans and
    the spans of the functions it times (here the platform query of ``clalign devices``)."""
    import json

    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, os.path.join(TOOLS, "cli_timeline.py"), "--json", str(out), "--min-ms",
                           "0", "--", "devices"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    assert got["argv"] == ["devices"] and got["status"] == 0
    names = {s["name"] for s in got["spans"]}
    assert "clalign.cli" in names and "runtime.device:all_devices" in names
    assert all(s["end"] >= s["start"] >= 0 for s in got["spans"])
    assert "exit" in proc.stderr


def test_bench_makedb_nucl_small(tmp_path):
    """tools/bench_makedb_nucl on 3 Mb: both builds run, sizes and peaks reported."""
    import shutil

    if shutil.which("makeblastdb") is None or not os.path.exists("/usr/bin/time"):
        pytest.skip("makeblastdb (BLAST+) or GNU time not installed")
    pytest.importorskip("pyrodigal")
    from tools.bench_makedb_nucl import main

    res = main(["--work", str(tmp_path), "--genome-mb", "3"])
    assert res["bases"] == 3_000_000
    for tool in ("clalign_makedb", "makeblastdb"):
        assert res[tool]["wall_s"] > 0 and res[tool]["peak_rss_mib"] > 1 and res[tool]["bytes"] > 750_000
