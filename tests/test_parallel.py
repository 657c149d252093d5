"""designer.services.parallel.run_tasks: the same results by index in this process, on the pool and
on Dask; what all tasks share reaches each worker once; cancel stops handing out items."""

import os
import threading

import pytest

from designer.errors import UsageError
from designer.services.parallel import run_tasks


def square_plus(item, shared):
    return item * item + shared["offset"]


def where(item, shared):
    return os.getpid(), id(shared)


ITEMS = list(range(12))


def test_same_results_by_index_everywhere():
    expect = {i: i * i + 5 for i in ITEMS}
    assert dict(run_tasks(square_plus, ITEMS, {"offset": 5}, workers=1)) == expect
    assert dict(run_tasks(square_plus, ITEMS, {"offset": 5}, workers=2)) == expect
    import distributed  # a dependency (pyproject): its absence is a failure, not a skip
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert dict(run_tasks(square_plus, ITEMS, {"offset": 5}, scheduler=client)) == expect


def test_the_shared_object_reaches_each_pool_worker_once():
    seen = {}
    for _, (pid, ident) in run_tasks(where, ITEMS, {"big": list(range(1000))}, workers=2):
        seen.setdefault(pid, set()).add(ident)
    assert seen and all(len(ids) == 1 for ids in seen.values())  # one copy per process, not per task
    assert os.getpid() not in seen


def test_cancel_stops_handing_out_items():
    cancel = threading.Event()
    got = []
    for i, r in run_tasks(square_plus, ITEMS, {"offset": 0}, workers=1, cancel=cancel):
        got.append(i)
        if len(got) == 3:
            cancel.set()
    assert got == [0, 1, 2]


def test_bad_workers_and_an_unreachable_scheduler_are_words():
    with pytest.raises(UsageError, match="1 or more"):
        list(run_tasks(square_plus, ITEMS, {}, workers=0))
    import distributed  # noqa: F401 - a dependency
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler"):
        list(run_tasks(square_plus, ITEMS, {}, scheduler="tcp://127.0.0.1:9"))


def slow_first(item, shared):
    """Early items take longest, so they finish after later ones (an out-of-order pool)."""
    import time

    time.sleep(shared["sleep"] * (6 - item) if item < 6 else 0)
    return item


class Counted:
    """An iterable (not a Sequence) that counts how many items were taken from it."""

    def __init__(self, n):
        self.n, self.taken = n, 0

    def __iter__(self):
        for i in range(self.n):
            self.taken += 1
            yield i


def test_results_come_in_item_order_from_any_iterable():
    items = Counted(12)
    got = list(run_tasks(slow_first, items, {"sleep": 0.05}, workers=2))
    assert [i for i, _ in got] == list(range(12)) and [r for _, r in got] == list(range(12))
    assert items.taken == 12
    assert list(run_tasks(square_plus, (i for i in range(5)), {"offset": 1}, workers=1)) == \
        [(i, i * i + 1) for i in range(5)]


def test_at_most_four_per_worker_are_in_flight_and_cancel_stops_taking_items():
    from designer.services.parallel import IN_FLIGHT

    items = Counted(10_000)
    cancel = threading.Event()
    yielded = 0
    for i, _ in run_tasks(square_plus, items, {"offset": 0}, workers=2, cancel=cancel):
        yielded += 1
        assert items.taken - yielded <= IN_FLIGHT * 2
        if yielded == 20:
            cancel.set()
    assert yielded == 20 and items.taken <= 20 + IN_FLIGHT * 2


def test_closing_the_generator_stops_taking_items():
    items = Counted(10_000)
    gen = run_tasks(square_plus, items, {"offset": 0}, workers=2)
    assert next(gen) == (0, 0)
    gen.close()
    assert items.taken <= 1 + 4 * 2


def test_dask_scatters_once_unhashed_keeps_order_and_bounds_what_is_in_flight():
    import distributed

    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        calls = []
        real = client.scatter
        client.scatter = lambda data, **kw: (calls.append(kw), real(data, **kw))[1]
        items = Counted(40)
        yielded = 0
        for i, r in run_tasks(slow_first, items, {"sleep": 0.02}, scheduler=client):
            assert i == r == yielded
            yielded += 1
            assert items.taken - yielded <= 4 * 2
        assert yielded == 40 and calls == [{"broadcast": True, "hash": False}]
        cancel = threading.Event()
        items = Counted(10_000)
        for n, _ in enumerate(run_tasks(square_plus, items, {"offset": 0}, scheduler=client, cancel=cancel)):
            if n == 4:
                cancel.set()
        assert n == 4 and items.taken <= 5 + 4 * 2
