"""The search's block layouts: one build per geometry, geometries built at the same time."""
import threading
import types

from clalign.hmm import engine


def _builder(started, release, count):
    def build():
        count.append(1)
        started.set()
        assert release.wait(10)
        return types.SimpleNamespace(pieces=None)
    return build


def test_other_geometry_is_not_held_by_a_layout_being_built():
    cache = {}
    started, release, count = threading.Event(), threading.Event(), []
    slow = threading.Thread(target=engine._layout, args=(cache, "a", 0, None, _builder(started, release, count), None))
    slow.start()
    assert started.wait(10)
    done = threading.Event()
    other = threading.Thread(target=lambda: (engine._layout(cache, "b", 0, None,
                                                            lambda: types.SimpleNamespace(pieces=None), None),
                                             done.set()))
    other.start()
    try:
        assert done.wait(10), "a layout of another geometry waited for the one being built"
    finally:
        release.set()
        slow.join()
        other.join()
    assert cache["a"][0] is not cache["b"][0]


def test_one_geometry_is_built_once():
    cache = {}
    started, release, count = threading.Event(), threading.Event(), []
    build = _builder(started, release, count)
    got = []
    threads = [threading.Thread(target=lambda: got.append(engine._layout(cache, "a", 0, None, build, None)[0]))
               for _ in range(4)]
    for t in threads:
        t.start()
    assert started.wait(10)
    release.set()
    for t in threads:
        t.join()
    assert len(count) == 1 and len(got) == 4 and all(g is got[0] for g in got)
