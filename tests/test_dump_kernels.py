"""CLALIGN_DUMP_KERNELS writes rendered kernels only into a real folder of ours (issue 9): a
symlink planted in a shared place such as /tmp is never followed."""
import os

import pytest

from clalign.errors import ClalignError
from clalign.runtime.render import dump_source


def test_dump_creates_private_folder(tmp_path):
    d = tmp_path / "new" / "dump"
    p = dump_source("x.mako", "kernel void k() {}", d)
    assert p.read_text() == "kernel void k() {}" and p.parent == d
    assert oct(os.stat(d).st_mode & 0o777) == oct(0o700)


def test_dump_refuses_planted_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    link = tmp_path / "clalign-kernels"
    os.symlink(victim, link)
    with pytest.raises(ClalignError, match="symbolic link"):
        dump_source("x.mako", "src", link)
    assert os.listdir(victim) == []


def test_dump_refuses_foreign_or_world_writable_folder(tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    with pytest.raises(ClalignError, match="writable by every user"):
        dump_source("x.mako", "src", d)
    d.chmod(0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(d).st_uid + 1)
    with pytest.raises(ClalignError, match="owned by uid"):
        dump_source("x.mako", "src", d)
    assert os.listdir(d) == []


def test_dump_does_not_follow_a_planted_file_symlink(tmp_path):
    d = tmp_path / "dump"
    d.mkdir(mode=0o700)
    target = tmp_path / "precious"
    target.write_text("keep")
    import hashlib

    name = f"x-{hashlib.sha1(b'src').hexdigest()[:12]}.cl"
    os.symlink(target, d / name)
    with pytest.raises(ClalignError, match="cannot write"):
        dump_source("x.mako", "src", d)
    assert target.read_text() == "keep"
