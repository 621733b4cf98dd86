"""Several environments behind one ``BaseUnityEnvironment``: :class:`SubprocessUnityEnvironment`
(the parallel environment of ML-Agents 0.8, kept so that 0.8 scripts run unchanged).

Each environment runs in a worker process (the same workers as
:class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager`, which starts, watches and ends
them). Unlike the manager, this class steps every worker at each step and returns one merged
BrainInfo per brain:

* the agents of worker ``w`` follow those of workers ``0 .. w-1`` and are named ``"<w>-<id>"``;
* the actions given to :meth:`step` (per brain, one row per agent of the last merged BrainInfo) are
  cut into consecutive rows by the number of agents each worker reported last;
* ``external_brains`` and ``reset_parameters`` are those of worker 0; ``global_done`` is true when
  every worker's academy is done; a worker whose academy is done resets instead of stepping.
"""

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment, StepTexts, StepValues
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
from mlagents.envs.exception import UnityEnvironmentException
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager, UnityEnvWorker
from mlagents.envs.worker_transport import WorkerCommand

__all__ = ["SubprocessUnityEnvironment"]


class SubprocessUnityEnvironment(BaseUnityEnvironment):
    """``n_env`` environments in worker processes, stepped together as one environment.

    Example::

        from functools import partial

        factory = partial(UnityEnvironment, "example-envs/builds/3DBall", base_port=5005)
        env = SubprocessUnityEnvironment(factory, n_env=2)  # workers 0, 1 on ports 5005, 5006
        try:
            info = env.reset()["3DBallLearning"]  # 24 agents: "0-<id>" x 12, then "1-<id>" x 12
            info = env.step({"3DBallLearning": np.zeros((24, 2))})["3DBallLearning"]
        finally:
            env.close()

    :param env_factory: callable ``worker_id -> environment``, called in each worker process.
    :param n_env: number of environments.
    :raises: any error of an environment's creation, after every worker was ended.
    """

    def __init__(self, env_factory: Callable[[int], BaseUnityEnvironment], n_env: int = 1) -> None:
        self._manager = SubprocessEnvManager(env_factory, n_env)
        self.envs: list[UnityEnvWorker] = self._manager.env_workers
        self.env_agent_counts: dict[str, list[int]] = {}
        self.waiting = False

    # ------------------------------------------------------------------------------- stepping

    def step_async(
        self,
        vector_action: StepValues = None,
        memory: StepValues = None,
        text_action: StepTexts = None,
        value: StepValues = None,
    ) -> None:
        """Send each worker its rows of the actions (see the module docstring) without waiting.

        :raises UnityEnvironmentException: a step is already in flight.
        """
        if self.waiting:
            raise UnityEnvironmentException(
                "Tried to take an environment step bore previous step has completed."
            )
        brain_names = list(self.env_agent_counts)
        per_brain = [
            self._per_brain(argument, brain_names) for argument in (vector_action, memory, text_action, value)
        ]
        actions_by_worker: dict[int, dict[str, ActionInfo]] = {}
        for worker in self.envs:
            all_action_info: dict[str, ActionInfo] = {}
            for brain_name in brain_names:
                rows = self._worker_rows(brain_name, worker.worker_id)
                actions, memories, texts, values = (
                    _take_rows(values_by_brain.get(brain_name), rows, self._total(brain_name))
                    for values_by_brain in per_brain
                )
                if actions is None and memories is None and texts is None and values is None:
                    continue
                all_action_info[brain_name] = ActionInfo(actions, memories, texts, values, None)
            actions_by_worker[worker.worker_id] = all_action_info
        self._manager.send_actions(actions_by_worker)
        self.waiting = True

    def step_await(self) -> AllBrainInfo:
        """Wait for every worker's step and return the merged BrainInfos.

        :raises UnityEnvironmentException: no step is in flight.
        :raises: a worker's error (with its type), or UnityCommunicationException when one died.
        """
        if not self.waiting:
            raise UnityEnvironmentException(
                "Tried to await an environment step, but no async step was taken."
            )
        try:
            results = self._manager.collect_observations()
        finally:
            self.waiting = False
        return self._merge([results[worker.worker_id] for worker in self.envs])

    def step(
        self,
        vector_action: StepValues = None,
        memory: StepValues = None,
        text_action: StepTexts = None,
        value: StepValues = None,
    ) -> AllBrainInfo:
        """:meth:`step_async`, then :meth:`step_await`."""
        self.step_async(vector_action, memory, text_action, value)
        return self.step_await()

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> AllBrainInfo:
        """Reset every environment (in parallel) and return the merged first BrainInfos."""
        step_infos = self._manager.reset(config, train_mode, custom_reset_parameters)
        return self._merge([step_info.current_all_brain_info for step_info in step_infos])

    # ------------------------------------------------------------------------------- properties

    @property
    def global_done(self) -> bool:
        """True when every worker's academy is done."""
        return all(self._manager.ask_every_worker(WorkerCommand.GLOBAL_DONE))

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        """Worker 0's controlled brains."""
        return self._manager.external_brains

    @property
    def reset_parameters(self) -> dict[str, float]:
        """Worker 0's reset parameters."""
        return self._manager.reset_parameters

    def close(self) -> None:
        """End every worker and its environment (safe to call several times)."""
        self._manager.close()

    # ------------------------------------------------------------------------------- helpers

    def _merge(self, per_worker: Sequence[AllBrainInfo]) -> AllBrainInfo:
        """Rename every agent ``"<w>-<id>"`` (in place), note the agent counts, and join the workers'
        BrainInfos in worker order (worker 0's copied, the others merged into it)."""
        self.env_agent_counts = {}
        merged: AllBrainInfo | None = None
        for worker_id, all_brain_info in enumerate(per_worker):
            for brain_name, brain_info in all_brain_info.items():
                agents = brain_info.agents or []
                brain_info.agents = [f"{worker_id}-{_own_id(agent)}" for agent in agents]
                self.env_agent_counts.setdefault(brain_name, []).append(len(agents))
                if merged is not None:
                    if brain_name in merged:
                        merged[brain_name].merge(brain_info)
                    else:
                        merged[brain_name] = copy.deepcopy(brain_info)
            if merged is None:
                merged = copy.deepcopy(all_brain_info)
        return merged or {}

    def _per_brain(self, argument: Any, brain_names: list[str]) -> Mapping[str, Any]:
        if argument is None:
            return {}
        if isinstance(argument, Mapping):
            return argument
        if len(brain_names) == 1:
            return {brain_names[0]: argument}
        raise UnityEnvironmentException(
            "With several brains, step() takes a dict brain name -> values "
            f"(the brains are {', '.join(brain_names) or 'not known before the first reset'})."
        )

    def _worker_rows(self, brain_name: str, worker_id: int) -> slice:
        counts = self.env_agent_counts[brain_name]
        start = int(sum(counts[:worker_id]))
        end = start + (counts[worker_id] if worker_id < len(counts) else 0)
        return slice(start, end)

    def _total(self, brain_name: str) -> int:
        return int(sum(self.env_agent_counts[brain_name]))


def _own_id(agent: Any) -> str:
    """The environment's own agent id: ``"$0-12"`` (a 0.9 UnityEnvironment's id) -> ``"12"``."""
    text = str(agent)
    if text.startswith("$") and "-" in text:
        return text.split("-", 1)[1]
    return text


def _take_rows(values: Any, rows: slice, total: int) -> Any:
    """The rows of one worker's agents in one brain's values (one row per agent; a flat array of
    ``total * k`` numbers counts as ``total`` rows of ``k``); texts are sliced as a list; a single
    text or number is sent to every worker as it is."""
    if values is None:
        return None
    if isinstance(values, str):
        return values
    if isinstance(values, list | tuple) and all(isinstance(item, str) for item in values):
        return list(values[rows])
    array = np.asarray(values)
    if array.ndim == 0:
        return array
    if total > 0 and array.shape[0] != total and array.size % total == 0:
        array = array.reshape(total, -1)
    return array[rows]
