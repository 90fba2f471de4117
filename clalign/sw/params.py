"""Template parameters of the Smith-Waterman kernels (one definition each) and the tuning table.

The inter-task kernel (``kernels/sw_intertask.mako``) aligns one query against
``WORDS * (32 // WIDTH)`` subjects per work-item, packed in the lanes of 32-bit words, with
``ROWS`` query rows of the current strip held in registers while it walks the subjects
column by column.

The vector kernel (``kernels/sw_vector.mako``, family ``sw_vector``) is the CPU first pass: each
work-item aligns the query against ``VEC`` subjects held in the elements of a ``short{VEC}``
OpenCL C vector (SWIPE-style inter-task SIMD with a per-column score profile); ``KERNEL`` picks
which family runs the first pass.
"""
from __future__ import annotations

from ..runtime import Param, ParamSet
from ..runtime.tuning import Entry

# Constants shared by the host and every SW kernel (passed to the templates as parameters).
ALPHA = 32          # profile rows per residue code (28 codes + sentinels), power of 2 for pair indices
SENTINEL = 28       # residue code of padding lanes/columns/rows; scores min(matrix.min, 0)

_SHARED = (
    Param.int("ALPHA", "profile rows per residue code (host constant clalign.sw.params.ALPHA)",
              values=(ALPHA,), default=ALPHA),
    Param.int("SENTINEL", "residue code of padding (host constant clalign.sw.params.SENTINEL)",
              values=(SENTINEL,), default=SENTINEL),
)

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
    Param.int("UNROLL", "subject columns per loop iteration: 4 = straight-line code over a chunk of four "
                        "residues (independent dependency chains the GPU compiler can overlap; 4x the code, "
                        "slow to build: 22.5 s for ROWS=64 on NVIDIA's OpenCL with CELL=c, 1 s with CELL=ptx), "
                        "2 = two columns, 1 = one column per iteration",
              values=(1, 2, 4), default=1),
    Param.choice("CELL", "32-bit cell: 'c' = OpenCL C; 'ptx' = one inline PTX block per cell (NVIDIA, SIMD=ptx; "
                         "other widths ignore it), which NVIDIA's front end builds far faster than the same "
                         "operations in C once UNROLL x ROWS cells form one straight-line body", ("c", "ptx"),
                 default="c"),
    Param.choice("CHAIN", "32-bit cell form (other widths ignore it): 'h' = f' from h - goe; 'x' = the same value "
                          "from x - goe, x = max(dg + p, e, 0) (exact since gap_open >= 0), which halves the "
                          "dependent operations per row of a column", ("h", "x"), default="h"),
    Param.choice("KERNEL", "first-pass kernel family: 'intertask' = packed-word lanes (sw_intertask, 8/16/32-bit "
                           "passes); 'vector' = short{VEC} vector lanes (sw_vector, 16-bit, then saturated subjects "
                           "rescored by the 32-bit sw_intertask pass). Not rendered into templates",
                 ("intertask", "vector"), default="intertask"),
) + _SHARED)

VFAMILY = "sw_vector"


def vector_lanes(v) -> str | None:
    """sw_vector: VEC must be a vector width of the chosen LANE type."""
    if v.get("LANE") is None or v.get("VEC") is None:
        return None
    legal = (16, 32) if v["LANE"] == "u8" else (8, 16)
    if v["VEC"] not in legal:
        return (f"sw_vector: VEC={v['VEC']} is not available with LANE={v['LANE']} "
                f"(s16: 8 or 16; u8: 16 or 32)")
    return None


def intra_local_bytes(v) -> int:
    """Local memory of one sw_intratask work-group (kernels/sw_intratask.mako): the H/F border
    exchange (4 x WG x TW ints), the WG-int reduction and, with PROF=local, every work-item's
    profile slice ((SENTINEL + 1) x TH scores of PBITS bits)."""
    words = 4 * v["WG"] * v["TW"] + v["WG"]
    if v.get("PROF") == "local":
        words += (v["SENTINEL"] + 1) * v["WG"] * v["TH"] * v["PBITS"] // 32
    return 4 * words

