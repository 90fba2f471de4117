"""The BER decoder and Blast-def-line-set reading (clalign.data.deflines) on crafted bytes."""
import pytest

from clalign.data.deflines import MAX_DEPTH, BerError, decode_ber, decode_deflines, id_and_description, ordinal_title


def _tlv(tag, body, indefinite=False):
    if indefinite:
        return bytes([tag, 0x80]) + body + b"\0\0"
    n = len(body)
    head = bytes([n]) if n < 128 else bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + head + body


def _vs(text):
    return _tlv(0x1A, text.encode())


def _defline(title, seqids, indefinite=True):
    ids = _tlv(0xA1, _tlv(0x30, b"".join(seqids), indefinite), indefinite)
    return _tlv(0x30, (_tlv(0xA0, _vs(title), indefinite) if title is not None else b"") + ids, indefinite)


def _local(name):
    return _tlv(0xA0, _tlv(0xA1, _vs(name)))


def _ordinal(n):
    tag = _tlv(0xA1, _tlv(0xA0, _tlv(0x02, bytes([n]))))
    return _tlv(0xAA, _tlv(0x30, _tlv(0xA0, _vs("BL_ORD_ID"), True) + tag, True), True)


def test_definite_and_indefinite_forms_agree():
    for indefinite in (True, False):
        buf = _tlv(0x30, _defline("a long title " * 20, [_local("x1")], indefinite), indefinite)
        (d,) = decode_deflines(buf)
        assert d.title.startswith("a long title") and d.sseqid() == "x1" and d.sacc() == "x1"


def test_ordinal_fast_path_equals_full_decode():
    for title in ("seq1 some words", "x" * 300, "single"):
        buf = _tlv(0x30, _defline(title, [_ordinal(7)]), True)
        assert ordinal_title(buf) == title
        (d,) = decode_deflines(buf)
        assert d.ordinal and d.sseqid() == title.split()[0]
        assert id_and_description(buf) == (title.split()[0], title.partition(" ")[2])
    assert ordinal_title(_tlv(0x30, _defline("t", [_local("x")]), True)) is None


@pytest.mark.parametrize("buf,message", [
    (b"\x30\x80" * (MAX_DEPTH + 2), "nesting too deep"),
    (b"\x30\x80\x30\x80", "missing end-of-contents"),
    (b"\x1a\x80abc\0\0", "indefinite length on a primitive"),
    (b"\x30\x85\0\0\0\0\0", "bad length"),
    (b"\x30\x05\x1a\x09abc", "length runs past the end"),
    (b"\x30\x00\x00", "bytes after the value"),
    (b"\x3f\xff\xff\xff\xff\xff\x00", "tag number too long"),
    (b"", "truncated value"),
])
def test_bad_ber(buf, message):
    with pytest.raises(BerError, match=message):
        decode_ber(buf)


def test_bad_deflines():
    with pytest.raises(BerError, match="without seqid"):
        decode_deflines(_tlv(0x30, _tlv(0x30, _tlv(0xA0, _vs("t"), True), True), True))
    with pytest.raises(BerError, match="empty"):
        decode_deflines(_tlv(0x30, b"", True))
    with pytest.raises(BerError, match="unknown Seq-id kind"):
        decode_deflines(_tlv(0x30, _defline("t", [_tlv(0xB5, _vs("x"))]), True))
