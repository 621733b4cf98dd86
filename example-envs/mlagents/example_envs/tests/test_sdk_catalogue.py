"""The SDK knows no example: the example catalogue registers itself in the SDK's scene catalogue."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlagents.example_envs import registry
from mlagents.example_envs.basic import Basic
from mlagents.example_envs.sdk import catalogue
from mlagents.example_envs.sdk.catalogue import find_scene, register_scene, registered_scenes, resolve_scene
from mlagents.example_envs.sdk.scene import Scene

SDK_FOLDER = Path(catalogue.__file__).parent
#: Every module of the SDK, dotted below it ("academy", "inference.engine", ...).
SDK_MODULES = sorted(
    ".".join(path.relative_to(SDK_FOLDER).with_suffix("").parts)
    for path in SDK_FOLDER.rglob("*.py")
    if path.name != "__init__.py"
)


def test_importing_the_sdk_loads_no_example_and_no_registry():
    code = f"""
        import importlib, sys
        for name in {SDK_MODULES!r}:
            importlib.import_module("mlagents.example_envs.sdk." + name)
        loaded = [m for m in sys.modules if m.startswith("mlagents.example_envs.")]
        stray = [m for m in loaded if not m.startswith("mlagents.example_envs.sdk")]
        assert not stray, stray
        from mlagents.example_envs.sdk.catalogue import registered_scenes
        assert dict(registered_scenes()) == {{}}
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_the_registry_registers_every_example_lazily():
    scenes = registered_scenes()
    for name, path in registry.SCENES.items():
        assert scenes[name] == path
    assert find_scene("Basic") is Basic
    assert registry.load_scene("Basic") is Basic
    assert resolve_scene("Basic") is Basic


def test_unknown_name_lists_the_registered_ones():
    with pytest.raises(KeyError, match="Known examples: .*3DBall.*Basic"):
        find_scene("NoSuchScene")


def test_register_a_scene_class_or_path(monkeypatch):
    monkeypatch.setattr(catalogue, "_SCENES", dict(catalogue._SCENES))

    class Mine(Basic):
        pass

    register_scene("test-catalogue-mine", Mine)
    register_scene("test-catalogue-mine", Mine)  # the same again is fine
    assert find_scene("test-catalogue-mine") is Mine
    with pytest.raises(ValueError, match="already registered"):
        register_scene("test-catalogue-mine", Basic)
    with pytest.raises(ValueError, match="module:Class"):
        register_scene("test-catalogue-bad", "no_colon_here")
    register_scene("test-catalogue-path", "mlagents.example_envs.basic:Basic")
    assert find_scene("test-catalogue-path") is Basic
    register_scene("test-catalogue-broken", "mlagents.example_envs.sdk.scene:SceneSpec")
    with pytest.raises(ValueError, match="not a Scene subclass"):
        find_scene("test-catalogue-broken")
    assert issubclass(find_scene("test-catalogue-mine"), Scene)
