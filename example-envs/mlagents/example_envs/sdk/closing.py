"""The ``with`` protocol of the SDK's objects that hold something until they are closed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class Closable(ABC):
    """An object that holds something (a file, an OpenGL context, a scene) until :meth:`close`;
    a ``with`` block closes it when the block ends."""

    @abstractmethod
    def close(self) -> None:
        """Let go of what the object holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
