"""``python -m mlagents.example_envs <Name> [Unity arguments]``: run an example like a Unity build
(``--help`` lists the options)."""

import sys

from . import (
    registry,  # noqa: F401  (registers the examples in the SDK's scene catalogue)
    video_views,  # noqa: F401  (where the video camera of each example looks)
)
from .sdk.cli import main

if __name__ == "__main__":
    sys.exit(main())
