"""``clalign blastn -ungapped``: outfmt 6/7 identical, line for line and in order, to blastn 2.12
``-ungapped`` for every task (golden tables ug_*.tsv in tests/data/blastn/search, made by its
make_search_golden.py), on the CPU path and on an OpenCL device; and the re-evaluation with
ambiguities against a brute-force best stretch."""
import os
import random
import shlex
import shutil
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from clalign.blast.blastn import run_blastn, tabular_lines
from clalign.blast.nucl_hsp import NHSP
from clalign.blast.nucl_setup import BlastnOptions
from clalign.blast.nucl_ungapped_search import _reevaluate
from clalign.cli import main
from clalign.data.nucleotide import blastna_matrix

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")
sys.path.insert(0, HERE)
from make_search_golden import GOLDEN  # noqa: E402

GENOME = os.path.join(HERE, "genome.fa")


def _golden(name):
    with open(os.path.join(HERE, name)) as fh:
        return fh.read().splitlines()


@pytest.mark.parametrize("task,query", [("megablast", "reads.fa"), ("blastn", "reads.fa"),
                                        ("blastn-short", "short.fa")])
def test_ungapped_tasks_equal_blastn(task, query):
    res = run_blastn(os.path.join(HERE, query), GENOME, BlastnOptions(task=task, ungapped=True))
    assert tabular_lines(res) == _golden(f"ug_{task}.tsv")


@pytest.mark.parametrize("name", ["ug_opts.tsv", "ug_mb_w16.tsv"])
def test_ungapped_options_equal_blastn(name, tmp_path):
    """-strand, -perc_identity, -max_hsps, -evalue, custom columns; -word_size, -dust no,
    -max_target_seqs, outfmt 7 (megablast's X-drop rule shows with word 16)."""
    shutil.copy(os.path.join(HERE, "reads.fa"), tmp_path)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["blastn", "-db", GENOME] + shlex.split(GOLDEN[name]))
    finally:
        os.chdir(here)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    if name.endswith("w16.tsv"):   # outfmt 7 names the database as given
        lines = [l.replace(GENOME, "gdb") for l in lines]
    assert lines == _golden(name)


def test_reevaluation_keeps_best_stretch():
    """With ambiguity codes on both sides: the kept stretch scores the best of all stretches
    (cutoff 1: any positive stretch), its coordinates add up, and a cutoff above the best
    score drops the HSP."""
    rng = random.Random(4)
    m = blastna_matrix(2, -3).astype(np.int64)
    for _ in range(300):
        n = rng.randint(1, 60)
        q = np.array([rng.choice([0, 1, 2, 3, 3, 14, 4]) for _ in range(n)], dtype=np.uint8)
        s = np.array([rng.choice([0, 1, 2, 3, 2, 9]) for _ in range(n + 5)], dtype=np.uint8)
        sc = [int(m[q[i], s[2 + i]]) for i in range(n)]
        best = max([0] + [sum(sc[a:b]) for a in range(n) for b in range(a + 1, n + 1)])
        h = NHSP(0, 0, 0, n, 2, 2 + n)
        assert _reevaluate(h, q, s, m, 1) == (best >= 1)
        assert h.score == best
        if best:
            assert sum(sc[h.q_start:h.q_end]) == best and h.s_start - h.q_start == 2
            assert h.s_end - h.s_start == h.q_end - h.q_start
        h = NHSP(0, 0, 0, n, 2, 2 + n)
        assert not _reevaluate(h, q, s, m, best + 1)


@pytest.mark.parametrize("task,query", [("megablast", "reads.fa"), ("blastn-short", "short.fa")])
def test_ungapped_device_equals_blastn(each_device, task, query):
    """The device's scan, lookup and mini-extension feed the same ungapped search."""
    pytest.importorskip("pyopencl")
    dev = "0:0" if each_device == "default" else each_device
    res = run_blastn(os.path.join(HERE, query), GENOME, BlastnOptions(task=task, ungapped=True),
                     device=dev)
    assert tabular_lines(res) == _golden(f"ug_{task}.tsv")
