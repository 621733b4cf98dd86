"""The Dockerfile at the repository root installs the project with the install steps of the README's
main command and runs the rest of that command (the quick start), word for word, so that the image
and the README cannot drift apart. docs/Using-Docker.md explains the image."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from doc_snippets import INSTALL_STEP, REPO, parse_page

README = REPO / "README.md"
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


def readme_commands() -> tuple[str, str]:
    """(main command, test command): the two copy-pasteable command lines of the README."""
    commands = [s.code.strip() for s in parse_page(README) if s.kind == "shell" and " && " in s.code]
    main = [c for c in commands if "mlagents-learn" in c and " -m pytest" not in c]
    tests = [c for c in commands if " -m pytest" in c]
    assert len(main) == 1 and len(tests) == 1, (
        f"expected one main and one test command in README.md: {commands}"
    )
    return main[0], tests[0]


def split_install(command: str) -> tuple[list[str], str]:
    """(install steps, the rest) of an ``&&`` chain, as the doc test's ``without-install`` splits it."""
    parts = command.split(" && ")
    install = []
    while parts and INSTALL_STEP.match(parts[0]):
        install.append(parts.pop(0))
    return install, " && ".join(parts)


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments left out."""
    result: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if pending and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].strip() + " "
            continue
        full = (pending + line.strip()).strip()
        pending = ""
        name, _, arguments = full.partition(" ")
        result.append((name.upper(), arguments.strip()))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return result


def exec_form(arguments: str) -> list[str]:
    """The words of an exec-form (JSON array) ENTRYPOINT or CMD."""
    words = json.loads(arguments)
    assert isinstance(words, list) and all(isinstance(word, str) for word in words), arguments
    return words


def the(dockerfile: list[tuple[str, str]], name: str) -> tuple[int, str]:
    """(position, arguments) of the one instruction ``name`` of the Dockerfile."""
    found = [(i, arguments) for i, (instruction, arguments) in enumerate(dockerfile) if instruction == name]
    assert len(found) == 1, f"expected one {name} in the Dockerfile, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions(DOCKERFILE.read_text())


def test_the_readme_has_a_main_and_a_test_command() -> None:
    main, tests = readme_commands()
    install, run = split_install(main)
    assert install and run.startswith(".venv/bin/mlagents-learn "), main
    test_install, test_run = split_install(tests)
    assert test_install and test_run.startswith(".venv/bin/python -m pytest"), tests


def test_the_image_installs_as_the_readme_does(dockerfile: list[tuple[str, str]]) -> None:
    install, _ = split_install(readme_commands()[0])
    runs = [(i, arguments) for i, (instruction, arguments) in enumerate(dockerfile) if instruction == "RUN"]
    matching = [i for i, arguments in runs if arguments == " && ".join(install)]
    assert matching, f"no RUN instruction is the README's install steps:\n{' && '.join(install)}"
    # The install runs in the copied checkout, as the README's does at the repository root.
    workdir, folder = the(dockerfile, "WORKDIR")
    copies = [i for i, (instruction, arguments) in enumerate(dockerfile) if instruction == "COPY"]
    assert any(dockerfile[i][1] in (". .", f". {folder}") for i in copies), "the checkout is not copied"
    assert workdir < min(copies) < matching[0], "WORKDIR, COPY and the install are not in this order"


def test_the_image_runs_the_readme_quick_start(dockerfile: list[tuple[str, str]]) -> None:
    _, run = split_install(readme_commands()[0])
    _, entrypoint = the(dockerfile, "ENTRYPOINT")
    _, cmd = the(dockerfile, "CMD")
    assert exec_form(entrypoint) + exec_form(cmd) == shlex.split(run), (
        f"ENTRYPOINT + CMD are not the README's command:\n{run}"
    )
    # The entry point is the command alone, so that arguments given to `docker run` replace the
    # quick start's (docs/Using-Docker.md).
    assert exec_form(entrypoint) == shlex.split(run)[:1]


def test_the_base_image_has_the_python_the_docs_require(dockerfile: list[tuple[str, str]]) -> None:
    _, base = the(dockerfile, "FROM")
    match = re.fullmatch(r"python:(\d+)\.(\d+)-slim", base)
    assert match and (int(match[1]), int(match[2])) >= (3, 11), base


def test_the_checkouts_virtual_environment_stays_out_of_the_image() -> None:
    ignored = {line.strip() for line in DOCKERIGNORE.read_text().splitlines() if not line.startswith("#")}
    # A copied .venv would hold the host's interpreter paths; models and summaries are outputs.
    assert {".venv", ".git", "models", "summaries"} <= ignored


def test_the_parser_reads_continuations_and_exec_forms() -> None:
    text = (
        "# comment\nFROM python:3.11-slim\nRUN a \\\n    # inside\n    && b\n"
        'ENTRYPOINT ["x"]\nCMD ["--y=1", "z"]\n'
    )
    assert instructions(text) == [
        ("FROM", "python:3.11-slim"),
        ("RUN", "a && b"),
        ("ENTRYPOINT", '["x"]'),
        ("CMD", '["--y=1", "z"]'),
    ]
    assert split_install("python3 -m venv .venv && .venv/bin/pip install -q -e ./a && .venv/bin/x y") == (
        ["python3 -m venv .venv", ".venv/bin/pip install -q -e ./a"],
        ".venv/bin/x y",
    )
