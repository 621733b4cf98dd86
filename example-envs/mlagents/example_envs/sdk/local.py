"""Run an example environment in-process, without the wire.

:class:`LocalEnvironment` drives the same :class:`~.academy.Academy` as a build does over gRPC,
so both paths share every step rule; it only skips the protobuf/PNG conversion and returns the
:class:`~.messages.DecisionBatch` objects that would have been sent. Used by scene tests,
scripted controllers and ``benchmarks/env_speed.py``.

Example::

    env = LocalEnvironment("Basic", seed=0)
    batches = env.reset()
    while not batches["BasicLearning"].local_done.any():
        batches = env.step({"BasicLearning": np.full((1, 1), 2.0, dtype=np.float32)})
    env.close()
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .academy import Academy
from .brains import BrainSettings
from .catalogue import resolve_scene
from .closing import Closable
from .messages import AcademyInput, AcademyOutput, Command, DecisionBatch
from .scene import Scene
from .specs import BrainSpec

__all__ = ["LocalEnvironment", "DecisionBatch"]


class LocalEnvironment(Closable):
    """An example environment in this process, with the semantics of a build behind UnityEnvironment.

    :param scene: a name registered in the scene catalogue (e.g. ``"3DBall"``), a ``"package.module:Class"`` path or a
        Scene subclass.
    :param seed: the seed Python would send at initialization.
    :param train_mode: sent with every ``reset`` (training vs inference configuration).
    :param worker_id: kept for symmetry with UnityEnvironment; like a real build, the scene only
        sees the seed, so give workers different seeds to get different episodes.
    :param frame_time_ms: milliseconds slept per academy step (the builds' ``--frame-time-ms``).
    :param brain_settings: brain types, broadcast and recordings (the builds' ``--brain-type``,
        ``--broadcast``, ``--record-demo``); ``brains`` and the outputs then hold only the brains
        Python would see. Call :meth:`close` to finish recordings.
    :raises KeyError: for an unregistered name.
    :raises ValueError: for a "module:Class" path that cannot be loaded.
    """

    def __init__(
        self,
        scene: str | type[Scene],
        seed: int = 0,
        train_mode: bool = True,
        worker_id: int = 0,
        frame_time_ms: float = 0.0,
        brain_settings: BrainSettings | None = None,
    ) -> None:
        scene_class = resolve_scene(scene)
        self.worker_id = worker_id
        self.train_mode = train_mode
        if brain_settings is not None:
            brain_settings.validate(scene_class, scene_class.spec())
        self.academy = Academy(
            scene_class, seed=seed, frame_time=frame_time_ms / 1000.0, brain_settings=brain_settings
        )
        visible = self.academy.brain_settings.visible_spec(self.academy.spec).brains
        if not visible:
            self.academy.close()
            raise ValueError(
                "No brain of this scene is external or broadcast, so Python would see nothing; "
                "run it on its own with Academy.run instead."
            )
        self.brains: dict[str, BrainSpec] = {brain.name: brain for brain in visible}
        self._reset_parameters: dict[str, float] = dict(self.academy.spec.reset_parameters)
        self._global_done: bool | None = None
        self._closed = False

    @property
    def academy_name(self) -> str:
        return self.academy.spec.academy_name

    @property
    def brain_names(self) -> list[str]:
        return list(self.brains)

    @property
    def reset_parameters(self) -> dict[str, float]:
        """The reset parameters sent with the next ``reset`` (defaults updated by earlier configs)."""
        return dict(self._reset_parameters)

    @property
    def global_done(self) -> bool | None:
        """``global_done`` of the last output (None before the first ``reset``)."""
        return self._global_done

    def reset(
        self, config: Mapping[str, float] | None = None, train_mode: bool | None = None
    ) -> dict[str, DecisionBatch]:
        """Send a RESET (with every known reset parameter, updated by ``config``) and return the
        first output after it.

        :raises KeyError: for a reset parameter the scene does not declare.
        :raises TypeError: for a value that is not a number.
        """
        self._check_open()
        for key, value in (config or {}).items():
            if key not in self._reset_parameters:
                raise KeyError(
                    f"The parameter '{key}' is not a valid reset parameter of {self.academy_name}; "
                    f"known: {sorted(self._reset_parameters)}."
                )
            if not isinstance(value, (int, float, np.number)) or isinstance(value, bool):
                raise TypeError(f"The value for parameter '{key}' must be an int or a float, got {value!r}.")
            self._reset_parameters[key] = float(value)
        if train_mode is not None:
            self.train_mode = train_mode
        message = AcademyInput(
            command=Command.RESET, is_training=self.train_mode, reset_parameters=dict(self._reset_parameters)
        )
        return self._advance(message)

    def step(self, actions: Mapping[str, np.ndarray] | np.ndarray | None = None) -> dict[str, DecisionBatch]:
        """Send one action row per agent of the last output and run to the next exchange point.

        :param actions: brain -> float ``(k, action_length)`` (or flat ``(k * action_length,)``);
            a bare array is accepted when the scene has a single brain. Brains left out keep
            their agents' previous actions.
        :raises RuntimeError: before the first ``reset`` or after ``global_done`` (reset first).
        :raises ValueError: when an array does not match the agents of the last output.
        """
        self._check_open()
        if self._global_done is None:
            raise RuntimeError("You cannot step before the first reset(); call reset() first.")
        if self._global_done:
            raise RuntimeError("The episode is completed (global_done). Reset the environment with reset().")
        if actions is None:
            actions = {}
        elif not isinstance(actions, Mapping):
            if len(self.brains) != 1:
                raise ValueError(
                    f"This scene has several brains {self.brain_names}; pass a dict brain -> actions."
                )
            actions = {self.brain_names[0]: actions}
        return self._advance(AcademyInput(command=Command.STEP, actions=actions))

    def close(self) -> None:
        """Finish recordings and forget the scene (nothing runs in the background)."""
        if not self._closed:
            self.academy.close()
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("This LocalEnvironment is closed.")

    def _advance(self, message: AcademyInput) -> dict[str, DecisionBatch]:
        output: AcademyOutput | None = self.academy.advance(message)
        assert output is not None  # only a QUIT command ends the academy
        self._global_done = output.global_done
        return output.batches
