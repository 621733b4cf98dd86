"""Tennis: two rackets per court hit a ball back and forth over the net.

Brain ``TennisLearning`` (both players): vector observation 8, stacked 3 times; continuous
action of size 2. 18 courts, 36 agents (player A on the left, then player B on the right, court
by court). Every observation is mirrored for player B (m = -1), so that each player sees
itself on the left: m (racket x), racket y, m (racket vx), racket vy, m (ball x), ball y,
m (ball vx), ball vy, relative to the court's origin.

Action (every physics step): a0 and a1 clipped to [-1, 1]; when a1 > 0.5 and the racket is low
(y < -1.5) it jumps (vy := 7); then the racket's velocity is set to (30 m a0, vy); A cannot pass
x = -1 and B cannot pass x = +1 (teleported back).

Rewards: +0.1 to the last hitter when the ball leaves the zone above the net (the last hitter is
then set to A, as the original does); when the ball touches a court box the point ends: the
faulting player gets -0.01 and the other's reward since its last decision is wiped (SetReward 0);
after a wall or the net the last hitter is at fault (B when nobody hit), after the floor of a
side that side's player. Both players are then done and the ball is served again from 6 above a
random side. Agent max step 5000, decision every 5; the academy resets everything every 25000
steps. Reset parameters: ``gravity`` 9.81 (read at academy reset), ``angle`` 55 (racket tilt,
degrees) and ``scale`` 1 (ball size; a serve puts it back to 1), read at agent reset.

:func:`tennis_heuristic` is a scripted decision from the observations.
"""

from __future__ import annotations

import numpy as np

from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec
from .tennis_physics import FLOOR_A, FLOOR_B, TennisWorld

BRAIN = "TennisLearning"
#: Player brain keys: A/D move away from / toward the net (index 0), W jumps (index 1).
PLAYER_KEYS: dict[str, tuple[int, float]] = {"a": (0, -1.0), "d": (0, 1.0), "w": (1, 1.0)}
NUM_AREAS = 18
NUM_AGENTS = 2 * NUM_AREAS
OBSERVATION_SIZE = 8
STACKED = 3
MAX_STEP = 5000
DECISION_INTERVAL = 5
ACADEMY_MAX_STEPS = 25000
RUN_SPEED = 30.0
JUMP_SPEED = 7.0
JUMP_BELOW = -1.5
NET_CLEARANCE = 1.0  # A stays at x <= -1, B at x >= +1
OVER_REWARD = 0.1
FAULT_REWARD = -0.01
SERVE_HEIGHT = 6.0
START_HEIGHT = -1.5
DISTANCE_RANGE = (6.0, 8.0)  # serve and start distance from the net
RESET_PARAMETERS = {"gravity": 9.81, "angle": 55.0, "scale": 1.0}


