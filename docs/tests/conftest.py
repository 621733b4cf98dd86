"""The doc-snippet tests: the helper modules beside them made importable, and the snippets that
were not run (with the reason written in the page) listed in the terminal summary."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doc_snippets  # importable thanks to the path above


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if doc_snippets.NOT_RUN:
        terminalreporter.section("doc snippets not run")
        for line in doc_snippets.NOT_RUN:
            terminalreporter.write_line(line)
    if doc_snippets.DURATIONS:
        terminalreporter.section("slowest doc snippets")
        for seconds, where in sorted(doc_snippets.DURATIONS, reverse=True)[:8]:
            terminalreporter.write_line(f"{seconds:6.1f} s  {where}")
