"""The one error type of the gym wrapper."""

from gymnasium import error


class UnityGymException(error.Error):
    """The Unity environment cannot be used through the gym interface as asked: wrong number of
    brains or agents, a missing visual observation, stacked vector observations, or a malformed
    action. (A subclass of ``gymnasium.error.Error``, as the original derived from gym's.)"""
