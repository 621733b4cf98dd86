"""Every Markdown table of README.md and docs/ renders: each run of lines starting with ``|``
(outside code blocks) opens with a header row and a ``|---|`` separator with as many cells, so no
row is left outside a table (a blank line inside a table turns the rows after it into raw pipes)."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SEPARATOR = re.compile(r"\|(\s*:?-{3,}:?\s*\|)+")


def cells(row: str) -> int:
    return len(re.sub(r"\\\||`[^`]*`", "x", row.strip()).strip("|").split("|"))


def table_runs(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each run of table lines outside fenced code blocks."""
    runs: list[tuple[int, list[str]]] = []
    fenced = False
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines() + [""], start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        is_row = not fenced and line.startswith("|")
        if is_row and not current:
            start = number
        if is_row:
            current.append(line)
        elif current:
            runs.append((start, current))
            current = []
    return runs


def problems_of(page: Path) -> list[str]:
    problems = []
    for start, rows in table_runs(page.read_text()):
        where = f"{page.name}:{start}"
        if len(rows) < 2 or not SEPARATOR.fullmatch(rows[1].strip()):
            problems.append(
                f"{where}: rows without a header and |---| separator (a blank line inside a table?)"
            )
        elif cells(rows[1]) != cells(rows[0]):
            problems.append(f"{where}: the separator has {cells(rows[1])} cells, the header {cells(rows[0])}")
    return problems


def test_a_split_table_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n```\n| code |\n```\n")
    assert [start for start, _ in table_runs(page.read_text())] == [1, 5]
    assert problems_of(page) == [
        "page.md:5: rows without a header and |---| separator (a blank line inside a table?)"
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_table_renders(page: Path) -> None:
    assert not problems_of(page)
