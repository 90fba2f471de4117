"""Template parameters of the BLASTP device phases (``kernels/blast_chunk.mako``, the default,
and ``kernels/blast_ungapped.mako``) and of the preliminary gapped extensions
(``kernels/blast_gapped.mako``, BLAST_GAPPED).

Constants shared by host and kernel (letter bits per word code, the separator code written
between subjects, key field widths) are defined here once and passed to the template.
"""
from __future__ import annotations

from ..data.nucleotide import BLASTNA_SENTINEL   # every BLASTN kernel's letter outside the batch
from ..runtime import Param, ParamSet
from ..runtime.tuning import register
from .gapped import HSP_MAX_WINDOW, MAX_SUBJECT_OFFSET, MAX_TOTAL_GAPS, MININT, RESTRICT_SIZE
from .lookup import CHARSIZE
from .nucl_gapped import COMPRESSION_RATIO
from .nucl_words import DIAGHASH_MUL, DIAGHASH_NUM_BUCKETS
from .stages_nb import PRE_FULL, PRE_NONE, PRE_RESTRICTED

#: Byte written between subjects in the device residue stream: outside the 28 NCBIstdaa codes,
#: so no lookup word contains it (a word never spans two subjects).
SEPARATOR = 31
#: Key = subject (KEY_SUBJ_BITS) | diagonal + max subject length (KEY_DIAG_BITS) | s_off (KEY_POS_BITS)
KEY_SUBJ_BITS, KEY_DIAG_BITS, KEY_POS_BITS = 22, 21, 21

BLAST_UNGAPPED = ParamSet("blast_ungapped", with_simd=False, params=(
    Param.int("WG", "work-items per work-group of both kernels (the hit kernel aggregates its "
                    "work-group's hit count in local memory and reserves output space with one "
                    "global atomic per work-group)", values=(32, 64, 128, 256), default=128),
    Param.int("WORD", "word size W (letters per lookup word)", values=(3,), default=3),
    Param.int("CHARSIZE", "bits per letter in a word code", values=(CHARSIZE,), default=CHARSIZE),
    Param.int("SEPARATOR", "code written between subjects", values=(SEPARATOR,), default=SEPARATOR),
    Param.int("KEY_SUBJ_BITS", "bits of the subject index in a hit key", values=(KEY_SUBJ_BITS,),
              default=KEY_SUBJ_BITS),
    Param.int("KEY_DIAG_BITS", "bits of the biased diagonal in a hit key", values=(KEY_DIAG_BITS,),
              default=KEY_DIAG_BITS),
    Param.int("KEY_POS_BITS", "bits of the subject offset in a hit key", values=(KEY_POS_BITS,),
              default=KEY_POS_BITS),
    Param.choice("KERNEL", "'chunk' (default): blast_chunk.mako, work-groups walk runs of "
                           "subjects in chunks of WG positions, bin each chunk's hits by diagonal "
                           "in local memory and apply the two-hit rule per bin (BLAST_CHUNK); "
                           "'subject': one work-item scans a whole subject with its diagonal "
                           "state in global memory (blast_scan); 'sorted': one work-item per "
                           "residue position emits hit keys, the host sorts them, one work-item "
                           "per diagonal run applies the two-hit rule (blast_hits + blast_two_hit)",
                 ("chunk", "subject", "sorted"), default="chunk"),
    Param.int("SPLIT", "blast_scan: residues per diagonal bucket -- a subject of L residues is "
                       "scanned by min(255, ceil(L / SPLIT)) work-items, each keeping the diagonals "
                       "d with d mod buckets = its bucket (0 = one work-item per subject)",
              lo=0, hi=1 << 20, default=2048),
    Param.bool("MATRIX_LOCAL", "copy the 28 x 28 score matrix to local memory in the two-hit "
                               "kernel (else read it from global memory)", default=True),
))



def chunk_qbits(wg: int) -> int:
    """Query-offset bits of a blast_chunk hit-buffer entry, (position in chunk) << QBITS | q:
    the position takes log2(WG) of the 32 bits."""
    return 32 - (wg.bit_length() - 1)


