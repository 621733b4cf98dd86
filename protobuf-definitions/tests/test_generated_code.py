"""The committed communicator_objects modules are exactly what generate.py produces from the .proto files."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATE = ROOT / "protobuf-definitions" / "generate.py"
COMMITTED = ROOT / "ml-agents-envs" / "mlagents" / "envs" / "communicator_objects"
PINNED_GRPCIO_TOOLS = "1.85.1"  # the "protoc" extra of ml-agents-envs/pyproject.toml


def _grpcio_tools_version():
    try:
        return importlib.metadata.version("grpcio-tools")
    except importlib.metadata.PackageNotFoundError:
        return None


def test_regenerated_code_is_identical(tmp_path):
    version = _grpcio_tools_version()
    if version != PINNED_GRPCIO_TOOLS:
        pytest.skip(
            f"needs grpcio-tools=={PINNED_GRPCIO_TOOLS} (found {version or 'none'}); "
            "install it with: pip install -e './ml-agents-envs[protoc]'"
        )
    result = subprocess.run(
        [sys.executable, str(GENERATE), "--out", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    generated = tmp_path / "mlagents" / "envs" / "communicator_objects"
    generated_files = sorted(p.name for p in generated.glob("*.py"))
    committed_files = sorted(p.name for p in COMMITTED.glob("*.py"))
    assert generated_files == committed_files
    different = [
        name for name in committed_files if (generated / name).read_bytes() != (COMMITTED / name).read_bytes()
    ]
    assert different == [], f"regenerate with protobuf-definitions/generate.py: {different} differ"
