"""Shared, generic fixtures (no OpenCL here; engines keep their own fixtures in their tests)."""
import gzip as _gzip
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "data")


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
