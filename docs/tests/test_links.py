"""Every relative link of README.md and docs/ points to a file that exists, and a link to a section
(``Page.md#section``) to a heading of that page, with the anchors GitHub makes of headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_snippets import pages

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"#{1,6}\s+(?P<title>.*)")
FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.S | re.M)


def anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for line in FENCED.sub("", page.read_text()).splitlines():
        if match := HEADING.match(line):
            name = anchor(match["title"])
            number = 0
            while (name if number == 0 else f"{name}-{number}") in found:
                number += 1  # repeated headings get -1, -2, ...
            found.add(name if number == 0 else f"{name}-{number}")
    return found


def broken_links(page: Path) -> list[str]:
    problems = []
    for match in LINK.finditer(FENCED.sub("", page.read_text())):
        target = match[1]
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, section = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            problems.append(f"{page.name}: {target}: no such file")
        elif section and linked.suffix == ".md" and section not in anchors(linked):
            problems.append(f"{page.name}: {target}: no heading with this anchor in {linked.name}")
    return problems


def test_anchors_are_githubs() -> None:
    assert anchor("5. Watch the trained agent") == "5-watch-the-trained-agent"
    assert anchor("Train a Unity build: `--docker-target-name`") == "train-a-unity-build---docker-target-name"
    assert anchor("Differences from ML-Agents 0.9") == "differences-from-ml-agents-09"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "Other.md").write_text("# Other\n\n## A section\n")
    page = tmp_path / "Page.md"
    page.write_text(
        "# Page\n\n[ok](Other.md#a-section) [self](#page) [web](https://example.org/x.md)\n"
        "[gone](Gone.md) [wrong](Other.md#b-section)\n```text\n[in code](Gone.md)\n```\n"
    )
    assert broken_links(page) == [
        "Page.md: Gone.md: no such file",
        "Page.md: Other.md#b-section: no heading with this anchor in Other.md",
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_every_link_resolves(page: Path) -> None:
    assert not broken_links(page), broken_links(page)
