"""fileformat._item_lines: one encoder call for a whole list gives the same text as encoding each
item on its own (the file's one-item-per-line layout), also when an item's text holds '}, {'."""

import json

import pytest

from designer.topology import fileformat

CASES = [
    [{"id": "a", "kind": "nic"}],
    [{"id": "a"}, {"id": "b", "props": {"tier": "leaf"}}, {"id": "c", "pos": [1.0, 2.5]}],
    [{"id": "x", "props": {"note": "odd }, { text"}}, {"id": "y"}],  # the join inside a string
    [{"id": "x", "props": {"list": [{"a": 1}, {"b": 2}]}}, {"id": "y"}],  # dicts in a list
    [{"id": "é\u2028", "props": {"n": 12345678901234567890}}, {"id": "z", "props": {}}],
]


@pytest.mark.parametrize("items", CASES)
def test_same_text_as_item_by_item(items):
    encode = fileformat._item_encoder()
    expected = ",\n  ".join(encode(i) for i in items)
    assert fileformat._item_lines(encode, items) == expected
    assert json.loads("[" + fileformat._item_lines(encode, items) + "]") == items


def test_empty_list():
    assert fileformat._item_lines(fileformat._item_encoder(), []) == ""


def test_refused_values_still_refused():
    with pytest.raises(ValueError):
        fileformat._item_lines(fileformat._item_encoder(), [{"id": "a", "v": float("nan")}])
