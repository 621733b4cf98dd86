"""Every option of ``mlagents-learn`` (its usage text) has a row in the options table of
docs/Training-ML-Agents.md, and the table names no option the command lacks."""

import re
from pathlib import Path

from mlagents.trainers.learn import USAGE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "Training-ML-Agents.md"
OPTION = re.compile(r"--[a-z][a-z-]*")


def test_every_option_has_a_row() -> None:
    options = set(OPTION.findall(USAGE)) - {"--help"}
    assert {"--env", "--train", "--deterministic", "--video-freq"} <= options
    rows = set()
    for line in PAGE.read_text().splitlines():
        if line.startswith("| `--") and (match := OPTION.match(line[3:])):
            rows.add(match.group())
    assert sorted(options - rows) == [], "options without a row in the table"
    assert sorted(rows - options) == [], "rows of options the command does not have"
