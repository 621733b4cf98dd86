"""Why PPO's Reacher curve starts flat: figures of the untrained arm and of a standard PPO.

Everything runs in process on the Reacher scene (``mlagents.example_envs.reacher``), without the
wire. Three measurements (figures only, no asserts):

1. **Random policies**: mean reward per episode (20 arms, one 1000-decision episode), the share of
   physics steps with the hand in the goal, the mean height of the hand below the shoulder and
   the segments' world angular speeds (mean and largest, seen at the decisions), for the
   untrained 0.9 policy's actions (``clip(N(0, 1), -3, 3) / 3``), full-strength random actions
   (``clip(N(0, 1), -1, 1)``) and no action at all.
2. **How much one action matters**: the 20 arms and their goals stepped directly (default goal
   size and speed); after 300 decisions of the untrained policy's noise, the arms' state is
   copied; one decision is played with the noise ``a`` and, from the same state, with ``-a``,
   then the same noise for 20 more decisions. Printed: the share of those 21-decision stretches
   with any reward and the share in which the sign of the first action changed the reward.
3. **stable-baselines3 PPO** (``--sb3-episodes N``, 0 skips it): PPO on the 20 arms as a 20-way
   vector environment with observation and reward normalisation, n_steps 100 per arm, batch 500,
   5 epochs, gamma 0.995, lambda 0.95, two hidden layers of 128, the mean reward of the episodes that
   ended in each block of 1000 decisions. Needs ``stable-baselines3`` (and torch).

Usage::

    python benchmarks/reacher_learnability.py                     # 1 and 2 (under a minute)
    python benchmarks/reacher_learnability.py --sb3-episodes 20   # also 3 (10 minutes or more)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import mlagents.example_envs.registry  # noqa: F401  (registers the scenes)
from mlagents.example_envs.reacher import (
    DECISION_INTERVAL,
    GOAL_RADIUS,
    HAND_RADIUS,
    PIVOT_HEIGHT,
    STEP_REWARD,
    TORQUE,
    Reacher,
    ReacherWorld,
)
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "ReacherLearning"
ARMS = 20
EPISODE = 1000  # decisions

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def untrained(_: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The actions of 0.9's untrained Gaussian policy: unit noise clipped to [-3, 3], over 3."""
    return (np.clip(rng.normal(size=(ARMS, 4)), -3.0, 3.0) / 3.0).astype(np.float32)


