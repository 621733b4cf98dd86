"""``mlagents-learn`` as the doc-snippet test runs it: the command of the page, with a small budget.

Started as ``python learn_wrapper.py <the arguments of the page's command>``. Before handing the
arguments to ``python -m mlagents.trainers.learn`` unchanged, it replaces two paths by copies:

* the trainer configuration, with every section's ``max_steps`` lowered to
  ``$MLAGENTS_TEST_MAX_STEPS`` (and ``summary_freq`` to a third of it, so that summaries are still
  written);
* the ``--sampler`` file, with ``resampling-interval`` lowered to ``$MLAGENTS_TEST_RESAMPLING_INTERVAL``.

Without those variables, or with ``--help``, the arguments pass through untouched. The copies go to
``.doc-test/`` in the current folder; what was changed is printed on stderr.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """YAML with the numbers of YAML 1.2 (``5.0e4``, ``1e-3`` are floats), as mlagents-learn reads it."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9_]+|[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
    ),
    list("-+0123456789."),
)


def lowered_config(config: dict[str, Any], max_steps: int) -> dict[str, Any]:
    """``config`` with ``max_steps`` (and ``summary_freq``) of every brain section at most the budget."""
    summary_freq = max(1, max_steps // 3)
    for section in config.values():
        if not isinstance(section, dict):
            continue  # a section that names another section
        for key, limit in (("max_steps", max_steps), ("summary_freq", summary_freq)):
            if key in section:
                section[key] = min(int(float(section[key])), limit)
    return config


def _copy(path: str, name: str, change: Any) -> str:
    data = yaml.load(Path(path).read_text(), Loader=_Loader)
    folder = Path(".doc-test")
    folder.mkdir(exist_ok=True)
    copy = folder / name
    copy.write_text(yaml.safe_dump(change(data), sort_keys=False))
    return str(copy)


def rewrite(argv: list[str]) -> list[str]:
    """The arguments with the trainer configuration and sampler file replaced by lowered copies."""
    max_steps = os.environ.get("MLAGENTS_TEST_MAX_STEPS")
    interval = os.environ.get("MLAGENTS_TEST_RESAMPLING_INTERVAL")
    if "--help" in argv or "-h" in argv:
        return argv
    result = list(argv)
    config_index = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    if max_steps and config_index is not None:
        budget = int(max_steps)
        copy = _try_copy(argv[config_index], "trainer_config.yaml", lambda data: lowered_config(data, budget))
        if copy is not None:
            result[config_index] = copy
            print(f"doc-test: {argv[config_index]} with max_steps <= {budget}", file=sys.stderr)
    for i, arg in enumerate(argv):
        if interval and arg.startswith("--sampler="):
            sampler = arg.split("=", 1)[1]

            def lower(data: dict[str, Any], limit: int = int(interval)) -> dict[str, Any]:
                data["resampling-interval"] = min(int(data["resampling-interval"]), limit)
                return data

            copy = _try_copy(sampler, "sampler.yaml", lower)
            if copy is not None:
                result[i] = "--sampler=" + copy
                print(f"doc-test: {sampler} with resampling-interval <= {interval}", file=sys.stderr)
    return result


def _try_copy(path: str, name: str, change: Any) -> str | None:
    """The changed copy, or None when the file is missing or not what it should be: then
    mlagents-learn gets the original and reports the problem itself."""
    try:
        return _copy(path, name, change)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError):
        return None


if __name__ == "__main__":
    arguments = [sys.executable, "-m", "mlagents.trainers.learn", *rewrite(sys.argv[1:])]
    sys.stderr.flush()
    os.execv(sys.executable, arguments)
