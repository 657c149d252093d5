"""``Result.json_text`` / ``LinkResults.json_text`` (issue 15, ``run --json`` written from arrays):
the text must be exactly what ``json.dumps`` writes for ``Result.to_json()``, whatever the links
hold (repeated and distinct utilizations, -0.0 beside 0.0, NaN and infinities, subnormals,
non-ASCII and control characters in ids, empty lists) and at any indent."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from designer.engine.result import LinkResult, LinkResults, Result


def _result(links) -> Result:
    return Result(iteration_time_s=1.5, breakdown_s={"compute": 1.0, "bubble": math.inf},
                  tflops_per_gpu=np.float64(300.0), mfu=0.4, percent_of_peak=40.0, tokens_per_s=1e6,
                  training_time_days=2.0, gpus=8, parameters=8e9, workload={"tp": 8, "name": "x\u00e9"},
                  placement={"order": "tp,pp,dp"}, collectives=[], links=links, bottlenecks=["x"])


def _links(n: int, seed: int) -> LinkResults:
    rng = random.Random(seed)
    ids = [rng.choice(["link-", "l", "\u00e9-", "\u2028", 'q"\\', "\x00"]) + str(i) for i in range(n)]
    values = [0.0, -0.0, 1.0, 0.5, 1e-320, 0.1 + 0.2, math.nan, math.inf, -math.inf, 1 / 3]
    util = np.array([rng.choice(values) if rng.random() < 0.7 else rng.random() for _ in range(n)])
    phase = [rng.choice(["", "dp", "pp", "tp", "st\u00f6rage", "a\nb"]) for _ in range(n)]
    return LinkResults(ids, util, phase)


@pytest.mark.parametrize("indent", [None, 0, 1, 2, 4])
@pytest.mark.parametrize("seed", range(4))
def test_json_text_is_json_dumps_of_to_json(indent, seed):
    r = _result(_links(300, seed))
    assert r.json_text(indent=indent) == json.dumps(r.to_json(), indent=indent)


def test_json_text_keeps_negative_zero_apart_from_zero():
    r = _result(LinkResults(["a", "b", "c"], np.array([0.0, -0.0, 0.0]), ["dp", "dp", "dp"]))
    text = r.json_text()
    assert text == json.dumps(r.to_json(), indent=1)
    assert [l["utilization"] for l in json.loads(text)["links"]] == [0.0, -0.0, 0.0]
    assert [math.copysign(1, l["utilization"]) for l in json.loads(text)["links"]] == [1, -1, 1]


def test_json_text_with_extra_keys_is_json_dumps_of_the_merged_dict():
    r = _result(_links(50, 7))
    extra = {"timeline": {"csv": "out.csv", "rows": 3, "goodput": 0.9}}
    assert r.json_text(extra) == json.dumps({**r.to_json(), **extra}, indent=1)
    hidden = {"links": "replaced"}  # an extra that replaces the links: json.dumps' text as well
    assert r.json_text(hidden) == json.dumps({**r.to_json(), **hidden}, indent=1)


@pytest.mark.parametrize("links", [LinkResults([], np.zeros(0), []), [],
                                   [LinkResult("a", 0.5, "dp"), LinkResult("b", 1.0, "tp")]])
def test_json_text_of_empty_or_object_links(links):
    r = _result(links)
    assert r.json_text() == json.dumps(r.to_json(), indent=1)


def test_marker_text_in_a_value_does_not_corrupt_the_output():
    from designer.engine import result as result_module

    r = _result(_links(20, 3))
    r.bottlenecks = [result_module._LINKS_MARK]  # the marker's own text elsewhere in the result
    assert r.json_text() == json.dumps(r.to_json(), indent=1)


@pytest.mark.parametrize("level", [0, 1, 3])
def test_link_results_text_at_any_depth(level):
    links = _links(40, 11)
    nested = links.to_json()
    for _ in range(level):
        nested = {"k": nested}
    text = json.dumps(nested, indent=2)
    assert links.json_text(2, level) in text and text.count(links.json_text(2, level)) == 1
