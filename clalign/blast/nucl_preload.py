"""The compiled stages of a BLASTN search, in the order of need, for ``runtime.jit.preload``.

Kept apart from :mod:`blastn` (which imports numpy, the database and search modules) so that
``clalign blastn`` can start numba's import and these loads before it imports the engine: the
query set-up's first compiled call (DUST) waits for numba, and everything before the device's
first block waits for the set-up. This module imports nothing.
"""

#: the query set-up (batch, letter counts, DUST, compressed query, lookup table), the word
#: finder, the preliminary gapped stage, the traceback, the CPU scan (before the word finder
#: without a device). The first load pays numba's own start; the others were each made by the
#: first worker calling the stage, the other workers waiting on numba's lock. The set-up's main
#: thread (context layout, then letter counts) is its critical path; DUST, on its own thread,
#: computes in ~0.2 s on 16 threads once loaded (H200 y55), so its load (0.25 s) comes third.
SETUP = ("clalign.blast.nucl_setup:_fill_contexts", "clalign.blast.nucl_setup:_context_counts",
         "clalign.blast.nucl_dust_nb:_dust_many_text", "clalign.blast.nucl_words:_compress_range",
         "clalign.blast.nucl_flat_nb:_walk_parts", "clalign.blast.nucl_flat_nb:_sort_parts")
SEARCH = ("clalign.blast.nucl_words:word_finder", "clalign.blast.nucl_stages_nb:prelim_rows",
          "clalign.blast.nucl_stages_nb:subject_blastna", "clalign.blast.nucl_stages_nb:traceback_unit")
SCAN = ("clalign.blast.nucl_scan:scan_subject",)
DEVICE = ("clalign.blast.nucl_device_ungapped:_merge_pieces",
          "clalign.blast.nucl_device_ungapped:_keep_plan")
PRELOAD = SETUP + SCAN + SEARCH
PRELOAD_DEVICE = SETUP + DEVICE + SEARCH + SCAN


def stages(device) -> tuple:
    """The stages a search with ``device`` (None: the CPU path) preloads."""
    return PRELOAD if device is None else PRELOAD_DEVICE
