"""The Python examples of gym-unity/README.md stay valid code that uses only what gym_unity exports."""

import ast
import re
from pathlib import Path

import gym_unity.envs

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_examples_compile_and_import_existing_names():
    blocks = python_blocks()
    assert len(blocks) >= 4
    for block in blocks:
        tree = ast.parse(block)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "gym_unity.envs":
                for alias in node.names:
                    assert hasattr(gym_unity.envs, alias.name), alias.name
