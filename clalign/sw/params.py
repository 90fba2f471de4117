"""Template parameters of the Smith-Waterman kernels (one definition each) and the tuning table.

The inter-task kernel (``kernels/sw_intertask.mako``) aligns one query against
``WORDS * (32 // WIDTH)`` subjects per work-item, packed in the lanes of 32-bit words, with
``ROWS`` query rows of the current strip held in registers while it walks the subjects
column by column.
"""
from __future__ import annotations

from ..runtime import Param, ParamSet
from ..runtime.tuning import register

FAMILY = "sw_intertask"

SW_PARAMS = ParamSet(FAMILY, (
    Param.int("WIDTH", "bits per score lane: 8 (4 lanes, unsigned biased, saturating), 16 (2 lanes, "
                       "signed, wrapping add + relu max), 32 (1 lane, plain int; never overflows)",
              values=(8, 16, 32), default=16),
    Param.int("WORDS", "packed 32-bit words per work-item; subjects per work-item = WORDS * 32/WIDTH",
              lo=1, hi=4, default=1),
    Param.int("ROWS", "query rows held in registers per strip (multiple of 4); the strip's boundary row "
                      "goes through global memory between strips", values=(4, 8, 12, 16, 20, 24, 32, 48, 64),
              default=16),
    Param.choice("PROFILE", "query profile layout: 'plain' = one packed word per (residue, rows) assembled "
                            "into lanes by byte permutes; 'pairs' = the CUDASW++3.0 variant indexed by a pair "
                            "of subject residues (K=2), which holds the lane scores ready packed",
                 ("plain", "pairs"), default="plain"),
    Param.choice("SCHEDULE", "'static': one work-group per block of subject groups; 'dynamic': a fixed grid "
                             "whose work-groups take the next block (longest first) from an atomic counter",
                 ("static", "dynamic"), default="static"),
    Param.int("WG", "work-items per work-group (one block = WG groups of subjects)", lo=1, hi=1024, default=64),
))

# Non-template knobs the engine also accepts as overrides (not rendered into kernels).
ENGINE_KNOBS = {
    "batch_residues": "residues per database batch on the device (default from global/max-alloc memory)",
    "groups_per_cu": "dynamic schedule: work-groups launched per compute unit",
    "first_width": "alias of WIDTH: the lane width of the first pass",
}

# Tuned values: entries later in the list win (see clalign.runtime.tuning.lookup).
register(FAMILY, [
    ({}, {"WIDTH": 8, "WORDS": 1, "ROWS": 16, "WG": 64}),
    # PoCL on x86 (2026-11-22, tools/device_sw.py on 3,000 subjects): 32-bit lanes vectorised across
    # work-items ran 0.8 GCUPS, 8-bit SWAR 0.2, 16-bit SWAR 0.1.
    ({"is_cpu": True}, {"WIDTH": 32, "WORDS": 2, "ROWS": 32, "WG": 8}),
    ({"is_gpu": True}, {"WG": 128}),
    # H100 (sm_90), tools/device_sw.py 2026-11-22, docs/perf/sw.md: 16-bit lanes with DPX (PTX_S16X2)
    # beat 8-bit video SIMD 7x (1.0 vs 0.14 TCUPS) and 16-bit SWAR 4.5x; the plain profile beat the
    # pair variant (0.99 vs 0.90 at ROWS=32); ROWS=48 beat 32 and 64; WORDS=2 and WG 64/256 were slower.
    # Re-measured after the residue-minor profile, interleaved residues and t = h + (-goe) (runs 4-5 in
    # docs/perf/sw.md): 16-bit ROWS=48 WG=256 1.73 TCUPS kernel, 32-bit ROWS=64 WG=128 1.77.
    ({"is_nvidia": True, "cc_min": (9, 0)}, {"WIDTH": 16, "WORDS": 1, "ROWS": 48, "WG": 256, "PROFILE": "plain"}),
])
