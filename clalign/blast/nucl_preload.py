"""The compiled stages of a BLASTN search whose cached code is loaded ahead of need on a thread
(``runtime.jit.preload``), in the order of need. A module of its own, importing nothing, so
that ``clalign blastn`` can start the loads before it imports the engine.

Order: the query set-up (DUST, batch, lookup table, letter counts, compressed query), the
CPU scan (last with a device, which scans there unless the tuning table says otherwise), the
word finder, the preliminary gapped stage, the traceback. The first load pays numba's own
start; the later stages' loads are then off the critical path (each was made by its first
caller before, the other workers waiting on numba's lock).
"""
_SETUP = ("clalign.blast.nucl_dust_nb:_dust_many", "clalign.blast.nucl_setup:_fill_contexts",
          "clalign.blast.nucl_flat_nb:_walk_parts", "clalign.blast.nucl_flat_nb:_sort_parts",
          "clalign.blast.nucl_setup:_context_counts", "clalign.blast.nucl_words:_compress_range")
_SCAN = ("clalign.blast.nucl_scan:scan_subject",)
_SEARCH = ("clalign.blast.nucl_words:word_finder", "clalign.blast.nucl_stages_nb:prelim_rows",
           "clalign.blast.nucl_stages_nb:subject_blastna", "clalign.blast.nucl_stages_nb:traceback_unit")
PRELOAD = _SETUP + _SCAN + _SEARCH
PRELOAD_DEVICE = _SETUP + _SEARCH + _SCAN


def preload_specs(device) -> tuple:
    """The preload of a search with ``device`` (None: the CPU path)."""
    return PRELOAD if device is None else PRELOAD_DEVICE