class Tennis(Scene):
    """Tennis: brain ``TennisLearning``, 36 agents (A, B per court), 8 x 3 observations, continuous 2."""

    player_key_table = PLAYER_KEYS

    world: TennisWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(BRAIN, OBSERVATION_SIZE, "continuous", (2,), STACKED),
            NUM_AGENTS,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            reset_parameters=RESET_PARAMETERS,
            academy_max_steps=ACADEMY_MAX_STEPS,
            training=EngineConfiguration(300, 200, 0, 100.0, 60),
        )

    def initialize(self) -> None:
        self.world = TennisWorld(NUM_AREAS)
        self.areas = np.arange(NUM_AREAS)
        self.mirror = np.tile([1.0, -1.0], NUM_AREAS)  # per agent
        self.last_hitter = np.full(NUM_AREAS, -1)  # 0 = A, 1 = B, -1 = nobody since the serve
        self._serve(self.areas)  # the courts' Start

    def _serve(self, areas: np.ndarray) -> None:
        rng = self.academy.rng
        distance = rng.uniform(*DISTANCE_RANGE, size=areas.size)
        side = rng.integers(0, 2, size=areas.size)
        x = np.where(side == 0, -distance, distance)
        self.world.serve(areas, np.stack([x, np.full(areas.size, SERVE_HEIGHT)], 1))
        self.last_hitter[areas] = -1

    def academy_reset(self) -> None:
        self.world.set_gravity(float(self.academy.reset_parameters["gravity"]))

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        params = self.academy.reset_parameters
        angle, scale = float(params["angle"]), float(params["scale"])
        distance = self.academy.rng.uniform(*DISTANCE_RANGE, size=agents.size)
        areas, sides = agents // 2, agents % 2
        for side in (0, 1):
            chosen = sides == side
            if not chosen.any():
                continue
            m = 1.0 if side == 0 else -1.0
            positions = np.stack([-m * distance[chosen], np.full(int(chosen.sum()), START_HEIGHT)], 1)
            self.world.place_rackets(areas[chosen], side, positions)
            self.world.set_racket_angles(areas[chosen], angle, sides=(side,))
        self.world.set_ball_scale(np.unique(areas), scale)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        areas, sides = agents // 2, agents % 2
        m = self.mirror[agents]
        racket = self.world.racket_positions[areas, sides]
        racket_v = self.world.racket_velocities[areas, sides]
        ball, ball_v = self.world.ball_positions[areas], self.world.ball_velocities[areas]
        obs = np.stack(
            [
                m * racket[:, 0],
                racket[:, 1],
                m * racket_v[:, 0],
                racket_v[:, 1],
                m * ball[:, 0],
                ball[:, 1],
                m * ball_v[:, 0],
                ball_v[:, 1],
            ],
            1,
        )
        return obs.astype(np.float32)

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return tennis_heuristic(batch.vector_observations)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        a = np.clip(actions.astype(np.float64), -1.0, 1.0)
        areas, sides = agents // 2, agents % 2
        w = self.world
        position = w.racket_positions[areas, sides]
        vy = w.racket_velocities[areas, sides, 1]
        vy = np.where((a[:, 1] > 0.5) & (position[:, 1] < JUMP_BELOW), JUMP_SPEED, vy)
        velocity = np.stack([RUN_SPEED * self.mirror[agents] * a[:, 0], vy], 1)
        for side, limit in ((0, -NET_CLEARANCE), (1, NET_CLEARANCE)):
            chosen = sides == side
            if chosen.any():
                w.set_racket_velocities(areas[chosen], side, velocity[chosen])
                w.clamp_racket_x(areas[chosen], side, limit)

    def physics_step(self) -> None:
        hit, fault, left_over = self.world.step()
        # the ball's callbacks: racket touched, left the zone above the net, touched a court box
        if hit.any():
            for side in (0, 1):
                self.last_hitter[hit[:, side]] = side
        if left_over.any():
            areas = np.flatnonzero(left_over)
            scorer = np.where(self.last_hitter[areas] == 0, 0, 1)
            self.academy.add_reward(2 * areas + scorer, OVER_REWARD)
            self.last_hitter[areas] = 0
        ended = np.flatnonzero(fault >= 0)
        if ended.size:
            surface = fault[ended]
            at_fault = np.where(
                surface == FLOOR_A,
                0,
                np.where(surface == FLOOR_B, 1, np.where(self.last_hitter[ended] == 0, 0, 1)),
            )
            self.academy.add_reward(2 * ended + at_fault, FAULT_REWARD)
            self.academy.set_reward(2 * ended + (1 - at_fault), 0.0)
            self.academy.done(np.concatenate([2 * ended, 2 * ended + 1]))
            self._serve(ended)


# ---------------------------------------------------------------- scripted decision
_ANGLE = np.radians(RESET_PARAMETERS["angle"])
_NORMAL = np.array([np.cos(_ANGLE), np.sin(_ANGLE)])  # the hitting face's normal (own frame)
_REST_Y = -1.852  # racket origin height standing on the court (default angle)
_FACE = np.array([0.029, 0.041])  # the hitting face's centre from the racket origin
_CONTACT = _FACE + 0.5 * _NORMAL  # the ball's centre when it meets the face's centre
_HOME_X = -6.0
_LANDING_X = 6.0  # aim: the ball comes down this far behind the net on the other side
_PHYSICS_DT = 0.02
_HORIZON = 150  # physics steps of ball prediction


