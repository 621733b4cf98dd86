"""A pytest plugin that runs the collected tests in a shuffled order chosen by a seed.

Load it with ``-p stress_shuffle`` (``tools/`` on ``PYTHONPATH``) and pass ``--shuffle-seed N``; the
same seed gives the same order. Test files are shuffled, then the tests inside each file, so a
module-scoped fixture is still set up once per file. Used by ``tools/stress_suite.py``; the normal
test run keeps the collection order.
"""

import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shuffle-seed",
        type=int,
        default=None,
        help="shuffle the test files and the tests inside each file with this seed",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("--shuffle-seed")
    return None if seed is None else f"stress_shuffle: test order shuffled with --shuffle-seed {seed}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = config.getoption("--shuffle-seed")
    if seed is None:
        return
    rng = random.Random(seed)
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(str(item.path), []).append(item)
    files = list(by_file)
    rng.shuffle(files)
    shuffled: list[pytest.Item] = []
    for path in files:
        group = by_file[path]
        rng.shuffle(group)
        shuffled.extend(group)
    items[:] = shuffled
