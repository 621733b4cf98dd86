"""Run a measurement against an earlier revision of this repository, in the same run as today's code.

Speed figures on a shared machine drift by tens of percent from one minute to the next, so a
before/after comparison is only honest when both sides run back to back in one run. This module
checks a git revision out into a temporary worktree and gives the environment variables under which
a child Python process imports *that* revision's packages (``mlagents.envs``, ``mlagents.trainers``,
``mlagents.example_envs``, ``gym_unity``) instead of the current ones; the example builds started by
such a process also import the revision's example environments, because a build inherits
``PYTHONPATH``.

Usage in a benchmark::

    with revision_checkout("d1b79c4") as old:
        subprocess.run([sys.executable, "-m", "mlagents.trainers.learn", ...], env=old.environ(),
                       cwd=workdir)
        build = old.root / "example-envs" / "builds" / "Basic.x86_64"

or, for in-process measurements, run the benchmark script itself under ``old.environ()`` with a
flag that makes it measure only one side and print its figures as JSON (see
:func:`run_json`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
PACKAGE_FOLDERS = ("ml-agents-envs", "ml-agents", "example-envs", "gym-unity")


@dataclass(frozen=True)
class Checkout:
    """A revision checked out in a temporary worktree.

    :ivar revision: the revision as given (a commit, branch or tag).
    :ivar commit: the full commit id it names.
    :ivar root: the worktree's root folder (holds ``config/``, ``demos/``, ``example-envs/builds/``).
    """

    revision: str
    commit: str
    root: Path

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """A copy of ``base`` (default: this process's environment) that imports this revision."""
        environ = dict(os.environ if base is None else base)
        paths = [str(self.root / folder) for folder in PACKAGE_FOLDERS]
        if environ.get("PYTHONPATH"):
            paths.append(environ["PYTHONPATH"])
        environ["PYTHONPATH"] = os.pathsep.join(paths)
        return environ

    def build(self, name: str) -> Path:
        """The revision's example build ``name`` (e.g. ``"Basic"``)."""
        return self.root / "example-envs" / "builds" / f"{name}.x86_64"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPOSITORY), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@contextmanager
def revision_checkout(revision: str) -> Iterator[Checkout]:
    """Check ``revision`` out into a temporary worktree for the duration of the ``with`` block.

    Raises ``SystemExit`` with one line when the revision is unknown or git is missing.
    """
    try:
        commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}")
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(
            f"--baseline: {revision!r} is not a revision of {REPOSITORY} (try a commit id)"
        ) from error
    with tempfile.TemporaryDirectory(prefix="mlagents-baseline-") as folder:
        root = Path(folder) / "tree"
        _git("worktree", "add", "--detach", "--quiet", str(root), commit)
        previous = _terminate_as_exit()
        try:
            yield Checkout(revision, commit, root)
        finally:
            _git("worktree", "remove", "--force", str(root))
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _terminate_as_exit() -> Any:
    """Let SIGTERM (e.g. from ``timeout``) end the process through ``SystemExit``, so that the
    temporary worktree is removed; returns the handler it replaced (None off the main thread, where
    handlers cannot be set)."""

    def exit_on_terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        return signal.signal(signal.SIGTERM, exit_on_terminate)
    except ValueError:
        return None


def run_json(script: Path, args: Sequence[str], environ: dict[str, str] | None = None) -> Any:
    """Run ``python script *args`` and parse the last line it prints to stdout as JSON.

    A benchmark measures one side (``--json`` style flags of the script) in a child process started
    under a checkout's :meth:`Checkout.environ`; stderr passes through so progress stays visible.
    """
    completed = subprocess.run(
        [sys.executable, str(script), *args], env=environ, stdout=subprocess.PIPE, text=True, check=True
    )
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    if not lines:
        raise RuntimeError(f"{script.name} {' '.join(args)} printed nothing")
    return json.loads(lines[-1])


def add_original_option(parser: Any) -> None:
    """``--original DIR``: also run the original ML-Agents 0.9.3 trainer that DIR makes importable
    (``DIR/mlagents/trainers``, and the original ``DIR/mlagents/envs`` for the whole original Python
    side, prepared by hand for today's TensorFlow, numpy and protobuf as benchmarks/README.md
    describes; nothing of it ships here)."""
    parser.add_argument(
        "--original", type=Path, metavar="DIR", help="also run the original 0.9.3 trainer importable from DIR"
    )


def original_environ(folder: Path) -> dict[str, str]:
    """The environment of a child process that imports the original trainer (and the original
    ``mlagents.envs`` when ``folder`` holds it) from ``folder`` and everything else from this tree.
    The example builds must not import from ``folder``: a ``sitecustomize.py`` there takes it off
    ``PYTHONPATH`` for the processes the original starts (benchmarks/README.md).

    Raises ``SystemExit`` with one line when ``folder`` holds no original trainer.
    """
    if not (folder / "mlagents" / "trainers" / "learn.py").is_file():
        raise SystemExit(f"--original: {folder} has no mlagents/trainers/learn.py; give the folder above it")
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(
        [str(folder.resolve())] + [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return environ
