"""Every command and Python snippet of README.md and docs/ runs as written (see doc_snippets.py and
CONTRIBUTING.md for the markers), so that a renamed flag, a moved module or a changed config key
fails here. Training commands run with a budget of a few hundred steps."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from doc_snippets import DURATIONS, NOT_RUN, REPO, Outcome, PageRunner, pages, parse_page

MAX_STEPS = 300
RESAMPLING_INTERVAL = 100

RESET_LINE = re.compile(r"Academy reset with parameters: (?P<values>.*)")


def check_generalize_run_resamples(output: str) -> None:
    """The run with config/3dball_generalize.yaml resets the environment with new values of every
    sampled parameter, drawn in the ranges of the file, every resampling interval."""
    samplers = yaml.safe_load((REPO / "config" / "3dball_generalize.yaml").read_text())
    samplers.pop("resampling-interval")
    resets = [
        {name: float(value) for name, value in (pair.split(" -> ") for pair in m["values"].split(", "))}
        for m in RESET_LINE.finditer(output)
    ]
    # The first reset starts the training, then one every RESAMPLING_INTERVAL steps of MAX_STEPS.
    assert len(resets) >= MAX_STEPS // RESAMPLING_INTERVAL, output[-3000:]
    for name, sampler in samplers.items():
        values = [reset[name] for reset in resets]
        assert len(set(values)) == len(values), f"{name} was not resampled: {values}"
        assert all(sampler["min_value"] <= v < sampler["max_value"] for v in values), (name, values)


#: page name -> (text in a snippet, check of its output) for snippets whose output shows more.
OUTPUT_CHECKS: dict[str, list[tuple[str, Callable[[str], None]]]] = {
    "Training-Generalized-RL-Agents.md": [
        ("--sampler=config/3dball_generalize.yaml", check_generalize_run_resamples)
    ],
}


def report(outcomes: list[Outcome]) -> list[str]:
    """Record the snippets not run; return a description of every failure."""
    failures = []
    for outcome in outcomes:
        if outcome.seconds >= 1.0:
            DURATIONS.append((outcome.seconds, outcome.snippet.where))
        if outcome.status == "not run":
            NOT_RUN.append(f"{outcome.snippet.where}: {outcome.detail}")
        elif outcome.status == "failed":
            failures.append(
                f"{outcome.snippet.where} ({outcome.snippet.language or 'unlabeled'}): {outcome.detail}\n"
                f"--- snippet:\n{outcome.snippet.code}--- output (end):\n{outcome.output[-3000:]}"
            )
    return failures


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_page_snippets_run(page: Path, tmp_path: Path) -> None:
    outcomes = PageRunner(tmp_path, MAX_STEPS, RESAMPLING_INTERVAL).run_page(parse_page(page))
    failures = report(outcomes)
    for text, check in OUTPUT_CHECKS.get(page.name, []):
        ran = [o for o in outcomes if text in o.snippet.code and o.status == "passed"]
        if not ran:
            failures.append(f"{page.name}: no snippet containing {text!r} ran")
        for outcome in ran:
            try:
                check(outcome.output)
            except AssertionError as error:
                failures.append(f"{outcome.snippet.where}: {check.__name__}: {error}")
    assert not failures, "\n\n".join(failures)


def test_ci_runs_the_test_command_of_the_readme() -> None:
    """The README's test command is not run here (it runs the whole suite): CI runs it, as written."""
    readme = (REPO / "README.md").read_text().splitlines()
    (command,) = [line.strip() for line in readme if line.startswith("    ") and " -m pytest" in line]
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines, f".ci/run does not run the README's test command:\n{command}"


def test_every_page_is_in_the_index() -> None:
    index = (REPO / "docs" / "Readme.md").read_text()
    linked = set(re.findall(r"\]\(([^)#]+\.md)", index))
    # Redirect stubs at v0.9's page names point to their page and stay out of the index.
    missing = [
        p.name
        for p in sorted((REPO / "docs").glob("*.md"))
        if p.name != "Readme.md" and p.name not in linked and not p.read_text().startswith("<!-- redirect:")
    ]
    assert not missing, f"pages not linked from docs/Readme.md: {missing}"


def test_every_new_config_of_the_docs_ships() -> None:
    """Files the pages tell users to pass are in the repository."""
    for path in ("config/3dball_generalize.yaml", "config/curricula/wall-jump"):
        assert (REPO / path).exists(), path


# ------------------------------------------------------------------------------ the test of the test