BLAST_CHUNK = ParamSet("blast_chunk", with_simd=False, params=(
    Param.int("WG", "work-items per work-group = positions per chunk = diagonal bins per chunk "
                    "(a power of two: bin = diagonal mod WG)", values=(32, 64, 128, 256, 512),
              default=256),
    Param.int("WORD", "word size W (letters per lookup word)", values=(3,), default=3),
    Param.int("CHARSIZE", "bits per letter in a word code", values=(CHARSIZE,), default=CHARSIZE),
    Param.int("SEPARATOR", "code written between subjects", values=(SEPARATOR,), default=SEPARATOR),
    Param.int("QBITS", "query-offset bits of a hit-buffer entry (chunk_qbits(WG); queries are "
                       "shorter than 2**QBITS)", lo=23, hi=27, default=24),
    Param.bool("STATE_LOCAL", "diagonal state in local memory (else a per-work-group slice of "
                              "global memory); chosen per query from its length (STATE)",
               default=True),
    Param.bool("PV_LOCAL", "copy the lookup table's presence bits (32**W bits) to local memory "
                           "(else read them through the global cache); chosen from their size "
                           "against the device's local memory", default=True),
    Param.bool("BALANCE", "stage each round's hits in position order and bin them WG at a time "
                          "(a second hit buffer; else every work-item bins its own position's "
                          "hits)", default=True),
    Param.bool("DEFER", "two-hit extensions queued by the bins' owners and run together, one "
                        "per work-item (else each owner extends its own hits in turn, and a "
                        "warp waits for its longest extension)", default=True),
    Param.int("QUEUE", "with DEFER: most extensions a bin's owner queues per pass (on distinct "
                       "diagonal slots; a hit on a slot already queued waits for the next pass)",
              lo=1, hi=8, default=2),
    Param.int("UNROLL", "residues per turn of the ungapped extensions' loops (their loads "
                        "issued together, the X-drop steps then taken one by one)",
              values=(1, 2, 4, 8), default=8),
    Param.choice("STATE", "host: where the diagonal state goes -- 'auto' (local memory when "
                          "qlen + window ints and a hit buffer of MIN_CAP entries fit), 'local', "
                          "'global'", ("auto", "local", "global"), default="auto"),
    Param.int("CAP_MAX", "host: most hits binned per round (local hit buffer entries; fewer when "
                         "local memory is short)", lo=32, hi=1 << 16, default=4096),
    Param.int("MIN_CAP", "host: least hit buffer entries for the state to stay in local memory "
                         "(default CAP_MAX's: a state that would shrink the hit buffer goes to "
                         "global memory -- on the H100 the longest queries ran 10-13 % faster so)",
              lo=32, hi=1 << 16, default=4096),
    Param.int("TASK", "host: residues per task (runs of consecutive subjects; a longer subject is "
                      "a task by itself); tasks run longest first", lo=256, hi=1 << 24,
              default=4096),
    Param.int("GROUPS", "host: work-groups launched per compute unit (each loops over tasks)",
              lo=1, hi=64, default=8),
))

# Tuned values (clalign.runtime.tuning.lookup; entries later in the list win), docs/perf/blastp.md.
register(BLAST_UNGAPPED.family, [
    # PoCL on the 2-core x86 VM (2026-11-23, tools/bench_blast_device.py -n 1000 and -n 5000, 20
    # CUDASW++ queries): the subject kernel ran in about half the chunk kernel's time (the chunk
    # kernel's barriers and local-memory bins cost more than they save on a CPU).
    ({"is_cpu": True}, {"KERNEL": "subject"}),
])


register(BLAST_CHUNK.family, [
    # H100 (2026-11-23, tools/bench_blast_device.py -n 570000, 20 CUDASW++ queries, runs K3 and
    # G8 in docs/perf/blastp.md): with QUEUE=2 and UNROLL=8, rounds of at most 3,072 hits ran
    # the 20 queries in 0.679-0.683 s; 2,048: 0.701-0.707 s, 2,560: 0.698 s, 3,584: 0.739 s
    # (rows identical). (Session 6's kernel, one queued extension per owner: 2,048 was best.)
    ({"is_nvidia": True}, {"CAP_MAX": 3072}),
])

#: Rows of a gapped-extension launch above which the host splits it (scratch is per launch row).
GAPPED_LAUNCH_MAX = 1 << 22