SWV_PARAMS = ParamSet(VFAMILY, (
    Param.choice("LANE", "score lanes: 's16' = signed 16-bit short{VEC} (VEC 8 or 16; saturated lanes rescored "
                         "at 32 bits); 'u8' = unsigned biased 8-bit with saturating add/sub (VEC 16 = uchar16, or "
                         "32 = a Clang vector extension, PoCL/Clang only), saturated lanes rescored by s16",
                 ("s16", "u8"), default="s16"),
    Param.int("VEC", "subjects per work-item = elements of the score vector: s16 8 | 16, u8 16 | 32 "
                     "(16 x 16 bit and 32 x 8 bit are one AVX2 register)", values=(8, 16, 32), default=16),
    Param.int("COLS", "subject columns computed per pass over the query rows (row state read/written once "
                      "per COLS columns)", values=(1, 2, 4), default=2),
    Param.int("STRIP", "query rows per strip: the strip's row state (STRIP x 2 vectors per work-item) should "
                       "stay in the CPU cache; longer queries go strip by strip with a per-column boundary",
              lo=16, hi=65536, default=1024),
    Param.int("WG", "work-items per work-group", lo=1, hi=1024, default=1),
) + _SHARED, with_simd=False, constraints=(vector_lanes,))

INTRA_FAMILY = "sw_intratask"

INTRA_PARAMS = ParamSet(INTRA_FAMILY, (
    Param.int("TH", "tile height: query rows per work-item, held in registers (multiple of 4, read as int4 "
                    "profile loads); a strip is WG x TH rows", values=(4, 8, 12, 16, 24, 32), default=8),
    Param.int("TW", "tile width: subject columns per wavefront step; one barrier and one local-memory "
                    "border exchange per step", values=(1, 2, 4, 8, 16), default=4),
    Param.int("WG", "work-items per work-group (one (query, subject) pair per work-group)", lo=1, hi=1024,
              default=64),
    Param.int("PBITS", "bits per query-profile score, 32/PBITS rows packed per word (a work-item reads TH*PBITS/32 "
                       "words per column); set by the host to the narrowest the matrix fits (8 for BLOSUM), an "
                       "override may only widen it", values=(8, 16, 32), default=32),
    Param.choice("PROF", "where the tiles read the query profile: 'global' (cached global memory) or 'local' (each "
                         "work-item copies its strip's slice, (SENTINEL+1) x TH scores, to local memory once per strip)",
                 ("global", "local"), default="global"),
    Param.bool("AHEAD", "load the next tile's profile words one step ahead (overlaps their latency, twice the "
                        "profile registers); else at the start of the step", default=True),
    Param.choice("KIND", "long-pair kernel: 'tiles' = this tiled wavefront kernel (GPUs); 'striped' = the "
                         "striped SIMD kernel sw_striped.mako, one work-item per pair (CPUs). Not rendered",
                 ("tiles", "striped"), default="tiles"),
) + _SHARED, with_simd=False, local_memory=intra_local_bytes)

STRIPED_FAMILY = "sw_striped"

STRIPED_PARAMS = ParamSet(STRIPED_FAMILY, (
    Param.choice("LANE", "score lanes: 'u8' = unsigned 8-bit, biased profile, saturating (pairs reaching "
                         "255 - bias - smax rescored at s16); 's16' = short16 (exact below 32767 - smax, higher pairs "
                         "rescored at s32); 's32' = int8", ("u8", "s16", "s32"), default="s16"),
    Param.int("VEC", "elements per vector: u8 16 (uchar16), 32 or 64 (Clang ext_vector_type, needs clang_vectors; "
                     "64 where the device compiles for AVX-512), s16 16, s32 8", values=(8, 16, 32, 64), default=16),
    Param.int("WG", "work-items per work-group (one pair per work-item)", lo=1, hi=1024, default=1),
) + _SHARED, with_simd=False)

# Per-cell rates of the kernels on a device (GCUPS over the whole device), measured by
# clalign.sw.threshold: "inter" = the first-pass kernel on normal subjects, "intra" = the
# intra-task kernel on long pairs. Absent entries are measured at first use.
RATES_FAMILY = "sw_rates"

RATES_PARAMS = ParamSet(RATES_FAMILY, (
    Param.real("inter", "GCUPS of the first-pass kernel over the whole device on normal subjects", lo=0.0),
    Param.real("lane", "GCUPS per lane of one work-group running alone (a long subject's pace)", lo=0.0),
    Param.real("intra", "GCUPS of the intra-task kernel over the whole device on long pairs", lo=0.0),
), with_simd=False)

# Non-template knobs the engine also accepts as overrides (not rendered into kernels).
ENGINE_KNOBS = {
    "long_threshold": "subjects longer than this go to the intra-task kernel (default: from the measured rates; "
                      "a very large value keeps every subject in the inter-task kernel)",
    "batch_residues": "residues per database batch on the device (default from global/max-alloc memory)",
    "groups_per_cu": "dynamic schedule: work-groups launched per compute unit",
    "pipeline": "queries in flight per device, 1 (default) or 2 (the next query's first pass on a second queue)",
    "first_width": "alias of WIDTH: the lane width of the first pass",
}

