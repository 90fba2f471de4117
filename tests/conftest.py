"""Shared, generic fixtures (no OpenCL here; engines keep their own fixtures in their tests)."""
import gzip as _gzip
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "data")
#: The 20 CUDASW++ benchmark queries (144-5478 aa), beside the checkout (see ../shared/data/README.md).
CUDASW = os.path.join(REPO, "..", "shared", "data", "cudasw_queries.fasta")


@pytest.fixture
def write_file(tmp_path):
    """write_file(name, text_or_bytes, gzip=False) -> path of a new file under tmp_path."""

    def _write(name, content, gzip=False):
        raw = content.encode("utf-8") if isinstance(content, str) else content
        path = tmp_path / name
        if gzip:
            raw = _gzip.compress(raw)
        path.write_bytes(raw)
        return str(path)

    return _write


@pytest.fixture
def data_dir():
    """The repository's bundled data folder (data/)."""
    return DATA


@pytest.fixture
def cudasw_fasta():
    """Path of the CUDASW++ benchmark queries; the test is skipped when the file is absent
    (a bare clone without ../shared/data; CI has it)."""
    if not os.path.exists(CUDASW):
        pytest.skip(f"{CUDASW} is absent (the CUDASW++ benchmark queries, see shared/data/README.md)")
    return CUDASW