BLAST_GAPPED = ParamSet("blast_gapped", with_simd=False, params=(
    Param.bool("ENABLE", "host: run the preliminary gapped stage's extensions on the device "
                         "(speculatively, for every initial HSP; the host replays BLAST+'s "
                         "per-subject rule on them); else they are computed on the CPU",
               default=True),
    Param.int("WG", "work-items per work-group (one initial HSP each)", values=(32, 64, 128, 256),
              default=64),
    Param.int("BAND", "DP cells alive at once per extension (a ring of int2; an extension whose "
                      "X-drop band outgrows it is redone on the CPU)",
              values=(32, 64, 128, 256, 512, 1024), default=128),
    Param.bool("SCRATCH_LOCAL", "the rings in local memory (WG * BAND * 8 bytes per work-group; "
                                "only when that fits) instead of global scratch", default=False),
    Param.int("LAUNCH", "host: most initial HSPs per launch (global scratch is LAUNCH * BAND * 8 "
                        "bytes)", lo=32, hi=GAPPED_LAUNCH_MAX, default=1 << 18),
    Param.int("RESTRICT", "s_RestrictedGappedAlign's gap spacing (gapped.RESTRICT_SIZE)",
              values=(RESTRICT_SIZE,), default=RESTRICT_SIZE),
    Param.int("WINDOW", "BlastGetStartForGappedAlignment's window (gapped.HSP_MAX_WINDOW)",
              values=(HSP_MAX_WINDOW,), default=HSP_MAX_WINDOW),
    Param.int("MAX_SUBJECT_OFFSET", "AdjustSubjectRange applies to subjects this long or longer",
              values=(MAX_SUBJECT_OFFSET,), default=MAX_SUBJECT_OFFSET),
    Param.int("MAX_TOTAL_GAPS", "AdjustSubjectRange's margin", values=(MAX_TOTAL_GAPS,),
              default=MAX_TOTAL_GAPS),
    Param.int("MININT", "the DP's minus infinity (gapped.MININT)", values=(MININT,), default=MININT),
    Param.int("PRE_NONE", "status of an extension left to the CPU (its band overflowed; "
                          "stages_nb.PRE_NONE)", values=(PRE_NONE,), default=PRE_NONE),
    Param.int("PRE_FULL", "status of a full-DP extension (stages_nb.PRE_FULL)",
              values=(PRE_FULL,), default=PRE_FULL),
    Param.int("PRE_RESTRICTED", "status of a restricted-DP extension (stages_nb.PRE_RESTRICTED)",
              values=(PRE_RESTRICTED,), default=PRE_RESTRICTED),
))

register(BLAST_GAPPED.family, [
    # PoCL on the 2-core VM (2026-11-23, 5,000 long-tail proteins x 20 CUDASW++ queries, 13,436
    # initial HSPs, device path, 2 threads): the kernel took 0.68-0.92 s on both cores where the
    # numba stage took 0.59 CPU-s (it extends only the HSPs not contained; the kernel all): on a
    # CPU device the numba stage is used (docs/perf/blastp.md).
    ({"is_cpu": True}, {"ENABLE": False}),
    # H100 (2026-11-23, tools/bench_blast_gapped.py -n 100000, 262,478 initial HSPs, run G7 in
    # docs/perf/blastp.md): rings of 128 cells in local memory at WG 32 (36 KB per group) took
    # 0.048 s of kernel against 0.060 s in global scratch at WG 64, the same single overflow,
    # rows equal to the CPU stage's
    ({"is_nvidia": True}, {"WG": 32, "SCRATCH_LOCAL": True}),
])

#: Most bases of one device block of BLASTN subjects (the 2-bit stream of whole segments uploaded
#: together; its scan positions and byte offsets fit 32 bits).
NSCAN_BLOCK_BASES_MAX = 1 << 31

BLASTN_SCAN = ParamSet("blastn_scan", with_simd=False, params=(
    Param.int("WG", "work-items per work-group of the three kernels (each flushes its "
                    "work-group's local buffer with one global atomic)", values=(32, 64, 128, 256),
              default=128),
    Param.int("WIDTH", "lookup table width: bases per scanned word (BlastChooseNaLookupTable)",
              lo=4, hi=12, default=8),
    Param.int("STEP", "scan stride word_size - width + 1", lo=1, hi=1 << 20, default=1),
    Param.int("WORD", "word size (the mini-extension confirms WORD bases around each hit)",
              lo=4, hi=1 << 20, default=11),
    Param.int("EXT", "mini-extension: 0 direct (WIDTH = WORD), 1 s_BlastNaExtend (and its "
                     "aligned variant), 2 s_BlastSmallNaExtend, 3 "
                     "s_BlastSmallNaExtendAlignedOneByte (nucl_words' DIRECT..SMALL_ALIGNED)",
              lo=0, hi=3, default=1),
    Param.bool("USE", "host: whether `--device` runs the BLASTN word finding on this device "
                      "(else the search stays on the CPU path)", default=True),
    Param.int("BLOCK_BASES", "host: subject bases per device block (uploaded once; the block "
                             "after it is scanned while the CPU extends this one's hits)",
              lo=1 << 12, hi=NSCAN_BLOCK_BASES_MAX, default=1 << 24),
    Param.bool("PIPELINE", "host: a thread runs the device blocks ahead of the CPU stages (else "
                           "each block runs when the CPU reaches it)", default=True),
    Param.int("LANES", "host, with PIPELINE: device blocks in flight at once, each on its own "
                       "queue, buffers and feeder thread (one block's host work between its "
                       "kernels overlaps the other's kernels); blocks finish in order",
              values=(1, 2), default=2),
    Param.choice("UNGAPPED", "host: where the word starts' diagonal test, word check and ungapped "
                             "extension run: 'cpu' (the compiled word finder), 'blastn' (on the "
                             "device for -task blastn/blastn-short, megablast on the CPU; "
                             "blast_nucl_ungapped.mako), 'all' (on the device for every task)",
                 ("cpu", "blastn", "all"), default="blastn"),
    Param.bool("PRELIM", "host, with the ungapped extension on the device and -task blastn / "
                         "blastn-short: the preliminary stage's score-only X-drop DP of every "
                         "saved hit computed on the device too (blast_nucl_gapped.mako; the "
                         "workers replay BLAST+'s rule on it), else on the workers",
               default=True),
    Param.int("SENTINEL", "query letter outside the batch (BLASTNA_SENTINEL)",
              values=(BLASTNA_SENTINEL,), default=BLASTNA_SENTINEL),
))

