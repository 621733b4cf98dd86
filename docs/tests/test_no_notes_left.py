"""The user pages carry no notes to the project's writers: every HTML comment in README.md and
docs/ outside code blocks is a directive the doc test or the page index reads (``doc-test:``,
``example:``, ``redirect:``), never a hidden note such as a placeholder."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMENT = re.compile(r"<!--(?P<body>.*?)-->", re.S)
DIRECTIVE = re.compile(r"\s*(doc-test|example|redirect):")


def prose(text: str) -> str:
    """``text`` with its fenced code blocks blanked (their comments are code, not page notes)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_comment_is_a_directive(page: Path) -> None:
    notes = [
        m["body"].strip() for m in COMMENT.finditer(prose(page.read_text())) if not DIRECTIVE.match(m["body"])
    ]
    assert not notes, f"{page.name}: comments that are not doc-test/example/redirect directives: {notes}"
