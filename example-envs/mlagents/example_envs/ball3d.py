"""3DBall and 3DBallHard (described in docs/Learning-Environment-Examples.md).

Twelve agents, each a platform that tilts about its x and z axes to keep a ball on
top. The scene logic (action rule, reward, reset randomisation, reset parameters)
is vectorized over agents; the dynamics run in :class:`BallPlatformWorld` (MuJoCo).

Observations (Unity frame, float32, no normalisation):
  3DBall (8):     platform quaternion z, x; ball - platform position (3); ball velocity (3)
  3DBallHard (5): platform quaternion z, x; ball - platform position (3); stacked 9 times
Actions: continuous (2,), each clipped to [-1, 1]: 2 degrees per unit about local z, then local x.
"""

from __future__ import annotations

import numpy as np

from .ball3d_physics import BallPlatformWorld, rotate_local
from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec

NUM_AGENTS = 12
MAX_STEP = 5000
DECISION_INTERVAL = 5
DEGREES_PER_ACTION = 2.0
# Rotation stops growing once the quaternion component reaches this (about 28.96 degrees).
ROTATION_LIMIT = 0.25
# Fall conditions, ball relative to platform centre: below -2 in y, beyond 3 in x or z.
FALL_DEPTH = -2.0
FALL_HALF_WIDTH = 3.0
BALANCED_REWARD = 0.1
FALL_REWARD = -1.0
RESET_TILT_DEG = 10.0
RESET_BALL_HALF_SPREAD = 1.5
RESET_BALL_HEIGHT = 4.0
RESET_PARAMETERS = {"mass": 1.0, "gravity": 9.81, "scale": 1.0}
#: Player brain keys: the arrows tilt the platform (index 0 about z, index 1 about x).
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "left": (0, -1.0),
    "right": (0, 1.0),
    "up": (1, 1.0),
    "down": (1, -1.0),
}


def balance(observations: np.ndarray, gain: float = 0.2) -> np.ndarray:
    """The heuristic: a PD controller that tilts toward the ball (lifting the side it is on) in
    proportion to its offset and velocity, and holds the platform level while the ball is still in
    the air (landing on a tilted platform throws it sideways). Works on both brains: 3DBallHard's
    velocity is the difference of its last two stacked frames over one decision (0.1 s).

    :param observations: float ``(k, 8)`` (3DBall) or ``(k, 45)`` (3DBallHard, 9 frames of 5).
    :returns: float32 ``(k, 2)`` in [-1, 1].
    """
    frame = observations[:, -8:] if observations.shape[1] == 8 else observations[:, -5:]
    tilt_z, tilt_x, offset = frame[:, 0], frame[:, 1], frame[:, 2:5]
    if observations.shape[1] == 8:
        velocity = frame[:, 5:8]
    else:
        velocity = (offset - observations[:, -8:-5]) / 0.1  # previous frame: columns -10..-5
    airborne = offset[:, 1] > 0.7
    goal_z = np.where(airborne, 0.0, gain * (offset[:, 0] + velocity[:, 0]))
    goal_x = np.where(airborne, 0.0, -gain * (offset[:, 2] + velocity[:, 2]))
    # One decision turns at most 10 degrees, i.e. ~0.087 in quaternion component.
    return np.clip(np.stack([goal_z - tilt_z, goal_x - tilt_x], axis=1) / 0.0873, -1.0, 1.0).astype(
        np.float32
    )


