"""The collector pause: counted across nesting and threads, restoring what it found."""

import gc
import threading

from designer import gcpause


def test_nested_pauses_turn_the_collector_back_on_only_at_the_last_end():
    assert gc.isenabled()
    with gcpause.collector_paused():
        assert not gc.isenabled()
        with gcpause.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled() and gcpause.holders() == 0


def test_a_pause_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with gcpause.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_pauses_in_two_threads_overlapping():
    inside = threading.Event()
    leave = threading.Event()

    def other():
        with gcpause.collector_paused():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    with gcpause.collector_paused():
        t.start()
        inside.wait(5)
    assert not gc.isenabled()  # the other thread's pause is still in force
    leave.set()
    t.join(5)
    assert gc.isenabled() and gcpause.holders() == 0


def test_decorator_and_exception():
    @gcpause.paused
    def boom():
        assert not gc.isenabled()
        raise ValueError("x")

    try:
        boom()
    except ValueError:
        pass
    assert gc.isenabled() and gcpause.holders() == 0
