"""Optional parts of a policy: reward signals (``components.reward_signals``) and the pretraining
(behavioural-cloning) module of PPO (``components.bc``)."""
