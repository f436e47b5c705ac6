"""The output format does not depend on whether stdout is a terminal (issue 29, item 2): piped output (CliRunner's
stdout is no terminal) is the table a terminal shows, without colour; --json and the other flags choose."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conftest import SAMPLE

PROFILE = Path(__file__).resolve().parent / "data" / "train_step_h200_torch2.11.json.gz"


def cli(db, *args):
    from opindex.cli import main
    return CliRunner().invoke(main, [*args, "--db", str(db)])


def test_a_piped_listing_is_the_table(sample_db):
    result = cli(sample_db, "find", "torch.nn.functional.relu")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "name  qualified_name            kind      language  file                    line  signature",
        "----  ------------------------  --------  --------  ----------------------  ----  "
        "--------------------------------------",
        "relu  torch.nn.functional.relu  function  python    torch/nn/functional.py  12    "
        "(input: Tensor, inplace: bool = False)",
        "(1 row)",
        f"index {sample_db} (checkout {SAMPLE})"]
    assert json.loads(cli(sample_db, "find", "torch.nn.functional.relu", "--json").stdout)[0]["line"] == 12


def test_piped_sql_list_and_profile_are_tables(sample_db):
    assert cli(sample_db, "sql", "SELECT 1 AS x").stdout.startswith("x\n-\n1\n(1 row)\n")
    from opindex.cli import main
    assert CliRunner().invoke(main, ["list"]).stdout.startswith("index")  # a table's header, not JSON's [
    profile = cli(sample_db, "profile", str(PROFILE), "--limit", "2")
    assert profile.exit_code == 0 and profile.stdout.startswith(f"profile: {PROFILE} (")
    assert json.loads(cli(sample_db, "profile", str(PROFILE), "--limit", "2", "--json").stdout)["summary"]["shown"] == 2
