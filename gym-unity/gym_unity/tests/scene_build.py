"""Test-only build: ``python scene_build.py <class in gym_test_scenes> [Unity arguments]``.

Runs one scene of ``gym_unity.tests.gym_test_scenes`` through the example SDK's command line,
exactly as an example build runs a registered scene (same gRPC client, same flags). The
``<Name>.x86_64`` launchers that the tests hand to UnityEnvironment exec this script.
"""

import sys

from mlagents.example_envs.sdk.cli import main

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python scene_build.py <Scene class of gym_test_scenes> [Unity arguments]\n")
        sys.exit(2)
    sys.exit(main([f"gym_unity.tests.gym_test_scenes:{sys.argv[1]}", *sys.argv[2:]]))