#: Keys of the device's diagonal-store work (one work-item each): BLAST+'s hash buckets.
NW_KEYS = DIAGHASH_NUM_BUCKETS

#: Ints per saved hit that nw_spec / nw_redo write (segment, word index, q_off, s_off, q_start,
#: s_start, length, score, context, tag).
NW_ROW = 10

BLASTN_UNGAPPED = ParamSet("blastn_ungapped", with_simd=False, params=(
    Param.int("WG", "work-items per work-group of the binning and extension kernels",
              values=(32, 64, 128, 256), default=64),
    Param.int("TILE", "word starts per work-group of the binning kernels (the host sums "
                      "keys x work-groups counts)", values=(1024, 2048, 4096, 8192, 16384),
              default=4096),
    Param.int("WIDTH", "lookup table width (the word check reads WIDTH-base words)", lo=4, hi=12,
              default=8),
    Param.int("WORD", "word size", lo=4, hi=1 << 20, default=11),
    Param.bool("HASH", "BLAST+'s hash diagonal store (query batch over QUERY_LEN_FOR_HASH "
                       "bases), else its folded array", default=True),
    Param.bool("EXACT", "exact ungapped extension only (WORD < nucl_words.EXACT_WORD_BELOW), "
                        "else the byte-wise one with its exact redo", default=False),
    Param.int("PIECE", "host: window of sorted word starts in which nw_cuts cuts a key's run "
                       "at most once (pieces of about PIECE starts, one work-item each in nw_spec)",
              values=(1, 2, 4, 8, 16, 32, 64, 128, 256), default=32),
    Param.int("GAP", "host: a piece starts where a start lies at least GAP bases past the one "
                     "before it in its key (so that the ends written before it rarely reach it)",
              lo=1, hi=1 << 20, default=256),
    Param.int("SLOTS", "diagonal-store cells a piece may use in nw_spec (private memory); a "
                       "piece needing more is redone by nw_redo", values=(2, 4, 8, 16), default=8),
    Param.int("NBUCKET", "keys: BLAST+'s DIAGHASH_NUM_BUCKETS (array store: cell mod NBUCKET)",
              values=(NW_KEYS,), default=NW_KEYS),
    Param.int("HASH_MUL", "BLAST+'s diagonal hash multiplier", values=(DIAGHASH_MUL,),
              default=DIAGHASH_MUL),
    Param.int("ROW", "ints per saved-hit row (NW_ROW)", values=(NW_ROW,), default=NW_ROW),
    Param.int("SENTINEL", "query letter outside the batch (BLASTNA_SENTINEL)",
              values=(BLASTNA_SENTINEL,), default=BLASTNA_SENTINEL),
))

#: The device DP's minus infinity (int32). The CPU's (nucl_gapped.MININT, -2**30) equals the
#: BLASTNA matrix's sentinel score, so their sum is -2**31; with -2**29 every value derived from
#: it (plus any matrix entry >= -2**30, minus a gap cost < NDP_COST_MAX) stays in int32, and
#: below every floor (>= -NDP_COST_MAX), which is all the DP asks of it (see the kernel).
NDP_MININT = -(1 << 29)
#: Largest X-drop, gap cost and best score (reward x context length) the device DP takes; a
#: search beyond them leaves the DP to the CPU.
NDP_COST_MAX = 1 << 28
#: Status of a device DP row: left to the CPU (the band overflowed), computed.
NDP_NONE, NDP_DONE = 0, 1
#: Ints of a device DP result (score, q_start, q_end, s_start, s_end, q_off, s_off, status), and
#: of a saved-hit row handed on to the workers (NW_ROW's but the tag).
NDP_COLS, NW_HEAD = 8, 9

