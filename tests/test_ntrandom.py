"""makeblastdb's bases at ambiguous positions (clalign.data.ntrandom) against databases it made."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from clalign.data import Database
from clalign.data.blastdb import open_blast_nucleotide
from clalign.data.nucleotide import NucleotideDatabase
from clalign.data.ntrandom import draws, fill_bases

HERE = os.path.join(os.path.dirname(__file__), "data", "blastdb")


def _scalar_draws(seed, count):
    """Plain transcription of the generator (state array and two moving indices)."""
    s = [seed & 0xFFFFFFFF]
    for i in range(1, 33):
        s.append((1103515245 * s[-1] + 12345) & 0xFFFFFFFF)
    j, k, out = 12, 32, []
    for n in range(330 + count):
        x = (s[k] + s[j]) & 0xFFFFFFFF
        s[k] = x
        j, k = j - 1, k - 1
        if k < 0:
            k = 32
        elif j < 0:
            j = 32
        if n >= 330:
            out.append(x)
    return out


@pytest.mark.parametrize("seed,count", [(0, 1), (5004, 33), (25_000_000, 34), (7, 100), (2**32 - 1, 47)])
def test_vectorised_draws_equal_scalar(seed, count):
    assert draws([seed], count)[0].tolist() == _scalar_draws(seed, count)


def _stored(nt):
    """(lengths, counts, codes, stored 2-bit bases) of every ambiguous base of a database."""
    counts, codes, bases = [], [], []
    for i in range(len(nt)):
        amb = nt.ambiguities(i)
        pos = np.concatenate([np.arange(s, s + n) for s, n, _ in amb]) if len(amb) else np.zeros(0, int)
        counts.append(pos.size)
        codes.append(np.repeat(amb[:, 2], amb[:, 1]) if len(amb) else np.zeros(0, int))
        bases.append(nt.ncbi2na(i)[pos])
    return nt.lengths, np.array(counts), np.concatenate(codes), np.concatenate(bases)


@pytest.mark.parametrize("name", ["nucl_v4", "nucl_mv"])
def test_fill_equals_makeblastdb(name):
    lengths, counts, codes, stored = _stored(open_blast_nucleotide(os.path.join(HERE, "db", name)))
    assert counts.sum() > 5000
    assert np.array_equal(fill_bases(lengths, counts, codes), stored)


def test_from_database_bytes_equal_nsq():
    ref = Database.from_fasta(os.path.join(HERE, "nucl.fa"), "dna")
    blast = open_blast_nucleotide(os.path.join(HERE, "db", "nucl_v5"))
    ours = NucleotideDatabase.from_database(ref, blast_fill=True)
    for i in range(len(ref)):
        assert np.array_equal(ours.ncbi2na(i), blast.ncbi2na(i))


@pytest.mark.skipif(shutil.which("makeblastdb") is None,
                    reason="makeblastdb (BLAST+) is not installed; the committed databases cover the rule")
def test_fill_equals_fresh_makeblastdb(tmp_path):
    rng = np.random.default_rng(11)
    recs = []
    for n in (1, 2, 3, 4, 5, 13, 33, 34, 46, 1000, 20011):
        s = np.array(list("ACGT"))[rng.integers(0, 4, n)]
        k = rng.random(n) < 0.3
        s[k] = np.array(list("NRYKMSWBDHV"))[rng.integers(0, 11, int(k.sum()))]
        recs.append("".join(s))
    fa = tmp_path / "a.fa"
    fa.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(recs)))
    subprocess.run(["makeblastdb", "-in", str(fa), "-dbtype", "nucl", "-out", str(tmp_path / "a")],
                   check=True, stdout=subprocess.DEVNULL)
    blast = open_blast_nucleotide(str(tmp_path / "a"))
    ours = NucleotideDatabase.from_database(Database.from_fasta(str(fa), "dna"), blast_fill=True)
    for i in range(len(recs)):
        assert np.array_equal(ours.ncbi2na(i), blast.ncbi2na(i)), i


# blastn 2.12 (-task blastn -dust no -word_size 11 -outfmt "6 qseqid length score", with and
# without -ungapped: same scores) of a 60-nt sequence against itself with one base changed at
# position 30: A in the subject and an ambiguity code in the query, then the reverse.
# Run here 2026-11-23: query side {code: score} per (reward, penalty), subject side likewise.
_QUERY_SIDE = {(1, -2): {"R": 58, "N": 58, "B": 57, "H": 58}, (1, -3): {"R": 58, "N": 57, "B": 56, "H": 57},
               (2, -3): {"R": 117, "N": 116, "B": 115, "H": 117}, (1, -1): {"R": 59, "N": 58, "B": 58, "H": 59},
               (4, -5): {"R": 235, "N": 233, "B": 231, "H": 234}}
_SUBJECT_SIDE = {(1, -2): {"R": 58, "N": 58, "B": 57, "H": 58, "Y": 57},
                 (1, -3): {"R": 58, "N": 57, "B": 56, "H": 57, "Y": 56},
                 (2, -3): {"R": 117, "N": 116, "B": 115, "H": 117, "Y": 115}}


def test_blastna_matrix_scores_ambiguities_as_blastn():
    from clalign.data.nucleotide import BLASTNA_LETTERS, blastna_matrix

    a = BLASTNA_LETTERS.index("A")
    for side, table in (("query", _QUERY_SIDE), ("subject", _SUBJECT_SIDE)):
        for (reward, penalty), scores in table.items():
            m = blastna_matrix(reward, penalty)
            for letter, score in scores.items():
                x = BLASTNA_LETTERS.index(letter)
                pair = m[x, a] if side == "query" else m[a, x]
                assert 59 * reward + pair == score, (side, reward, penalty, letter)
    m = blastna_matrix(1, -2)
    assert m[:4, :4].tolist() == [[1 if i == j else -2 for j in range(4)] for i in range(4)]
    assert m[15, 3] == m[0, 15] == -(1 << 30)
