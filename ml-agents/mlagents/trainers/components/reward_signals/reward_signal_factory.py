"""Builds the reward signals named in a trainer configuration: :func:`create_reward_signal`.

Which names exist, and which classes they stand for, is said once, by
:data:`~mlagents.trainers.settings.REWARD_SIGNAL_KINDS`; :data:`NAME_TO_CLASS` reads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mlagents.trainers.components.reward_signals import RewardSignal
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import REWARD_SIGNAL_KINDS, RewardSignalSettings

if TYPE_CHECKING:
    from mlagents.trainers.components.reward_signals import SignalPolicy
    from mlagents.trainers.models import LearningModel

__all__ = ["NAME_TO_CLASS", "create_reward_signal"]


class _SignalClasses(Mapping[str, type[RewardSignal]]):
    """Signal name -> signal class, as registered in ``REWARD_SIGNAL_KINDS`` (read-only)."""

    def __getitem__(self, name: str) -> type[RewardSignal]:
        return REWARD_SIGNAL_KINDS[name].load_class()

    def __iter__(self) -> Iterator[str]:
        return iter(REWARD_SIGNAL_KINDS)

    def __len__(self) -> int:
        return len(REWARD_SIGNAL_KINDS)


#: Reward signal name -> class (the v0.9 name of this table; a view of ``REWARD_SIGNAL_KINDS``).
NAME_TO_CLASS: Mapping[str, type[RewardSignal]] = _SignalClasses()


def create_reward_signal(
    policy: SignalPolicy,
    policy_model: LearningModel,
    name: str,
    config_entry: RewardSignalSettings | Mapping[str, Any] | None,
) -> RewardSignal:
    """Create the reward signal ``name`` with its settings.

    :param policy: the policy the signal belongs to.
    :param policy_model: the policy's network.
    :param name: key of the ``reward_signals`` section (``extrinsic``, ...).
    :param config_entry: the signal's :class:`~mlagents.trainers.settings.RewardSignalSettings`, or
        its hyper-parameters as a dict (parsed here, with the same checks).
    :raises UnityTrainerException: unknown signal name ("Unknown reward signal type <name>"), a
        missing required hyper-parameter, or an unexpected one
        ("Unknown parameters given for reward signal <name>").
    """
    if isinstance(config_entry, RewardSignalSettings):
        settings = config_entry
    else:
        settings = RewardSignalSettings.from_dict(name, config_entry)
    if name not in NAME_TO_CLASS:
        raise UnityTrainerException(f"Unknown reward signal type {name}")
    return NAME_TO_CLASS[name](policy, policy_model, **settings.signal_kwargs())
