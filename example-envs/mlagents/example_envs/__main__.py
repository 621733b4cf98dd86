"""``python -m mlagents.example_envs <Name> [Unity arguments]``: run an example like a Unity build."""

import sys

from .sdk.cli import main

if __name__ == "__main__":
    sys.exit(main())
