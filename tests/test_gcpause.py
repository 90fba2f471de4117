"""clalign.runtime.gcpause: no full collection inside, the thresholds back after the last pause."""
import gc
import threading

from clalign.runtime.gcpause import PAUSED, paused


def test_nested_and_restored():
    before = gc.get_threshold()
    with paused():
        assert gc.get_threshold() == before[:2] + (PAUSED,)
        assert gc.isenabled()                     # the young generations are still collected
        with paused():
            assert gc.get_threshold()[2] == PAUSED
        assert gc.get_threshold()[2] == PAUSED
    assert gc.get_threshold() == before


def test_threads_overlapping_and_errors():
    before = gc.get_threshold()
    inside, leave = threading.Event(), threading.Event()

    def other():
        with paused():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    try:
        with paused():
            t.start()
            inside.wait(5)
        assert gc.get_threshold()[2] == PAUSED     # the other thread's pause goes on
    finally:
        leave.set()
        t.join()
    assert gc.get_threshold() == before
    try:
        with paused():
            raise KeyError(1)
    except KeyError:
        pass
    assert gc.get_threshold() == before


def test_full_collections_allowed_while_numba_compiles(monkeypatch):
    import clalign.runtime.gcpause as g
    from clalign.runtime.jit import njit

    @njit(cache=False)
    def plus_one(x):
        return x + 1

    seen = []
    real = g._apply

    def apply():
        real()
        seen.append(gc.get_threshold()[2])

    monkeypatch.setattr(g, "_apply", apply)
    before = gc.get_threshold()
    with paused():
        assert plus_one(1) == 2           # numba imported and the function compiled here
        assert gc.get_threshold()[2] == PAUSED
    assert before[2] in seen[1:-1]        # restored during the compilation
    assert gc.get_threshold() == before