# Template parameters only the inter-task kernel has: overriding one of them without KERNEL asks
# for the inter-task first pass (e.g. WIDTH=8), whatever the tuning table says.
INTERTASK_ONLY = ("WIDTH", "WORDS", "ROWS", "PROFILE", "SCHEDULE", "UNROLL", "CHAIN", "CELL", "first_width")

# Built-in tuning table (loaded by clalign.runtime.tuning.load_builtin; the measurements behind
# each entry: docs/perf/tuning.md, which points to the runs in docs/perf/sw.md).
TUNING = {
    FAMILY: (SW_PARAMS, [
        Entry("default", {}, {"WIDTH": 8, "WORDS": 1, "ROWS": 16, "WG": 64}),
        Entry("vendor", {"is_cpu": True}, {"WIDTH": 32, "WORDS": 2, "ROWS": 32, "WG": 8, "KERNEL": "vector"},
              source="PoCL x86 2026-11-22, docs/perf/sw.md (PoCL section)"),
        Entry("vendor", {"is_gpu": True}, {"WG": 128}),
        Entry("architecture", {"is_nvidia": True, "cc_min": (9, 0)},
              {"WIDTH": 16, "WORDS": 1, "ROWS": 64, "WG": 256, "PROFILE": "plain", "UNROLL": 4,
               "CELL": "ptx"},
              source="H100 2026-11-27, tools/bench_sw_tail.py runs Y1-Y3 in docs/perf/sw.md: 16-bit lanes "
                     "(3.6 instructions a cell against 6.8 for 32-bit ones) with WG 256 and the rates below: "
                     "the split search on the long-tail database 2.19-2.21 s against 2.91-2.94 s with the "
                     "earlier WIDTH 32 / WG 128 (runs 1-6, 15; CELL=ptx, which 32-bit rescoring passes use: "
                     "docs/perf/cache.md runs 4-5)"),
    ]),
    VFAMILY: (SWV_PARAMS, [
        Entry("default", {}, {"LANE": "s16", "VEC": 16, "COLS": 4, "STRIP": 4096, "WG": 1},
              source="PoCL 2-core EPYC 2026-11-22, docs/perf/sw.md (PoCL section)"),
        # 32 x 8-bit lanes need Clang's ext_vector_type (probe: clang_vectors; PoCL compiles with Clang).
        Entry("architecture", {"is_cpu": True, "clang_vectors": True}, {"LANE": "u8", "VEC": 32},
              source="PoCL 2-core EPYC 2026-11-22, docs/perf/sw.md (PoCL section)"),
    ]),
    INTRA_FAMILY: (INTRA_PARAMS, [
        Entry("default", {}, {"TH": 8, "TW": 4, "WG": 64}),
        Entry("vendor", {"is_cpu": True}, {"TH": 16, "TW": 8, "WG": 8, "KIND": "striped"},
              source="PoCL 2-core EPYC 2026-11-23: tiled kernel 0.12-0.23 GCUPS, so CPUs use the striped "
                     "kernel (u8 lanes, then s16, s32; u8 1.7-2.4x s16), docs/perf/sw.md"),
        Entry("vendor", {"is_gpu": True}, {"TH": 8, "TW": 4, "WG": 128}),
        Entry("architecture", {"is_nvidia": True, "cc_min": (9, 0)}, {"TH": 16, "TW": 8, "WG": 128},
              source="H100 tools/bench_sw_tail.py run 13 (8-bit profile, conflict-free border exchange): "
                     "1.56 TCUPS kernel; runs 9-13 in docs/perf/sw.md (issue 14)"),
    ]),
    STRIPED_FAMILY: (STRIPED_PARAMS, []),
    RATES_FAMILY: (RATES_PARAMS, [
        # measured by the engine at first use (clalign.sw.threshold.measure_rates) with the sm_90
        # entries above; in the table so that a fresh machine does not spend 4.8 s measuring them
        Entry("architecture", {"is_nvidia": True, "cc_min": (9, 0)},
              {"inter": 5302.0, "lane": 0.0799, "intra": 1622.7},
              source="H100 2026-11-27, measure_rates with the sm_90 entries above (WIDTH 16, WG 256), "
                     "docs/perf/sw.md run Y2"),
    ]),
}

