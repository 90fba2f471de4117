"""The compiled FASTA scan (clalign.data.fasta_nb) against the per-record reader; the
readers' shared rules are tested in test_fasta.py, which runs every test with both."""
from clalign.errors import InputError

_PIECES = [">", ">x y", ">id  de sc ", "\n", "\r\n", " ", "\t", "ACGT", "acgu", "MKVL", "W", "*", "**\n", "J",
           "1", ".", "\x0b", "N", "\n>", "\n\n"]


def test_compiled_scan_equals_per_record_reader():
    """Random FASTA-like files (derandomised, bounded): the compiled scan gives the per-record
    reader's arrays, alphabet and ids, or the same error (it hands flagged files to it)."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    import clalign.data.fasta as fasta

    def outcome(data, alphabet):
        try:
            p = fasta.parse_fasta_arrays("mem.fa", alphabet, data=data)
        except InputError as exc:
            return str(exc)
        return (p.residues.tobytes(), p.lengths.tolist(), p.stops.tolist(), p.alphabet,
                fasta._split(p.id_blob, p.id_offsets), fasta._split(p.desc_blob, p.desc_offsets))

    @settings(max_examples=150, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(_PIECES), max_size=30), st.sampled_from(["auto", "protein", "dna", "letters"]))
    def check(pieces, alphabet):
        data = "".join(pieces).encode()
        fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES = 0, 0
        fast = outcome(data, alphabet)
        fasta.COMPILED_MIN_BYTES = 1 << 62
        slow = outcome(data, alphabet)
        assert fast == slow

    old = fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES
    try:
        check()
    finally:
        fasta.COMPILED_MIN_BYTES, fasta.COMPILED_MIN_CORES = old