BROKEN_PAGE = """\
# A page with good and broken snippets

A command that works:

```sh
mlagents-learn --help
```

A flag that was renamed (mlagents-learn prints its usage and ends with status 1):

```sh
mlagents-learn config/trainer_config.yaml --num-environments=2
```

A module that moved:

```python
from mlagents.envs.no_such_module import UnityEnvironment
```

A chain of python blocks shares its variables:

```python
answer = 42
```

<!-- doc-test: continues -->
```python
assert answer == 42
```

An error the page shows, which does not happen:

<!-- doc-test: fails No such thing -->
```sh
true
```

An error the page shows, which does happen:

<!-- doc-test: fails could not be found -->
```sh
mlagents-learn config/missing.yaml
```

A config excerpt that is not YAML:

```yaml
default: [unclosed
```

Output with no label:

```
INFO: something
```

<!-- doc-test: skip needs a real Unity build -->
```sh
mlagents-learn config/trainer_config.yaml --env=builds/RealUnityGame --train
```

A file, then a command that uses it:

<!-- doc-test: file hello.sh -->
```sh
#!/bin/sh
echo hello from a file
```

```sh
./hello.sh | grep "hello from a file"
```

A command that runs until stopped:

<!-- doc-test: until waiting for Python -->
```sh
python -m mlagents.example_envs Basic --port 5005
```

Indented commands, as in README.md:

    python -c "import mlagents.envs"
"""


@pytest.mark.slow
def test_a_broken_snippet_fails_the_test(tmp_path: Path) -> None:
    page = tmp_path / "Broken.md"
    page.write_text(BROKEN_PAGE)
    folder = tmp_path / "run"
    folder.mkdir()
    outcomes = PageRunner(folder, MAX_STEPS, RESAMPLING_INTERVAL, timeout=120).run_page(parse_page(page))
    statuses = [(o.snippet.line, o.status) for o in outcomes]
    expected = [
        "passed",  # --help
        "failed",  # renamed flag
        "failed",  # moved module
        "chained",
        "passed",  # the chain
        "failed",  # `fails` but succeeds
        "passed",  # `fails` and fails as shown
        "failed",  # bad YAML
        "failed",  # unlabeled fence
        "not run",
        "written",
        "passed",  # uses the file
        "passed",  # until
        "passed",  # indented
    ]
    assert [status for _, status in statuses] == expected, [
        (o.snippet.where, o.status, o.detail) for o in outcomes
    ]
    renamed = outcomes[1]
    assert "exit status 1" in renamed.detail and "Usage:" in renamed.output
    assert "No module named 'mlagents.envs.no_such_module'" in outcomes[2].output
    assert "language label" in outcomes[8].detail
    assert outcomes[9].detail == "needs a real Unity build"
    assert len(report(outcomes)) == 5
    # The listings of the terminal summary are for the real pages.
    NOT_RUN.remove(f"{outcomes[9].snippet.where}: needs a real Unity build")
    DURATIONS[:] = [entry for entry in DURATIONS if not entry[1].startswith(str(page))]


def test_the_learn_wrapper_lowers_the_budget_of_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import learn_wrapper

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLAGENTS_TEST_MAX_STEPS", "300")
    monkeypatch.setenv("MLAGENTS_TEST_RESAMPLING_INTERVAL", "100")
    config = REPO / "config" / "trainer_config.yaml"
    sampler = REPO / "config" / "3dball_generalize.yaml"
    args = learn_wrapper.rewrite([str(config), "--train", f"--sampler={sampler}"])
    lowered = yaml.load(Path(args[0]).read_text(), Loader=learn_wrapper._Loader)
    original = yaml.load(config.read_text(), Loader=learn_wrapper._Loader)
    # 3DBallLearning takes max_steps from the default section.
    assert "max_steps" not in lowered["3DBallLearning"] and lowered["default"]["max_steps"] == 300
    assert lowered["BigWallJumpLearning"]["max_steps"] == 300
    assert lowered["3DBallLearning"]["summary_freq"] == 100
    # Everything else is kept, numbers as numbers.
    assert lowered["3DBallLearning"]["beta"] == original["3DBallLearning"]["beta"] == 0.001
    assert lowered["StrikerLearning"]["learning_rate"] == 1e-3
    assert args[1] == "--train"
    assert yaml.safe_load(Path(args[2].split("=", 1)[1]).read_text())["resampling-interval"] == 100
    # A file that is missing passes through, for mlagents-learn to report.
    assert learn_wrapper.rewrite(["missing.yaml"]) == ["missing.yaml"]


def test_the_resampling_check_fails_a_run_that_did_not_resample() -> None:
    same = "INFO:mlagents.envs:Academy reset with parameters: mass -> 4.0, gravity -> 9.0, scale -> 1.5\n"
    with pytest.raises(AssertionError, match="mass was not resampled"):
        check_generalize_run_resamples(same * 4)
    with pytest.raises(AssertionError):
        check_generalize_run_resamples(same)  # too few resets
    varied = "".join(
        f"Academy reset with parameters: mass -> {1 + i}, gravity -> {7 + i}, scale -> {1 + i / 10}\n"
        for i in range(4)
    )
    check_generalize_run_resamples(varied)
    with pytest.raises(AssertionError):
        check_generalize_run_resamples(varied.replace("mass -> 4", "mass -> 40"))  # out of range
