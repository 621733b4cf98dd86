"""Pretraining inside PPO: behavioural cloning from demonstrations on the PPO network itself
(:class:`~mlagents.trainers.components.bc.module.BCModule`)."""
