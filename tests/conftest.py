"""Shared, generic fixtures (no OpenCL here; engines keep their own fixtures in their tests)."""
import gzip as _gzip
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "data")
#: The 20 CUDASW++ benchmark queries (144-5478 aa), bundled with their provenance (data/cudasw/README.md).
CUDASW = os.path.join(REPO, "tests", "data", "cudasw", "cudasw_queries.fasta")


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
    """Path of the 20 CUDASW++ benchmark queries (bundled: tests/data/cudasw/)."""
    return CUDASW
