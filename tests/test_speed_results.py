"""Link results held as arrays and the JSON written from them (issue 15): the same objects,
order, busiest links and text as the plain list of LinkResult and json.dumps give."""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict

import numpy as np
import pytest

from designer.engine.result import LinkResult, LinkResults, Result, clean, dumps_json


def random_links(n: int, seed: int) -> tuple[list[str], np.ndarray, list[str]]:
    rng = random.Random(seed)
    ids = [rng.choice(["link-", "l", "é-", "\u2028"]) + str(i) for i in range(n)]
    util = np.array([rng.choice([0.0, 1.0, 0.5, rng.random(), 1e-320, 0.25]) for _ in range(n)])
    phase = [rng.choice(["", "dp", "pp", "tp", "storage"]) for _ in range(n)]
    return ids, util, phase


@pytest.mark.parametrize("seed", range(5))
def test_link_results_behave_as_the_list_of_objects(seed):
    ids, util, phase = random_links(200, seed)
    arrays = LinkResults(ids, util, phase)
    objects = [LinkResult(i, float(u), p) for i, u, p in zip(ids, util, phase)]
    assert list(arrays) == objects and len(arrays) == len(objects) and arrays == objects
    assert arrays[7] == objects[7] and arrays[-1] == objects[-1] and arrays[3:9] == objects[3:9]
    for n in (0, 1, 10, 500):  # the busiest, ties in link order (a stable sort)
        assert arrays.top(n) == sorted(objects, key=lambda l: -l.utilization)[:n]
    assert arrays.to_json() == [asdict(o) for o in objects]


def test_link_results_refuse_columns_of_different_lengths():
    with pytest.raises(ValueError):
        LinkResults(["a", "b"], np.zeros(1), ["", ""])


def test_non_finite_utilization_is_written_as_null():
    arrays = LinkResults(["a", "b"], np.array([math.nan, 0.5]), ["dp", "dp"])
    assert arrays.to_json() == [{"id": "a", "utilization": None, "phase": "dp"},
                                {"id": "b", "utilization": 0.5, "phase": "dp"}]


def _result(links) -> Result:
    return Result(iteration_time_s=1.5, breakdown_s={"compute": 1.0, "bubble": math.inf},
                  tflops_per_gpu=np.float64(300.0), mfu=0.4, percent_of_peak=40.0, tokens_per_s=1e6,
                  training_time_days=2.0, gpus=8, parameters=8e9, workload={"tp": 8},
                  placement={"order": "tp,pp,dp"}, collectives=[], links=links, bottlenecks=["x"])


def test_result_json_is_the_same_from_arrays_and_from_objects():
    ids, util, phase = random_links(50, 1)
    a = _result(LinkResults(ids, util, phase)).to_json()
    b = clean(asdict(_result([LinkResult(i, float(u), p) for i, u, p in zip(ids, util, phase)])))
    assert a == b
    assert json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("indent", [None, 1, 2, 4])
@pytest.mark.parametrize("seed", range(3))
def test_dumps_json_writes_what_json_dumps_writes(indent, seed):
    ids, util, phase = random_links(100, seed)
    data = _result(LinkResults(ids, util, phase)).to_json()
    data["links"][0]["utilization"] = None
    assert dumps_json(data, indent) == json.dumps(data, indent=indent)


@pytest.mark.parametrize("links", [[], [{"id": "a", "utilization": 1, "phase": "dp", "extra": 1}],
                                   [{"id": 3, "utilization": 0.5, "phase": "dp"}]])
def test_dumps_json_of_other_link_lists_is_json_dumps(links):
    data = {"iteration_time_s": 1.0, "links": links}
    assert dumps_json(data) == json.dumps(data, indent=1)
