"""The compiled FASTA scan (clalign.data.fasta_nb) against the per-record reader; the
readers' shared rules are tested in test_fasta.py, which runs every test with both."""
from clalign.errors import InputError

_HEADS = [">", ">x", ">x y", ">id  de sc ", "> lead", ">a\tb\r", ">a*b c", ">\x0bz"]
_GOOD = ["ACGT", "acgu", "NNNN", "ACGTN*", "MKVLW", "M*K", " A C ", "X\r", "**", "\t", ""]
_LINES = _GOOD * 6 + ["J", "*", "1", "."]


def _files():
    """Records (header line, sequence lines) with LF or CRLF ends, mostly well formed; the
    rare illegal byte, empty record, inner '*' or text before the first '>' makes a bad one."""
    from hypothesis import strategies as st

    record = st.tuples(st.sampled_from(_HEADS), st.lists(st.sampled_from(_LINES), min_size=1, max_size=5))
    return st.tuples(st.sampled_from(["", "", "", "\n", " \n", "junk\n"]), st.lists(record, max_size=8),
                     st.sampled_from(["\n", "\r\n"]), st.booleans())


def _text(lead, records, nl, final_nl):
    body = nl.join(h + nl + nl.join(lines) for h, lines in records)
    return (lead + body + (nl if final_nl and body else "")).encode()


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
    @given(_files(), st.sampled_from(["auto", "protein", "dna", "letters"]))
    def check(parts, alphabet):
        data = _text(*parts)
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
