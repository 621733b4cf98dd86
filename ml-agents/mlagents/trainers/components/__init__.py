"""Optional parts of a policy: reward signals (``components.reward_signals``)."""
