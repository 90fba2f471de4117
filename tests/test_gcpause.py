"""clalign.runtime.gcpause: the collector is off inside, back as it was after the last pause."""
import gc
import threading

from clalign.runtime.gcpause import paused


def test_nested_and_restored():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_disabled_when_it_was():
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_threads_overlapping_and_errors():
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
        assert not gc.isenabled()      # the other thread's pause goes on
    finally:
        leave.set()
        t.join()
    assert gc.isenabled()
    try:
        with paused():
            raise KeyError(1)
    except KeyError:
        pass
    assert gc.isenabled()
