"""The doc-snippet tests: the helper modules beside them made importable, and the snippets that
were not run (with the reason written in the page) listed in the terminal summary.

Under pytest-xdist the snippets run in worker processes while the summary is written by the
controlling process: each worker hands its lists over when it finishes, and the controller adds
them to its own (empty there) before the summary."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doc_snippets  # importable thanks to the path above

WORKER_OUTPUT_KEY = "doc_snippets"


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # set in xdist workers only
    if workeroutput is not None:
        workeroutput[WORKER_OUTPUT_KEY] = {
            "not_run": list(doc_snippets.NOT_RUN),
            "durations": [list(entry) for entry in doc_snippets.DURATIONS],
        }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # an xdist hook, called in the controller
    lists = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if lists:
        doc_snippets.NOT_RUN.extend(lists["not_run"])
        doc_snippets.DURATIONS.extend((seconds, where) for seconds, where in lists["durations"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if doc_snippets.NOT_RUN:
        terminalreporter.section("doc snippets not run")
        for line in doc_snippets.NOT_RUN:
            terminalreporter.write_line(line)
    if doc_snippets.DURATIONS:
        terminalreporter.section("slowest doc snippets")
        for seconds, where in sorted(doc_snippets.DURATIONS, reverse=True)[:8]:
            terminalreporter.write_line(f"{seconds:6.1f} s  {where}")
