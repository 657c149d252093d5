"""``dpu-designer collective``: every algorithm of the engine has a message and a help entry."""

import pytest

from designer.cli import main
from designer.commands import collective as cmd
from designer.engine import collectives as coll

EXAMPLE = "resources/examples/example.json"


def test_every_engine_algorithm_has_a_needs_entry_and_is_in_the_help():
    import argparse

    parser = argparse.ArgumentParser()
    cmd.register(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["collective"]
    help_text = next(a.help for a in sub._actions if "--algorithm" in a.option_strings)
    for algorithm in coll.ALGORITHMS:
        assert cmd._NEEDS.get(algorithm), f"{algorithm} has no _NEEDS entry"
        assert algorithm in help_text.replace(",", " ").replace("(", " ").replace(")", " ").split()
    assert set(cmd._NEEDS) == set(coll.ALGORITHMS)


@pytest.mark.parametrize("algorithm", coll.ALGORITHMS)
def test_forcing_any_algorithm_on_one_server_answers_in_one_line(algorithm, capsys):
    # 8 GPUs = one DGX H100 of the example: the multi-server algorithms do not apply there and must
    # say why (not crash with a KeyError); the single-server ones print the table.
    code = main(["collective", EXAMPLE, "--algorithm", algorithm, "--gpus", "8", "--max", "64K"])
    out, err = capsys.readouterr()
    if code == 0:
        assert f"{algorithm}/" in out
    else:
        assert code == 2 and err.count("\n") == 1
        assert f"--algorithm {algorithm} does not apply" in err and cmd._NEEDS[algorithm] in err


def test_nvls_tree_runs_across_servers_and_explains_itself_on_one(capsys):
    assert main(["collective", EXAMPLE, "--algorithm", "nvls_tree", "--gpus", "16", "--max", "1M"]) == 0
    assert "nvls_tree/simple" in capsys.readouterr().out
    assert main(["collective", EXAMPLE, "--algorithm", "nvls_tree", "--gpus", "8"]) == 2
    err = capsys.readouterr().err
    assert "NVLink SHARP inside, a tree between" in err and "use one of" in err


def test_alltoall_on_8_plus_1_gpus_is_set_by_the_lone_rank(capsys):
    # the lone GPU of the second server sends 8/9 x 64 MiB over its one 46.9 GB/s rail
    times = {}
    for gpus in ("9", "12", "16"):
        assert main(["collective", EXAMPLE, "--op", "alltoall", "--gpus", gpus, "--min", "64M",
                     "--max", "64M"]) == 0
        times[gpus] = float(capsys.readouterr().out.splitlines()[-1].split()[1]) * 1e-6
    assert times["9"] >= 64 * 2 ** 20 * 8 / 9 / (400 / 8 * coll.NET_EFFICIENCY * 1e9)
    assert times["9"] > times["12"] > times["16"]
