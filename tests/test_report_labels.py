"""Result keys shown as table labels in the report: parallel dimensions and NVLink as readers write them."""

from designer.report.build import _key_label


def test_placement_keys_read_as_words_with_their_acronyms():
    assert _key_label("tp_inside_nvlink_domain") == "TP inside NVLink domain"
    assert _key_label("servers_per_dp_group") == "Servers per DP group"
    assert _key_label("order") == "Order"
