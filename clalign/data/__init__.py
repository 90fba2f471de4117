"""Data layer: FASTA reading, alphabets, substitution matrices and sequence databases.

Every engine takes its database through :func:`as_database` (a :class:`Database`, a folder
prepared by ``clalign makedb``, or a FASTA file) and its scores through :func:`get_matrix`.
"""
from .alphabet import DNA, PROTEIN, Alphabet, DNAAlphabet, alphabet_by_name
from .database import Database, StringTable, as_database, makedb
from .fasta import FastaRecord, parse_fasta, read_fasta
from .matrices import STANDARD as STANDARD_MATRICES
from .matrices import Matrix, get_matrix

__all__ = [
    "Alphabet", "DNAAlphabet", "PROTEIN", "DNA", "alphabet_by_name",
    "Database", "StringTable", "as_database", "makedb",
    "FastaRecord", "read_fasta", "parse_fasta",
    "Matrix", "get_matrix", "STANDARD_MATRICES",
]
