"""The import checker CI runs (``tools/check_imports.py``): it finds circles through imports inside
functions, ignores ``TYPE_CHECKING`` imports, flags imports that point up the layers, and passes
the product code as it is."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[1] / "check_imports.py"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_imports"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def graph(check: ModuleType) -> dict[str, set[str]]:
    return check.import_graph()


def test_the_product_code_passes(check: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main([]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_an_import_inside_a_function_counts_and_type_checking_does_not(
    check: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "timers.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from mlagents.envs.brain import BrainInfo\n"
        "def f():\n"
        "    from mlagents.envs.environment import UnityEnvironment\n"
    )
    known = ["mlagents.envs.brain", "mlagents.envs.environment", "mlagents.envs.timers"]
    assert check.imported_names("mlagents.envs.timers", source, known) == {"mlagents.envs.environment"}


def test_a_circle_is_found(check: ModuleType) -> None:
    graph = {
        "mlagents.envs.a": {"mlagents.envs.b"},
        "mlagents.envs.b": {"mlagents.envs.c"},
        "mlagents.envs.c": {"mlagents.envs.a"},
        "mlagents.envs.d": {"mlagents.envs.a"},
    }
    assert check.circles(graph) == [["mlagents.envs.a", "mlagents.envs.b", "mlagents.envs.c"]]
    del graph["mlagents.envs.c"]
    assert check.circles(graph) == []


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("mlagents.envs.environment", "mlagents.trainers.learn"),
        ("gym_unity.envs.core", "mlagents.trainers.learn"),
        ("mlagents.trainers.learn", "mlagents.example_envs.sdk.cli"),
        ("mlagents.example_envs.sdk.academy", "mlagents.example_envs.basic"),
        ("mlagents.example_envs.basic", "mlagents.envs.environment"),
    ],
)
def test_an_import_up_the_layers_is_a_problem(
    check: ModuleType, graph: dict[str, set[str]], module: str, target: str
) -> None:
    graph = dict(graph)
    assert module in graph and target in graph
    graph[module] = graph[module] | {target}
    problems = check.layer_problems(graph)
    assert len(problems) == 1 and problems[0].startswith(f"{module} imports {target}"), problems
