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
