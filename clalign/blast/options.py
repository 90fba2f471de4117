"""BLAST+ protein search settings and their defaults (``blast_options.h``/``blast_options.c``).

One frozen record carries every setting the phases read; ``blastp_options`` fills BLAST+'s
defaults for what the user left out (the neighbourhood threshold and two-hit window depend on
the matrix, as ``BLAST_GetSuggestedThreshold``/``BLAST_GetSuggestedWindowSize`` choose them).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .matrix import names as matrix_names

# Matrix -> (neighbourhood threshold T, two-hit window A); other matrices get BLOSUM62's.
_SUGGESTED = {"BLOSUM62": (11, 40), "BLOSUM45": (14, 60), "BLOSUM80": (12, 25),
              "PAM30": (16, 15), "PAM70": (14, 20)}
# Matrix -> default (gap open, gap extend) of BLAST+ 2.12: the BLAST_MATRIX_BEST row of each
# matrix in blast_stat.c (BLAST_GetProteinGapExistenceExtendParams).
_GAPS = {"BLOSUM62": (11, 1), "BLOSUM45": (14, 2), "BLOSUM50": (13, 2), "BLOSUM80": (10, 1),
         "BLOSUM90": (10, 1), "PAM30": (9, 1), "PAM70": (10, 1), "PAM250": (14, 2)}

UNGAPPED_XDROP_BITS = 7.0     # BLAST_UNGAPPED_X_DROPOFF_PROT
GAP_XDROP_BITS = 15.0         # BLAST_GAP_X_DROPOFF_PROT (preliminary gapped stage)
GAP_XDROP_FINAL_BITS = 25.0   # BLAST_GAP_X_DROPOFF_FINAL_PROT (traceback)
GAP_TRIGGER_BITS = 22.0       # BLAST_GAP_TRIGGER_PROT
RESTRICTED_WORST_EVALUE = 10.0  # RESTRICTED_ALIGNMENT_WORST_EVALUE
RESTRICTED_MULT = 0.68        # fraction of the gapped cutoff for approximate alignment


@dataclass(frozen=True)
class BlastpOptions:
    """Every blastp setting the search phases use."""

    matrix: str = "BLOSUM62"
    word_size: int = 3
    threshold: float = 11   # -threshold is real: the standard table truncates it, the compressed one scales by 100
    window: int = 40
    gap_open: int = 11
    gap_extend: int = 1
    evalue: float = 10.0
    max_target_seqs: int = 500
    max_hsps: int = 0          # 0: no limit
    dbsize: int = 0            # 0: the database's residue count
    searchsp: int = 0          # 0: computed per query
    seg: object = None         # seg.SegParams or None (-seg no)
    soft_masking: bool = False  # True: SEG's mask acts on the lookup table only
    compressed: bool = False   # the 15-letter compressed-alphabet lookup (word sizes 6, 7)

    @property
    def device_ok(self) -> bool:
        """Whether the device kernels implement these word-finder settings (standard table,
        word size 3, two-hit); else the search runs on the CPU."""
        return not self.compressed and self.word_size == 3 and self.window > 0

    @property
    def hitlist_size(self) -> int:
        return self.max_target_seqs

    @property
    def prelim_hitlist_size(self) -> int:
        """GetPrelimHitlistSize without composition statistics: min(max(2N, 10), N + 50)."""
        n = self.max_target_seqs
        return min(max(2 * n, 10), n + 50)


# -task blastp-fast in BLAST+ 2.12 (CBlastOptionsFactory::CreateTask): word size 6, the
# compressed-alphabet lookup table, threshold 21 (not a matrix default, so no matrix suggestion)
FAST_WORD_SIZE, FAST_THRESHOLD = 6, 21
TASKS = ("blastp", "blastp-fast")


def blastp_options(matrix="BLOSUM62", word_size=None, threshold=None, window=None,
                   gap_open=None, gap_extend=None, task="blastp", **rest) -> BlastpOptions:
    """Options with BLAST+'s defaults for the settings given as None; checks ranges.

    As the BLAST+ 2.12 application: ``-task blastp-fast`` means word size 6, threshold 21 and
    the compressed-alphabet lookup; a ``-word_size`` above 5 switches any task to that lookup,
    which takes word sizes 6 and 7 only. The matrix's suggested threshold replaces only
    blastp's default 11."""
    m = matrix.upper()
    if m not in matrix_names():
        raise InputError(f"-matrix {matrix}: BLAST+ knows {', '.join(matrix_names())}")
    if task not in TASKS:
        raise InputError(f"-task {task}: clalign implements {', '.join(TASKS)}")
    t_default, w_default = _SUGGESTED.get(m, _SUGGESTED["BLOSUM62"])
    o_default, e_default = _GAPS[m]
    fast = task == "blastp-fast"
    if fast:
        t_default = FAST_THRESHOLD
    ws = (FAST_WORD_SIZE if fast else 3) if word_size is None else int(word_size)
    if ws < 2:
        raise InputError(f"-word_size {ws}: BLAST+ takes 2 or more")
    compressed = fast or ws > 5
    if compressed and ws not in (6, 7):
        raise InputError(f"-word_size {ws}: the compressed-alphabet lookup table of "
                         f"{'-task blastp-fast' if fast else '-word_size > 5'} requires word size 6 or 7")
    opts = BlastpOptions(
        matrix=m,
        word_size=ws,
        compressed=compressed,
        threshold=t_default if threshold is None else float(threshold),
        window=w_default if window is None else int(window),
        gap_open=o_default if gap_open is None else int(gap_open),
        gap_extend=e_default if gap_extend is None else int(gap_extend),
        **rest)
    if opts.threshold < 0 or opts.window < 0:
        raise InputError("-threshold and -window_size must not be negative")
    if opts.max_target_seqs < 1:
        raise InputError("-max_target_seqs must be at least 1")
    return opts