def _predict_contacts(
    ball: np.ndarray, velocity: np.ndarray, gravity: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step the balls ``(k, 2)`` ballistically (velocity clamp +-9, semi-implicit Euler like the
    simulation) until each comes down, on our side, to the height where it meets a standing
    racket's face. Returns steps ahead ``(k,)`` (-1 when not within the horizon), and the
    position and velocity ``(k, 2)`` there."""
    p, v = ball.copy(), velocity.copy()
    steps = np.full(len(p), -1)
    at_p, at_v = p.copy(), v.copy()
    target_y = _REST_Y + _CONTACT[1]
    for k in range(1, _HORIZON):
        np.clip(v, -9.0, 9.0, out=v)
        v[:, 1] -= gravity * _PHYSICS_DT
        p += v * _PHYSICS_DT
        now = (steps < 0) & (v[:, 1] < 0.0) & (p[:, 1] <= target_y) & (p[:, 0] < -0.5)
        if now.any():
            steps[now] = k
            at_p[now], at_v[now] = p[now], v[now]
            if (steps > 0).all():
                break
    return steps, at_p, at_v


_SPEEDS = np.linspace(-10.0, 20.0, 121)  # racket speeds (m/s) the heuristic considers for a hit
_NET_CLEARANCE = -1.0 + 0.5 + 0.3  # ball centre height that clears the net top with a margin


def _best_hit_speeds(p: np.ndarray, v: np.ndarray, gravity: float) -> np.ndarray:
    """For balls meeting a standing racket's face at ``p`` with velocity ``v`` ``(k, 2)``: the
    racket speed along x (from ``_SPEEDS``) whose elastic rebound clears the net and comes down
    to the other side's hitting height closest to ``_LANDING_X``. ``(k,)``; 0 when none does.
    The flight after the rebound is a parabola from the clamped (+-9) rebound velocity."""
    relative = v[:, None, :] - np.stack([_SPEEDS, np.zeros_like(_SPEEDS)], 1)[None]
    vn = relative @ _NORMAL
    bounce = np.where(vn < 0.0, -2.0 * vn, 0.0)
    out = np.clip(v[:, None, :] + bounce[..., None] * _NORMAL, -9.0, 9.0)
    vx, vy = out[..., 0], out[..., 1]
    px, py = p[:, None, 0], p[:, None, 1]
    forward = vx > 0.5
    t_net = -px / np.where(forward, vx, 1.0)
    y_net = np.where(forward, py + vy * t_net - 0.5 * gravity * t_net**2, -np.inf)
    t_land = (vy + np.sqrt(vy**2 + 2.0 * gravity * np.maximum(py - (_REST_Y + _CONTACT[1]), 0.0))) / gravity
    landing = px + vx * t_land
    valid = forward & (y_net > _NET_CLEARANCE) & (landing > 1.5) & (landing < 11.0)
    error = np.where(valid, np.abs(landing - _LANDING_X), np.inf)
    best = np.argmin(error, axis=1)
    return np.where(np.isfinite(error[np.arange(len(p)), best]), _SPEEDS[best], 0.0)


def tennis_heuristic(observations: np.ndarray, gravity: float = 9.81) -> np.ndarray:
    """Scripted decision from stacked observations ``(k, 24)`` (newest frame last), one row per
    player (each sees itself on the left). The racket stays on the court and meets the ball with
    the middle of its tilted face where the ball comes down, moving along x at the speed whose
    elastic rebound (predicted) clears the net and comes down about 6 behind it. Returns float32
    actions ``(k, 2)`` (no jumps)."""
    frame = np.asarray(observations, dtype=np.float64)[:, -OBSERVATION_SIZE:]
    x = frame[:, 0]
    steps, p, v = _predict_contacts(frame[:, 4:6], frame[:, 6:8], gravity)
    speed = np.zeros(len(frame))
    hitting = steps > 0
    if hitting.any():
        speed[hitting] = _best_hit_speeds(p[hitting], v[hitting], gravity)
    # the contact falls into the decision interval starting (steps - 1) // N decisions from now;
    # be where moving at ``speed`` for the steps before it within that interval reaches the ball
    within = (steps - 1) % DECISION_INTERVAL + 1
    target = np.where(hitting, p[:, 0] - _CONTACT[0] - speed * _PHYSICS_DT * within, _HOME_X)
    approach = (target - x) / (RUN_SPEED * _PHYSICS_DT * DECISION_INTERVAL)
    a0 = np.where(hitting & (steps <= DECISION_INTERVAL), speed / RUN_SPEED, approach)
    return np.stack([np.clip(a0, -1.0, 1.0), np.zeros(len(frame))], 1).astype(np.float32)