def _allowed_turn(component: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """The degrees to turn: ``turn`` where the quaternion ``component`` is inside the rotation
    limit in the direction of the turn (``component < limit`` turning up, ``> -limit`` turning
    down), else 0.0. A zero turn gives +0.0, a NaN turn or component 0.0."""
    # sign(turn) * component < limit is both tests at once (the product by +-1 is exact);
    # "+ 0.0" turns a zero turn of either sign into +0.0, what the two tests gave.
    angle = np.where(np.sign(turn) * component < ROTATION_LIMIT, turn, 0.0)
    angle += 0.0
    return angle


class Ball3D(Scene):
    """3DBall: brain ``3DBallLearning``, 12 agents, 8 observations incl. the ball velocity."""

    player_key_table = PLAYER_KEYS

    academy_name = "Ball3DAcademy"
    brain_name = "3DBallLearning"
    observation_size = 8
    stacked_observations = 1
    training_configuration = EngineConfiguration(600, 300, 0, 20.0, 60)
    inference_configuration = EngineConfiguration(1280, 720, 0, 1.0, -1)
    # Ball3DAgent re-reads mass and scale at every agent reset; Ball3DHardAgent only at start-up.
    reads_ball_parameters_on_reset = True

    world: BallPlatformWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(cls.brain_name, cls.observation_size, "continuous", (2,), cls.stacked_observations),
            NUM_AGENTS,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            reset_parameters=RESET_PARAMETERS,
            training=cls.training_configuration,
            inference=cls.inference_configuration,
            academy_name=cls.academy_name,
        )

    def initialize(self) -> None:
        self.world = BallPlatformWorld(NUM_AGENTS)
        self._apply_ball_parameters(np.arange(NUM_AGENTS))

    def _apply_ball_parameters(self, agents: np.ndarray) -> None:
        params = self.academy.reset_parameters
        self.world.set_ball_properties(agents, float(params["mass"]), float(params["scale"]))

    def academy_reset(self) -> None:
        # Ball3DAcademy.AcademyReset: the only place gravity is read.
        self.world.set_gravity(float(self.academy.reset_parameters["gravity"]))

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        # Per agent, in the order AgentReset draws them: tilt x, tilt z, ball x, ball z.
        draws = self.academy.rng.uniform(-1.0, 1.0, size=(agents.size, 4))
        rotations = np.tile([0.0, 0.0, 0.0, 1.0], (agents.size, 1))
        rotations = rotate_local(rotations, 0, RESET_TILT_DEG * draws[:, 0])
        rotations = rotate_local(rotations, 2, RESET_TILT_DEG * draws[:, 1])
        self.world.set_platform_rotations(agents, rotations)
        offsets = np.stack(
            [
                RESET_BALL_HALF_SPREAD * draws[:, 2],
                np.full(agents.size, RESET_BALL_HEIGHT),
                RESET_BALL_HALF_SPREAD * draws[:, 3],
            ],
            axis=1,
        )
        self.world.place_balls(agents, self.world.platform_positions[agents] + offsets)
        if self.reads_ball_parameters_on_reset:
            self._apply_ball_parameters(agents)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        obs = np.empty((agents.size, self.observation_size), dtype=np.float32)
        rotations = self.world.platform_rotations[agents]
        obs[:, 0] = rotations[:, 2]
        obs[:, 1] = rotations[:, 0]
        obs[:, 2:5] = self.world.ball_positions[agents] - self.world.platform_positions[agents]
        if self.observation_size == 8:
            obs[:, 5:8] = self.world.ball_velocities[agents]
        return obs

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        if agents.size == 0:
            return
        world = self.world
        # Every agent acts in every academy step: whole arrays then, no fancy indexing.
        every = agents.size == world.num_areas
        # Clipping in float32 and widening after gives the same float64 values as widening first.
        delta = np.minimum(np.maximum(actions[:, :2], -1.0), 1.0).astype(np.float64)
        delta *= DEGREES_PER_ACTION
        rotations = world.platform_rotations if every else world.platform_rotations[agents]
        # z first, then x; each only while its quaternion component is inside the limit
        # in the direction of the turn (the x test sees the rotation after the z turn).
        for axis, column in ((2, 0), (0, 1)):
            rotations = rotate_local(rotations, axis, _allowed_turn(rotations[:, axis], delta[:, column]))
        world.set_platform_rotations(agents, rotations)

        # Ball3DAgent checks the fall in AgentAction, i.e. on the positions of the last physics step.
        if every:
            relative = world.ball_positions - world.platform_positions
        else:
            relative = world.ball_positions[agents] - world.platform_positions[agents]
        distance = np.abs(relative)
        # fmax ignores a NaN like the separate comparisons did (NaN > 3 is False)
        fallen = (relative[:, 1] < FALL_DEPTH) | (np.fmax(distance[:, 0], distance[:, 2]) > FALL_HALF_WIDTH)
        if np.count_nonzero(fallen):
            self.academy.done(agents[fallen])
        self.academy.set_reward(agents, np.where(fallen, FALL_REWARD, BALANCED_REWARD))

    def physics_step(self) -> None:
        self.world.step()

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return balance(batch.vector_observations)


class Ball3DHard(Ball3D):
    """3DBallHard: brain ``3DBallHardLearning``, 5 observations (no velocity) stacked 9 times;
    ``mass``/``scale`` are applied only at start-up (a quirk of the Unity agent, kept)."""

    academy_name = "Ball3DHardAcademy"
    brain_name = "3DBallHardLearning"
    observation_size = 5
    stacked_observations = 9
    training_configuration = EngineConfiguration(300, 200, 0, 20.0, 60)
    inference_configuration = EngineConfiguration(1280, 720, 5, 1.0, 60)
    reads_ball_parameters_on_reset = False
