"""Find the code blocks of Markdown pages and run them as a user would (not a test module).

A code block is a fenced block (```` ```lang ````) or, outside lists, a block indented by four
spaces after a blank line (a shell command, as in README.md). HTML comments on the lines right
above a block are directives for this harness (the convention is described in CONTRIBUTING.md):

``<!-- doc-test: skip REASON -->``          not run; REASON is listed in the test output
``<!-- doc-test: file NAME -->``            written to NAME in the page's folder (executable if it
                                            starts with ``#!``); ``<!-- example: NAME -->`` is the same
``<!-- doc-test: continues -->``            a python block that goes on from the previous python block:
                                            the chain runs as one script when its last block is reached
``<!-- doc-test: until REGEX -->``          a command that runs until stopped: passes once its output
                                            matches REGEX, then it is stopped
``<!-- doc-test: fails REGEX -->``          a command shown for its error: must end with a non-zero
                                            status and an output matching REGEX
``<!-- doc-test: without-install -->``      the install steps that open the ``&&`` chain (``python3 -m
                                            venv``, ``pip install``) are left out, the rest runs
``<!-- doc-test: setup COMMAND -->``        a shell command run (and required to succeed) first
``<!-- doc-test: prelude`` ... ``-->``      python lines run before the block (e.g. a placeholder)

How blocks are handled by language: ``sh``/``bash``/``shell`` and indented blocks run with bash
(``-e``: every command must succeed); ``python`` runs as a script; ``yaml`` and ``json`` must parse;
other labels (``text`` for output, diagrams) are not code. A fenced block without a label is an error.

Every page runs in its own folder holding a copy of ``config/`` and links to ``example-envs/``, ``demos/`` and
``benchmarks/``, with ``bin/`` first on PATH: its ``mlagents-learn`` lowers ``max_steps`` of every
brain to ``$MLAGENTS_TEST_MAX_STEPS`` (and ``summary_freq`` so that summaries are still written) and
``resampling-interval`` of a ``--sampler`` file to ``$MLAGENTS_TEST_RESAMPLING_INTERVAL``, on copies
of the files, so that the text of a training command is run as written but briefly.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LEARN_WRAPPER = Path(__file__).resolve().parent / "learn_wrapper.py"

SHELL_LANGUAGES = {"sh", "bash", "shell"}
PYTHON_LANGUAGES = {"python", "py"}
DATA_LANGUAGES = {"yaml", "yml", "json"}

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^<!--\s*(?P<kind>doc-test|example):(?P<body>.*?)-->$", re.S)
LIST_ITEM = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s")
INSTALL_STEP = re.compile(r"^\s*(?:\S*python3?\s+-m\s+(?:venv|pip\s+install)|\S*pip3?\s+install)\b")

DEFAULT_TIMEOUT = 300.0

#: "page:line: reason" of every snippet a test session did not run (shown in pytest's summary).
NOT_RUN: list[str] = []
#: (seconds, "page:line") of every snippet a test session ran.
DURATIONS: list[tuple[float, str]] = []


@dataclass
class Snippet:
    """One code block of a page, with the directives written above it."""

    page: Path
    line: int  # 1-based line of the block's first code line
    language: str  # lower-case fence label; "sh" for an indented block; "" for an unlabeled fence
    code: str
    skip: str | None = None
    file: str | None = None
    continues: bool = False
    until: str | None = None
    fails: str | None = None
    without_install: bool = False
    setup: list[str] = field(default_factory=list)
    prelude: str = ""

    @property
    def where(self) -> str:
        try:
            page = self.page.relative_to(REPO)
        except ValueError:
            page = self.page
        return f"{page}:{self.line}"

    @property
    def kind(self) -> str:
        """``shell``, ``python``, ``data``, ``text`` (not code) or ``unlabeled``."""
        if self.language in SHELL_LANGUAGES:
            return "shell"
        if self.language in PYTHON_LANGUAGES:
            return "python"
        if self.language in DATA_LANGUAGES:
            return "data"
        return "unlabeled" if self.language == "" else "text"


# ------------------------------------------------------------------------------------------ parsing


def _comment_directive(comment: str) -> tuple[str, str] | None:
    """``(kind, body)`` of one HTML comment, or None when it is not a directive."""
    match = DIRECTIVE.match(comment)
    if match is None:
        return None
    if match["kind"] == "example":
        return "file", match["body"].strip()
    parts = re.split(r"(\s)", match["body"].lstrip(), maxsplit=1)
    kind = parts[0]
    body = "".join(parts[1:])
    return kind, body if kind == "prelude" else body.strip()


def _directives(lines: list[str], below: int) -> list[tuple[str, str]]:
    """The directives of the HTML comments that end on line ``below - 1`` (0-based) and the
    comments stacked directly above it, top first. A comment may span several lines (``prelude``)."""
    found: list[tuple[str, str]] = []
    end = below - 1
    while end >= 0 and lines[end].rstrip().endswith("-->"):
        start = end
        while start > 0 and not lines[start].lstrip().startswith("<!--"):
            start -= 1
        directive = _comment_directive("\n".join(lines[start : end + 1]).strip())
        if directive is None:
            break
        found.insert(0, directive)
        end = start - 1
    return found


def _apply(snippet: Snippet, directives: list[tuple[str, str]]) -> None:
    for kind, body in directives:
        if kind == "skip":
            snippet.skip = body or "no reason given"
        elif kind == "file":
            snippet.file = body
        elif kind == "continues":
            snippet.continues = True
        elif kind == "until":
            snippet.until = body
        elif kind == "fails":
            snippet.fails = body
        elif kind == "without-install":
            snippet.without_install = True
        elif kind == "setup":
            snippet.setup.append(body)
        elif kind == "prelude":
            snippet.prelude += body.strip("\n") + "\n"
        else:
            raise ValueError(f"{snippet.where}: unknown doc-test directive {kind!r}")


def parse_page(page: Path) -> list[Snippet]:
    """Every code block of ``page`` in order, with its directives applied."""
    lines = page.read_text(encoding="utf-8").splitlines()
    snippets: list[Snippet] = []
    index = 0
    previous_text = ""  # the last non-blank line outside code, to tell list continuations apart
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if fence:
            opening = index
            marker = fence["fence"]
            info = fence["info"].strip()
            language = info.split()[0].lower() if info else ""
            indent = len(fence["indent"])
            body: list[str] = []
            index += 1
            while index < len(lines) and not (
                lines[index].strip().startswith(marker) and not lines[index].strip().strip(marker[0])
            ):
                body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
                index += 1
            snippet = Snippet(page, opening + 2, language, "\n".join(body) + "\n")
            _apply(snippet, _directives(lines, opening))
            snippets.append(snippet)
            index += 1  # the closing fence
            previous_text = ""
            continue
        opens_indented_block = (
            line.startswith("    ")
            and line.strip() != ""
            and index > 0
            and lines[index - 1].strip() == ""
            and previous_text != ""
            and not LIST_ITEM.match(previous_text)
            and not previous_text.startswith((" ", "\t"))
        )
        if opens_indented_block:
            start = index
            body = []
            while index < len(lines) and (lines[index].startswith("    ") or not lines[index].strip()):
                body.append(lines[index][4:])
                index += 1
            while body and not body[-1].strip():
                body.pop()
            snippet = Snippet(page, start + 1, "sh", "\n".join(body) + "\n")
            # The directives of an indented block sit above the blank line that opens it.
            _apply(snippet, _directives(lines, start - 1))
            snippets.append(snippet)
            previous_text = ""
            continue
        if line.strip():
            previous_text = line
        index += 1
    return snippets


# ------------------------------------------------------------------------------------------ running


@dataclass
class Outcome:
    snippet: Snippet
    status: str  # "passed", "failed", "not run", "parsed", "written", "text", "chained"
    detail: str = ""
    output: str = ""
    seconds: float = 0.0


def without_install_steps(command: str) -> str:
    """``command`` with the install steps at the start of its ``&&`` chain left out."""
    parts = command.strip().split(" && ")
    while parts and INSTALL_STEP.match(parts[0]):
        parts.pop(0)
    return " && ".join(parts) + "\n"


def _network_isolation_available() -> bool:
    """True when commands can run in a private network namespace with its own loopback
    (``unshare --net --map-root-user`` and ``ip``), so that fixed ports such as 5005 cannot clash."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    probe = subprocess.run(
        ["unshare", "--net", "--map-root-user", "ip", "link", "set", "lo", "up"], capture_output=True
    )
    return probe.returncode == 0


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    """Serialize the snippet runs of concurrent test sessions on this machine (they use fixed ports)."""
    with open("/tmp/mlagents-doc-snippets.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class PageRunner:
    """Runs the snippets of one page, in order, in ``folder``.

    :param folder: an empty folder; it receives the copies and links described in the module docstring.
    :param max_steps: ``MLAGENTS_TEST_MAX_STEPS`` for training commands.
    :param resampling_interval: ``MLAGENTS_TEST_RESAMPLING_INTERVAL`` for ``--sampler`` files.
    :param timeout: seconds a snippet may take before it is ended and fails.
    """

    def __init__(
        self,
        folder: Path,
        max_steps: int = 300,
        resampling_interval: int = 100,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.folder = folder
        self.timeout = timeout
        self.token = uuid.uuid4().hex
        shutil.copytree(REPO / "config", folder / "config")
        for name in ("example-envs", "benchmarks", "demos"):
            (folder / name).symlink_to(REPO / name)
        bin_dir = folder / "bin"
        bin_dir.mkdir()
        self._script(bin_dir / "mlagents-learn", f'exec "{sys.executable}" "{LEARN_WRAPPER}" "$@"\n')
        if shutil.which("tensorboard", path=str(Path(sys.executable).parent)) is None:
            # Console scripts of the packages this Python runs, when its bin folder lacks them.
            self._script(bin_dir / "tensorboard", f'exec "{sys.executable}" -m tensorboard.main "$@"\n')
        # `.venv/bin/...` commands of README.md reach this Python and the wrappers.
        venv_bin = folder / ".venv" / "bin"
        venv_bin.mkdir(parents=True)
        for name in ("python", "python3"):
            (venv_bin / name).symlink_to(sys.executable)
        (venv_bin / "mlagents-learn").symlink_to(bin_dir / "mlagents-learn")
        self.env = dict(os.environ)
        self.env.update(
            PATH=os.pathsep.join(
                [str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
            ),
            MLAGENTS_PYTHON=sys.executable,
            MLAGENTS_TEST_MAX_STEPS=str(max_steps),
            MLAGENTS_TEST_RESAMPLING_INTERVAL=str(resampling_interval),
            MLAGENTS_DOC_TEST_TOKEN=self.token,
            PYTHONUNBUFFERED="1",
        )
        self.isolated = _network_isolation_available()
        self._chain: list[Snippet] = []

    @staticmethod
    def _script(path: Path, body: str) -> None:
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)

    def run_page(self, snippets: list[Snippet]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        lock = contextlib.nullcontext() if self.isolated else _machine_lock()
        with lock:
            for position, snippet in enumerate(snippets):
                following = snippets[position + 1] if position + 1 < len(snippets) else None
                start = time.monotonic()
                outcome = self.run(snippet, following)
                outcome.seconds = time.monotonic() - start
                outcomes.append(outcome)
        return outcomes

    def run(self, snippet: Snippet, following: Snippet | None = None) -> Outcome:
        """Run one snippet (``following`` tells whether a python chain goes on)."""
        if snippet.kind == "unlabeled":
            return Outcome(snippet, "failed", "a fenced block needs a language label (`text` for output)")
        if snippet.skip is not None:
            return Outcome(snippet, "not run", snippet.skip)
        if snippet.file is not None:
            target = self.folder / snippet.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(snippet.code)
            if snippet.code.startswith("#!"):
                target.chmod(0o755)
            return Outcome(snippet, "written", snippet.file)
        if snippet.kind == "text":
            return Outcome(snippet, "text")
        if snippet.kind == "data":
            return self._parse_data(snippet)
        for command in snippet.setup:
            setup = self._execute(snippet, ["bash", "-e", "-c", command], None)
            if setup.status != "passed":
                return Outcome(snippet, "failed", f"setup `{command}` failed: {setup.detail}", setup.output)
        if snippet.kind == "python":
            self._chain.append(snippet)
            if (
                following is not None
                and following.kind == "python"
                and following.continues
                and following.skip is None
            ):
                return Outcome(snippet, "chained", "runs with the next python block")
            chain, self._chain = self._chain, []
            code = "".join(part.prelude + part.code for part in chain)
            script = self.folder / f"doc_snippet_{snippet.line}.py"
            script.write_text(code)
            return self._check(self._execute(snippet, [sys.executable, script.name], snippet.until))
        command = without_install_steps(snippet.code) if snippet.without_install else snippet.code
        return self._check(self._execute(snippet, ["bash", "-e", "-c", command], snippet.until))

    def _parse_data(self, snippet: Snippet) -> Outcome:
        import json

        import yaml

        try:
            if snippet.language == "json":
                json.loads(snippet.code)
            else:
                yaml.safe_load(snippet.code)
        except Exception as error:  # any parser error is the finding
            return Outcome(snippet, "failed", f"does not parse as {snippet.language}: {error}")
        return Outcome(snippet, "parsed")

    @staticmethod
    def _check(result: Outcome) -> Outcome:
        snippet = result.snippet
        if snippet.fails is None:
            return result
        if result.detail.startswith("exit status") and re.search(snippet.fails, result.output, re.M):
            return Outcome(snippet, "passed", "failed as documented", result.output)
        if result.status == "passed":
            return Outcome(snippet, "failed", "succeeded but the page says it fails", result.output)
        return Outcome(
            snippet,
            "failed",
            f"{result.detail}; expected the output to match {snippet.fails!r}",
            result.output,
        )

    def _execute(self, snippet: Snippet, argv: list[str], until: str | None) -> Outcome:
        """Run ``argv`` in the page folder in its own session; end whatever it leaves behind."""
        if self.isolated:
            argv = [
                "unshare", "--net", "--map-root-user", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv
            ]  # fmt: skip
        timeout = self.timeout
        process = subprocess.Popen(
            argv,
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        chunks: list[str] = []
        matched = threading.Event()
        pattern = re.compile(until, re.M) if until else None

        def read() -> None:
            assert process.stdout is not None
            for raw in iter(process.stdout.readline, b""):
                chunks.append(raw.decode(errors="replace"))
                if pattern is not None and pattern.search(chunks[-1]):
                    matched.set()
            matched.set()  # end of output: stop waiting either way

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        finished = matched.wait(timeout)
        timed_out = not finished
        stopped = False
        if process.poll() is None and (pattern is not None or timed_out):
            stopped = True
            self._signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._signal_group(process, signal.SIGKILL)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._signal_group(process, signal.SIGKILL)
            process.wait()
        reader.join(timeout=30)
        left = self._end_leftovers()
        output = "".join(chunks)
        if timed_out:
            return Outcome(snippet, "failed", f"did not end within {timeout:.0f} s", output)
        if pattern is not None:
            if pattern.search(output):
                return Outcome(snippet, "passed", "ran until its output matched, then stopped", output)
            return Outcome(
                snippet,
                "failed",
                f"ended (exit status {process.returncode}) before printing {until!r}",
                output,
            )
        if left:
            return Outcome(snippet, "failed", f"left processes behind: {left}", output)
        if process.returncode != 0 and not stopped:
            return Outcome(snippet, "failed", f"exit status {process.returncode}", output)
        return Outcome(snippet, "passed", "", output)

    @staticmethod
    def _signal_group(process: subprocess.Popen, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)

    def _end_leftovers(self) -> list[int]:
        """Kill every live process that carries this runner's token in its environment (builds
        start in their own sessions, out of reach of the snippet's process group); return their pids."""
        marker = f"MLAGENTS_DOC_TEST_TOKEN={self.token}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if marker not in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    continue
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                found.append(int(entry))
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry), signal.SIGKILL)
        return found


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