def full_strength(_: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.clip(rng.normal(size=(ARMS, 4)), -1.0, 1.0).astype(np.float32)


def still(_: np.ndarray, __: np.random.Generator) -> np.ndarray:
    return np.zeros((ARMS, 4), dtype=np.float32)


def random_policy_figures(name: str, policy: Policy, seed: int) -> None:
    env = LocalEnvironment("Reacher", seed=seed)
    try:
        batch = env.reset()[BRAIN]
        scene = env.academy.scene
        assert isinstance(scene, Reacher)
        rng = np.random.default_rng(seed)
        totals = np.zeros(ARMS)
        depth = 0.0
        speeds: list[np.ndarray] = []
        for _ in range(EPISODE):
            batch = env.step({BRAIN: policy(batch.vector_observations, rng)})[BRAIN]
            totals += np.asarray(batch.rewards)
            depth += float(np.mean(PIVOT_HEIGHT - scene.world.hand_positions()[:, 1]))
            speeds.append(np.linalg.norm(scene.world.angular_velocities(), axis=2))
    finally:
        env.close()
    in_goal = totals.mean() / 0.01 / (EPISODE * 4)
    print(
        f"{name:<28} reward per episode {totals.mean():6.3f} (arms {totals.min():.2f} to {totals.max():.2f}), "
        f"hand in the goal {100 * in_goal:4.2f} % of physics steps, "
        f"hand {depth / EPISODE:5.2f} below the shoulder on average"
    )
    speed = np.array(speeds)  # (decisions, arms, segments), at the decisions
    print(
        f"{'':<28} world angular speed, upper segment mean {speed[..., 0].mean():4.2f} max "
        f"{speed[..., 0].max():5.2f} rad/s, lower segment mean {speed[..., 1].mean():4.2f} max "
        f"{speed[..., 1].max():5.2f} rad/s"
    )


def action_influence(seed: int, trials: int = 200, horizon: int = 20) -> None:
    # the arms and the goal stepped directly (no agent resets), as the scene steps them
    rng = np.random.default_rng(seed)
    world = ReacherWorld()
    theta = rng.integers(0, 360, ARMS).astype(np.float64)  # degrees
    speed = rng.uniform(-1.0, 1.0, ARMS)  # degrees per physics step
    every = np.arange(ARMS)

    def decide(actions: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        reward = np.zeros(ARMS)
        torque = np.clip(actions, -1.0, 1.0) * TORQUE
        torques = np.zeros((ARMS, 2, 3))
        torques[:, 0, 0], torques[:, 0, 2] = torque[:, 0], torque[:, 1]
        torques[:, 1, 0], torques[:, 1, 2] = torque[:, 2], torque[:, 3]
        for _ in range(DECISION_INTERVAL):
            theta = theta + speed
            angle = np.radians(theta)
            goal = np.stack([GOAL_RADIUS * np.sin(angle), np.zeros(ARMS), GOAL_RADIUS * np.cos(angle)], 1)
            world.apply_torques(every, torques)
            world.step()
            inside = np.linalg.norm(world.hand_positions() - goal, axis=1) < HAND_RADIUS + 2.5
            reward += STEP_REWARD * inside
        return reward, theta

    def noise() -> np.ndarray:
        return untrained(np.empty(0), rng)

    def restore(qpos: np.ndarray, qvel: np.ndarray) -> None:
        world.data.qpos[:] = qpos
        world.data.qvel[:] = qvel
        world.hang(np.array([], dtype=int))  # recomputes the body frames of the restored state

    for _ in range(300):
        theta = decide(noise(), theta)[1]
    any_reward, changed = [], []
    for _ in range(trials):
        qpos, qvel = world.data.qpos.copy(), world.data.qvel.copy()
        first = noise()
        after = [noise() for _ in range(horizon)]
        totals = []
        for sign in (1.0, -1.0):
            restore(qpos, qvel)
            total, angle = decide(sign * first, theta)
            for actions in after:
                reward, angle = decide(actions, angle)
                total += reward
            totals.append(total)
        any_reward.append(totals[0] > 0)
        changed.append(~np.isclose(totals[0], totals[1]))
        restore(qpos, qvel)
        theta = decide(noise(), theta)[1]
    print(
        f"after 300 noisy decisions: {100 * np.mean(any_reward):.1f} % of the {horizon + 1}-decision stretches "
        f"have any reward; flipping the first action's sign changes the stretch's reward in "
        f"{100 * np.mean(changed):.1f} % ({trials} trials x {ARMS} arms)"
    )


def sb3_curve(episodes: int, seed: int) -> None:
    from stable_baselines3 import PPO  # optional: only this measurement needs it
    from stable_baselines3.common.vec_env import VecNormalize

    venv = _ArmsVecEnv(seed)
    normalized = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=0.995)
    model = PPO(
        "MlpPolicy",
        normalized,
        n_steps=100,
        batch_size=500,
        n_epochs=5,
        gamma=0.995,
        gae_lambda=0.95,
        learning_rate=3e-4,
        policy_kwargs={"net_arch": [128, 128]},
        seed=seed,
        verbose=0,
    )
    start = time.monotonic()
    for block in range(1, episodes + 2):
        model.learn(EPISODE * ARMS, reset_num_timesteps=False)
        finished, venv.finished = venv.finished, []
        mean = f"{np.mean(finished):.3f}" if finished else "-"
        print(
            f"stable-baselines3 PPO: {block * EPISODE} decisions, {time.monotonic() - start:5.0f} s, mean {mean}"
        )
    normalized.close()


class _ArmsVecEnv:
    """The 20 arms of one in-process Reacher as a stable-baselines3 vector environment (built
    lazily so that the module imports without stable-baselines3)."""

    def __new__(cls, seed: int) -> Any:
        import gymnasium as gym
        from stable_baselines3.common.vec_env import VecEnv

        class ArmsVecEnv(VecEnv):  # type: ignore[misc]
            def __init__(self) -> None:
                self.env = LocalEnvironment("Reacher", seed=seed)
                space = gym.spaces.Box(-np.inf, np.inf, (33,), np.float32)
                super().__init__(ARMS, space, gym.spaces.Box(-1.0, 1.0, (4,), np.float32))
                self.returns = np.zeros(ARMS)
                self.finished: list[float] = []
                self.actions = np.zeros((ARMS, 4), dtype=np.float32)

            def reset(self) -> np.ndarray:
                return np.array(self.env.reset()[BRAIN].vector_observations)

            def step_async(self, actions: np.ndarray) -> None:
                self.actions = np.asarray(actions, dtype=np.float32)

            def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
                batch = self.env.step({BRAIN: self.actions})[BRAIN]
                rewards = np.asarray(batch.rewards, dtype=np.float32)
                done = np.asarray(batch.local_done, dtype=bool)
                obs = np.array(batch.vector_observations)
                self.returns += rewards
                infos: list[dict[str, Any]] = [{} for _ in range(ARMS)]
                for i in np.flatnonzero(done):
                    # episodes end only by their step limit: bootstrap from the last observation
                    infos[i] = {"terminal_observation": obs[i], "TimeLimit.truncated": True}
                    self.finished.append(float(self.returns[i]))
                    self.returns[i] = 0.0
                return obs, rewards, done, infos

            def close(self) -> None:
                self.env.close()

            def get_attr(self, name: str, indices: Any = None) -> list[Any]:
                return [None] * ARMS

            def set_attr(self, name: str, value: Any, indices: Any = None) -> None:
                return None

            def env_method(
                self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
            ) -> list[Any]:
                return [None] * ARMS

            def env_is_wrapped(self, wrapper: Any, indices: Any = None) -> list[bool]:
                return [False] * ARMS

        return ArmsVecEnv()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sb3-episodes", type=int, default=0, help="episodes of stable-baselines3 PPO (0: skip)"
    )
    args = parser.parse_args()
    if args.sb3_episodes < 0:
        parser.error(f"--sb3-episodes must be 0 or more, got {args.sb3_episodes}.")
    for name, policy in (
        ("untrained 0.9 policy", untrained),
        ("full-strength random", full_strength),
        ("no action", still),
    ):
        random_policy_figures(name, policy, args.seed)
    action_influence(args.seed)
    if args.sb3_episodes:
        sb3_curve(args.sb3_episodes, args.seed)


if __name__ == "__main__":
    main()