BLASTN_GAPPED = ParamSet("blastn_gapped", with_simd=False, params=(
    Param.int("WG", "work-items per work-group (one saved hit at a time each)",
              values=(32, 64, 128, 256), default=64),
    Param.int("BAND", "DP cells alive at once per extension (a ring of int2 in global memory; "
                      "a hit whose X-drop band outgrows it is left to the CPU)",
              values=(4, 8, 16, 32, 64, 128, 256, 512, 1024), default=128),
    Param.int("CELLS", "DP cells one hit may visit (both directions); a hit that needs more "
                       "(a long true alignment, whose many seeds the CPU's containment test "
                       "skips but for the first) is left to the CPU, so no work-item runs a "
                       "whole gene's extension", values=tuple(1 << k for k in range(8, 21)),
              default=1 << 13),
    Param.int("LAUNCH", "host: most work-items per launch (each loops over the rows; global "
                        "scratch is LAUNCH * BAND * 8 bytes)", lo=32, hi=1 << 22, default=1 << 16),
    Param.int("NCODE", "BLASTNA codes: the score matrix is NCODE x NCODE", values=(16,),
              default=16),
    Param.int("SENTINEL", "query letter outside the batch (BLASTNA_SENTINEL)",
              values=(BLASTNA_SENTINEL,), default=BLASTNA_SENTINEL),
    Param.int("RATIO", "bases per subject byte (nucl_gapped.COMPRESSION_RATIO)",
              values=(COMPRESSION_RATIO,), default=COMPRESSION_RATIO),
    Param.int("ROW", "ints per saved-hit row (NW_ROW)", values=(NW_ROW,), default=NW_ROW),
    Param.int("MININT", "the DP's minus infinity (NDP_MININT)", values=(NDP_MININT,),
              default=NDP_MININT),
    Param.int("NONE", "status: left to the CPU (NDP_NONE)", values=(NDP_NONE,), default=NDP_NONE),
    Param.int("DONE", "status: computed (NDP_DONE)", values=(NDP_DONE,), default=NDP_DONE),
    Param.int("COLS", "ints per result (NDP_COLS)", values=(NDP_COLS,), default=NDP_COLS),
    Param.int("HEAD", "ints of a saved hit handed on (NW_HEAD)", values=(NW_HEAD,), default=NW_HEAD),
))

# PoCL on the 2-core build VM (2026-11-23, load average ~5; tools/bench_blastn.py data of
# --genome-mb 6 --reads 300 --genes 10, run_blastn in-process, medians of 3, CPU path against
# device): megablast reads 0.450 / 0.472 s (table upload 0.07 s of it), megablast genes 0.160 /
# 0.142 s, -task blastn genes 0.502 / 0.353 s (word finding 0.34 s against 0.19 s). The device
# path is about as fast (within 5 %) with few lookup hits and faster with many, so CPU devices
# use it too (USE=False keeps a device on the CPU path).
# UNGAPPED on PoCL (same VM, 2026-11-28, branch bnung, 30 genes x 30 Mb -task blastn, 2 threads,
# alternating): in-process 1.31-1.44 s with the CPU word finder against 1.49-1.53 s with the
# device's (the kernels share the two cores with the workers and queue behind the scan in the
# producer thread); whole commands 2.21-2.47 s against 2.42-2.67 s. CPU devices keep the
# compiled word finder; other devices take the default ('blastn': -task blastn on the device).
# PRELIM on PoCL (same VM, 2026-11-29, branch ndp, 30 genes x 20 Mb -task blastn, 2 threads,
# UNGAPPED forced to 'blastn', rounds 2-4 alternating): 0.72-0.75 s in-process with the device's
# DP (its kernel 0.17-0.18 s for 17,331 saved hits) against 0.57-0.66 s without; CPU devices
# keep the DP on the workers (docs/perf/blastn.md).
register(BLASTN_SCAN.family, [({"is_cpu": True}, {"USE": True, "UNGAPPED": "cpu", "LANES": 1,
                                                  "PRELIM": False})],
         BLASTN_SCAN)
