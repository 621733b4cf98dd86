#!/usr/bin/env python3
"""Regenerate the Python protobuf/gRPC modules from the .proto sources.

Usage: python protobuf-definitions/generate.py [--out DIR]

The generated modules are committed in
ml-agents-envs/mlagents/envs/communicator_objects/. Regenerate them with the
grpcio-tools version pinned in ml-agents-envs/pyproject.toml (extra "protoc") so the
output is identical to the committed files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE / "proto"
PACKAGE_DIR = Path("mlagents") / "envs" / "communicator_objects"
DEFAULT_OUT = HERE.parent / "ml-agents-envs"


def proto_files() -> list[Path]:
    """The .proto sources, relative to the proto root, in file-name order."""
    return sorted(p.relative_to(PROTO_ROOT) for p in (PROTO_ROOT / PACKAGE_DIR).glob("*.proto"))


def write_init(package: Path) -> None:
    """The package __init__ re-exports every message and the gRPC service helpers."""
    modules = sorted(p.stem for p in package.glob("*_pb2.py")) + ["unity_to_external_pb2_grpc"]
    lines = [
        '"""Generated protobuf messages of the Unity ML-Agents wire protocol (package communicator_objects)."""'
    ]
    lines += [f"from .{m} import *  # noqa: F401,F403" for m in modules]
    (package / "__init__.py").write_text("\n".join(lines) + "\n")


def generate(out_root: Path) -> None:
    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError:
        sys.exit("grpcio-tools is not installed: pip install -e 'ml-agents-envs[protoc]'")
    package = out_root / PACKAGE_DIR
    package.mkdir(parents=True, exist_ok=True)
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--grpc_python_out={out_root}",
        *[str(p) for p in proto_files()],
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed; see the messages above")
    # grpc_python_out writes an (empty) _grpc module for every file; keep only the service's.
    for stray in package.glob("*_pb2_grpc.py"):
        if stray.name != "unity_to_external_pb2_grpc.py":
            stray.unlink()
    write_init(package)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="root folder that receives mlagents/envs/communicator_objects",
    )
    generate(parser.parse_args().out)


if __name__ == "__main__":
    main()
