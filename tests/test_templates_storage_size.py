"""templates._check_size counts storage appliances and their links: a --storage-count the design
file cannot hold is refused before anything is built (it used to build for minutes, then be
refused by save)."""

import pytest

from designer.errors import UsageError
from designer.topology import templates
from designer.topology.catalog import load_catalog
from designer.topology.fileformat import MAX_LINKS


def test_storage_count_past_the_link_limit_is_refused_before_building(monkeypatch):
    ports = int(load_catalog().get("storage", "generic-nvmeof-afa")["ports"])
    count = 100_000
    # the appliances' own cables fit (count x ports < MAX_LINKS) but not with the leaves' uplinks
    assert count * ports < MAX_LINKS < 2 * count * ports
    def no_build(*a, **k):
        raise AssertionError("the design was being built")

    monkeypatch.setattr(templates._Builder, "__init__", no_build)
    with pytest.raises(UsageError, match=r"^--storage-count 100,000: .* links .*use fewer storage appliances$"):
        templates.TEMPLATES["rail-optimized"](servers=64, storage_count=count)


@pytest.mark.parametrize("name, opts", [("leaf-spine", {"servers": 8}), ("fat-tree", {"k": 4}),
                                        ("rail-optimized", {"servers": 8})])
def test_every_template_checks_storage_count(name, opts):
    with pytest.raises(UsageError, match="--storage-count"):
        templates.TEMPLATES[name](storage_count=200_000, **opts)


def test_storage_none_ignores_the_count_and_small_counts_build():
    d = templates.TEMPLATES["leaf-spine"](servers=4, storage_count=3)
    assert len(d.topology.storage()) == 3
    d = templates.TEMPLATES["leaf-spine"](servers=4, storage="none", storage_count=200_000)
    assert not d.topology.storage()
