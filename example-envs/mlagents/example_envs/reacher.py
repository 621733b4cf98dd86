"""Reacher: a two-segment arm keeps its hand in a goal sphere that circles around it.

Brain ``ReacherLearning``: vector observation 33, continuous action of size 4; 20 agents, a
decision every 4 physics steps, episodes of 4000 physics steps (no other end). Observation, in
Unity's world axes (+y up): for segment A, then segment B: position relative to the agent's root
(3), world rotation quaternion (x, y, z, w) (4), angular velocity (3), velocity of the centre of
mass (3); then the goal's position relative to the root (3), the hand's local position in B's
frame, the constant (0, 1, 0) (3), and the goal's speed (1).

Action (every physics step, the same action for the 4 steps of a decision; each value clipped
to [-1, 1]): torques (150 a0, 0, 150 a1) N m on A and (150 a2, 0, 150 a3) on B, in world axes.
Reward: +0.01 for every physics step that ends with the hand sphere (radius 1) overlapping the
goal sphere (radius goal_size / 2), i.e. at most 0.04 per decision and 40 per episode.

Goal: at angle theta (degrees) it sits at root + (8 sin theta, deviation cos(deviation_freq
theta), 8 cos theta) (angles in radians inside the trigonometric functions); theta grows by the
agent's goal speed (degrees per physics step) before the agent acts in every physics step.
Reset: the arm hangs straight down at rest, theta = a random integer 0..359, goal speed = U(-1,
1) x goal_speed. Reset parameters: goal_size 5, goal_speed 1, deviation 0, deviation_freq 0 (read
at agent reset), gravity 9.81 (read at academy reset).

Physics on MuJoCo, all 20 arms in one model (Unity (x, y, z) is MuJoCo (x, z, y)), one MuJoCo
step per 0.02 s physics step. Each root is a fixed sphere (radius 0.5). Segment A is a capsule
(radius 0.5, 6 long) hanging from a joint at the root's centre, 1.02 above its top end; segment B
is the same capsule hanging from A's lower end, carrying the solid hand sphere (radius 1) at its
far end; both weigh 1 (B's mass spread over capsule and hand by volume, which moves its centre of
mass 1.46 below its middle). Each joint is the original's ConfigurableJoint with the angular X
axis (world x at rest) free, Y (the segment's long axis at rest) locked and Z (world z at rest)
free: in PhysX's swing-twist terms a twist about x followed by a swing about z only, i.e. exactly
two hinges, the outer about z, the inner about x. Angular drag (0.05) and Unity's default maximum
angular velocity (7 rad/s) act as in PhysX: on each segment's own world angular velocity (plus
the applied torque's change) before the joints are solved; the joints then spread the change
over the arm (see :meth:`ReacherWorld._drag_and_cap_impulses`).

:func:`reacher_heuristic` is a scripted decision from the observations (a spring-damper force
on the hand toward the goal and a pull of the elbow toward an inverse-kinematics pose, turned
into the two segments' torques, plus gravity compensation).
"""

from __future__ import annotations

import mujoco
import numpy as np

from .ball3d_physics import quaternion_multiply
from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec
from .vector3 import to_mujoco, to_unity

BRAIN = "ReacherLearning"
#: Player brain keys: Q/A, W/S, E/D, R/F push the four torques (indices 0..3) up/down.
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "q": (0, 1.0),
    "a": (0, -1.0),
    "w": (1, 1.0),
    "s": (1, -1.0),
    "e": (2, 1.0),
    "d": (2, -1.0),
    "r": (3, 1.0),
    "f": (3, -1.0),
}
NUM_AGENTS = 20
OBSERVATION_SIZE = 33
MAX_STEP = 4000
DECISION_INTERVAL = 4
TIMESTEP = 0.02
TORQUE = 150.0
STEP_REWARD = 0.01
GOAL_RADIUS = 8.0
HAND_RADIUS = 1.0
MAX_ANGULAR_SPEED = 7.0
ANGULAR_DRAG = 0.05
SEGMENT_MASS = 1.0
SEGMENT_RADIUS = 0.5
SEGMENT_LENGTH = 6.0
PIVOT_HEIGHT = 0.02  # the shoulder joint sits at the root sphere's centre
A_CENTER = -4.0  # segment centres below the root at rest
B_CENTER = -10.0
HAND_CENTER = -13.0
RESET_PARAMETERS = {
    "goal_size": 5.0,
    "goal_speed": 1.0,
    "gravity": 9.81,
    "deviation": 0.0,
    "deviation_freq": 0.0,
}
ROOT_X = (-40.0, -20.0, 0.0, 20.0, 40.0)
ROOT_Z = (0.0, 20.0, 41.1, 61.1)
# Unity rotation of both segments at rest: 180 degrees about x (local up points down)
REST_ROTATION = np.array([1.0, 0.0, 0.0, 0.0])
HAND_LOCAL = np.array([0.0, 1.0, 0.0], dtype=np.float32)


def root_positions() -> np.ndarray:
    """Agent roots (Unity axes) ``(20, 3)`` in scene order."""
    return np.array([[x, 0.0, z] for z in ROOT_Z for x in ROOT_X])


def _volumes() -> tuple[float, float]:
    cylinder = np.pi * SEGMENT_RADIUS**2 * (SEGMENT_LENGTH - 2 * SEGMENT_RADIUS)
    capsule = cylinder + 4.0 / 3.0 * np.pi * SEGMENT_RADIUS**3
    return capsule, 4.0 / 3.0 * np.pi * HAND_RADIUS**3


def _model_xml() -> str:
    capsule, hand = _volumes()
    capsule_mass = SEGMENT_MASS * capsule / (capsule + hand)
    half = SEGMENT_LENGTH / 2 - SEGMENT_RADIUS
    # swing about world z, then twist about world x (MuJoCo y and x): PhysX's swing-twist
    # composition with the swing about the long axis locked
    hinges = (
        '<joint type="hinge" axis="0 1 0" pos="0 0 {z}"/><joint type="hinge" axis="1 0 0" pos="0 0 {z}"/>'
    )
    parts = []
    for i, (x, _, z) in enumerate(root_positions()):
        # MuJoCo axes: Unity (x, y, z) -> (x, z, y); body frames sit at the segments' centres
        parts.append(
            f'<geom name="root{i}" type="sphere" size="0.5" pos="{x} {z} 0"/>'
            f'<body name="a{i}" pos="{x} {z} {A_CENTER}">'
            + hinges.format(z=PIVOT_HEIGHT - A_CENTER)
            + f'<geom type="capsule" size="{SEGMENT_RADIUS} {half}" mass="{SEGMENT_MASS}"/>'
            f'<body name="b{i}" pos="0 0 {B_CENTER - A_CENTER}">'
            + hinges.format(z=SEGMENT_LENGTH / 2)
            + f'<geom type="capsule" size="{SEGMENT_RADIUS} {half}" mass="{capsule_mass}"/>'
            f'<geom name="hand{i}" type="sphere" size="{HAND_RADIUS}" pos="0 0 {HAND_CENTER - B_CENTER}" '
            f'mass="{SEGMENT_MASS - capsule_mass}"/>'
            "</body></body>"
        )
    return (
        '<mujoco model="Reacher">'
        f'<option timestep="{TIMESTEP}" gravity="0 0 -9.81"/>'
        '<default><geom friction="0.6 0.005 0.0001"/></default>'
        f"<worldbody>{''.join(parts)}</worldbody></mujoco>"
    )


class ReacherWorld:
    """The 20 arms. Segment arrays are ``(20, 2, ...)`` (A, B), Unity axes, relative to the roots."""

    def __init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(_model_xml())
        self.data = mujoco.MjData(self.model)
        self.roots = root_positions()
        n = NUM_AGENTS
        self.bodies = np.array(
            [
                [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"{s}{i}") for s in "ab"]
                for i in range(n)
            ]
        )
        # per agent: A's hinges (swing, twist), then B's
        self._qpos = self.data.qpos.reshape(n, 2, 2)
        self._qvel = self.data.qvel.reshape(n, 2, 2)
        self._tree_roots = self.model.body_rootid[self.bodies]
        self._decay = 1.0 - ANGULAR_DRAG * TIMESTEP
        self._update_frames()

    # ---- state (Unity axes) ----
    def positions(self) -> np.ndarray:
        """Segment centres (transform positions) relative to the roots ``(20, 2, 3)``."""
        return to_unity(self.data.xpos[self.bodies]) - self.roots[:, None, :]

    def rotations(self) -> np.ndarray:
        """Segment world rotations as Unity quaternions (x, y, z, w) ``(20, 2, 4)``."""
        q = self.data.xquat[self.bodies].reshape(-1, 4)  # MuJoCo (w, x, y, z), identity at rest
        unity = np.stack([-q[:, 1], -q[:, 3], -q[:, 2], q[:, 0]], 1)
        rest = np.broadcast_to(REST_ROTATION, unity.shape)
        return quaternion_multiply(unity, rest).reshape(NUM_AGENTS, 2, 4)

    def _spatial_velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """World angular velocity and linear velocity of the centre of mass, MuJoCo axes."""
        cvel = self.data.cvel[self.bodies]  # (rotation, translation) at the tree's centre of mass
        omega = cvel[..., :3]
        offset = self.data.xipos[self.bodies] - self.data.subtree_com[self._tree_roots]
        return omega, cvel[..., 3:] + np.cross(omega, offset)

    def angular_velocities(self) -> np.ndarray:
        """``(20, 2, 3)`` rad/s, Unity axes (a pseudo-vector: the axis swap also flips its sign)."""
        return -to_unity(self._spatial_velocities()[0])

    def velocities(self) -> np.ndarray:
        """Velocities of the segments' centres of mass ``(20, 2, 3)``, m/s."""
        return to_unity(self._spatial_velocities()[1])

    def hand_positions(self) -> np.ndarray:
        """Hand sphere centres relative to the roots ``(20, 3)``."""
        hand = (
            self.data.xpos[self.bodies[:, 1]]
            + (HAND_CENTER - B_CENTER) * self.data.xmat[self.bodies[:, 1]][:, 2::3]
        )
        return to_unity(hand) - self.roots

    # ---- changes ----
    def set_gravity(self, gravity: float) -> None:
        self.model.opt.gravity[:] = (0.0, 0.0, -gravity)

    def hang(self, agents: np.ndarray) -> None:
        """Both segments of ``agents`` straight down, at rest."""
        self._qpos[agents] = 0.0
        self._qvel[agents] = 0.0
        self._update_frames()

    def _update_frames(self) -> None:
        """Body poses and velocities of the current qpos/qvel (mj_step leaves those of the state
        before its integration)."""
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        mujoco.mj_comVel(self.model, self.data)

    def apply_torques(self, agents: np.ndarray, torques: np.ndarray) -> None:
        """World torques (Unity axes) ``(k, 2, 3)`` on the segments of ``agents`` for the next step."""
        self.data.xfrc_applied[self.bodies[agents], 3:] = -to_mujoco(torques)

    def step(self) -> None:
        """One 0.02 s step with PhysX's angular drag and 7 rad/s cap on each segment."""
        self.data.qfrc_applied[:] = self._drag_and_cap_impulses() / TIMESTEP
        mujoco.mj_step(self.model, self.data)
        self.data.xfrc_applied[:] = 0.0
        self._update_frames()

    def world_inertias(self) -> np.ndarray:
        """Inertia tensors of the segments about their centres of mass, world axes (MuJoCo's)
        ``(20, 2, 3, 3)``."""
        rotation = self.data.ximat[self.bodies].reshape(NUM_AGENTS, 2, 3, 3)
        principal = self.model.body_inertia[self.bodies]
        return np.einsum("nbij,nbj,nbkj->nbik", rotation, principal, rotation)

    def _drag_and_cap_impulses(self) -> np.ndarray:
        """Joint impulses ``(80,)`` that give this step PhysX's drag and cap.

        PhysX works on each body alone before its joint solver: the body's world angular
        velocity plus the applied torque's change (its unconstrained velocity) is scaled by
        1 - angular drag x dt and then clamped to the maximum angular speed; the linear velocity
        keeps its value. The joint solver then makes the bodies' velocities agree with the
        joints again, which spreads each body's change over the arm in proportion to the
        inertias (a projection in the mass metric). In joint coordinates that projection of a
        change of angular momentum h_i on body i is the generalised impulse sum_i J_i^T h_i (J_i:
        the world axes of the hinges that turn body i), which the step adds as a generalised
        force. So a spinning segment loses only its spin about its own centre of mass, and its
        world angular speed may stay above the cap for a few steps."""
        inertia = self.world_inertias()
        omega = self.data.cvel[self.bodies, :3]  # world angular velocities, MuJoCo axes
        torque = self.data.xfrc_applied[self.bodies, 3:]
        free = omega + np.linalg.solve(inertia, torque[..., None])[..., 0] * TIMESTEP
        damped = free * self._decay
        speed = np.linalg.norm(damped, axis=2, keepdims=True)
        capped = damped * np.minimum(1.0, MAX_ANGULAR_SPEED / np.maximum(speed, 1e-12))
        momentum = np.einsum("nbij,nbj->nbi", inertia, capped - free)
        # per agent A's hinges (swing, twist), then B's: A's turn both segments, B's turn B only
        axes = self.data.xaxis.reshape(NUM_AGENTS, 2, 2, 3)
        on_a = np.einsum("njk,nk->nj", axes[:, 0], momentum[:, 0] + momentum[:, 1])
        on_b = np.einsum("njk,nk->nj", axes[:, 1], momentum[:, 1])
        return np.stack([on_a, on_b], 1).reshape(-1)


class Reacher(Scene):
    """Reacher: brain ``ReacherLearning``, 20 agents, 33 observations, continuous 4."""

    player_key_table = PLAYER_KEYS

    world: ReacherWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(BRAIN, OBSERVATION_SIZE, "continuous", (4,)),
            NUM_AGENTS,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            reset_parameters=RESET_PARAMETERS,
            training=EngineConfiguration(80, 80, 0, 100.0, 60),
        )

    def initialize(self) -> None:
        self.world = ReacherWorld()
        n = NUM_AGENTS
        self.theta = np.zeros(n)  # degrees
        self.goal_speed = np.zeros(n)  # degrees per physics step
        self.deviation = np.zeros(n)
        self.deviation_freq = np.zeros(n)
        self.goal_size = np.zeros(n)
        self._read_parameters(np.arange(n))
        self.goal = self._goal_positions()

    def _read_parameters(self, agents: np.ndarray) -> None:
        params = self.academy.reset_parameters
        size = float(params["goal_size"])
        if not size > 0.0:
            raise ValueError(f"Reacher reset parameter goal_size must be positive, got {size}.")
        self.goal_size[agents] = size
        self.deviation[agents] = float(params["deviation"])
        self.deviation_freq[agents] = float(params["deviation_freq"])

    def _goal_positions(self) -> np.ndarray:
        theta = np.radians(self.theta)
        return np.stack(
            [
                GOAL_RADIUS * np.sin(theta),
                self.deviation * np.cos(self.deviation_freq * theta),
                GOAL_RADIUS * np.cos(theta),
            ],
            1,
        )

    def academy_reset(self) -> None:
        self.world.set_gravity(float(self.academy.reset_parameters["gravity"]))

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        rng = self.academy.rng
        self.world.hang(agents)
        self.theta[agents] = rng.integers(0, 360, size=agents.size)
        self.goal_speed[agents] = rng.uniform(-1.0, 1.0, size=agents.size) * float(
            self.academy.reset_parameters["goal_speed"]
        )
        self._read_parameters(agents)
        self.goal = self._goal_positions()

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        w = self.world
        segments = np.concatenate(
            [w.positions(), w.rotations(), w.angular_velocities(), w.velocities()], axis=2
        )  # (20, 2, 13)
        obs = np.empty((NUM_AGENTS, OBSERVATION_SIZE), dtype=np.float32)
        obs[:, :26] = segments.reshape(NUM_AGENTS, 26)
        obs[:, 26:29] = self.goal
        obs[:, 29:32] = HAND_LOCAL
        obs[:, 32] = self.goal_speed
        return obs[agents]

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return reacher_heuristic(batch.vector_observations)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        # the goal moves first (ReacherGoal's update comes from the agent's action)
        self.theta[agents] += self.goal_speed[agents]
        self.goal = self._goal_positions()
        a = np.clip(actions.astype(np.float64), -1.0, 1.0) * TORQUE
        torques = np.zeros((agents.size, 2, 3))
        torques[:, 0, 0], torques[:, 0, 2] = a[:, 0], a[:, 1]
        torques[:, 1, 0], torques[:, 1, 2] = a[:, 2], a[:, 3]
        self.world.apply_torques(agents, torques)

    def physics_step(self) -> None:
        self.world.step()
        distance = np.linalg.norm(self.world.hand_positions() - self.goal, axis=1)
        inside = np.flatnonzero(distance < HAND_RADIUS + 0.5 * self.goal_size)
        if inside.size:
            self.academy.add_reward(inside, STEP_REWARD)


# ---------------------------------------------------------------- scripted decision
_DAMPING = 25.0  # N per m/s of the hand's velocity (relative to the goal's)
_ELBOW_DAMPING = 20.0  # N m per rad/s of B's turning relative to A
_GAIN = 40.0  # N per metre from the hand to the goal
_ELBOW_GAIN = 80.0  # N per metre from the elbow to its inverse-kinematics position
_GRAVITY = 9.81
_UP = np.array([0.0, 1.0, 0.0])
_PIVOT = np.array([0.0, PIVOT_HEIGHT, 0.0])
_SHOULDER_TO_ELBOW = PIVOT_HEIGHT - (A_CENTER - SEGMENT_LENGTH / 2)  # 7.02


def _elbow_target(goal: np.ndarray) -> np.ndarray:
    """Elbow position ``(k, 3)`` that puts the hand on ``goal``, in the vertical plane through the
    goal, below the shoulder-goal line (two-link inverse kinematics)."""
    l1, l2 = _SHOULDER_TO_ELBOW, (A_CENTER - SEGMENT_LENGTH / 2) - HAND_CENTER  # 7.02, 6
    to_goal = goal - _PIVOT
    flat = to_goal * [1.0, 0.0, 1.0]
    r = np.linalg.norm(flat, axis=1)
    horizontal = flat / np.maximum(r, 1e-9)[:, None]
    distance = np.clip(np.hypot(r, to_goal[:, 1]), abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6)
    angle = np.arctan2(to_goal[:, 1], r) - np.arccos(
        np.clip((distance**2 + l1**2 - l2**2) / (2.0 * distance * l1), -1.0, 1.0)
    )
    return _PIVOT + l1 * (horizontal * np.cos(angle)[:, None] + _UP * np.sin(angle)[:, None])


def reacher_heuristic(observations: np.ndarray, gravity: float = _GRAVITY) -> np.ndarray:
    """Scripted decision from observations ``(k, 33)``: pull the hand toward the goal with a
    spring-damper force F, realised as torques on the segments (a torque on B also turns the
    whole arm about the shoulder, so F needs (hand - elbow) x F on B and (elbow - shoulder) x F
    on A), damping of the elbow, a pull of the elbow toward the inverse-kinematics pose with the
    elbow below the shoulder-goal line (the arm's redundant freedom; without it B tends to fold
    over and whip around), and the torques that hold both segments up against gravity. The
    damping follows the goal's own motion around the circle. The joint positions
    follow from the segment centres (shoulder, centre of A and elbow lie on one line). Returns
    float32 actions ``(k, 4)`` (the actions have no vertical torque: that part is dropped)."""
    obs = np.asarray(observations, dtype=np.float64)
    centre_a, centre_b = obs[:, 0:3], obs[:, 13:16]
    omega_a, omega_b, velocity_b = obs[:, 7:10], obs[:, 20:23], obs[:, 23:26]
    goal = obs[:, 26:29]
    shoulder_to_a = centre_a - _PIVOT
    elbow = _PIVOT + shoulder_to_a * _SHOULDER_TO_ELBOW / np.linalg.norm(shoulder_to_a, axis=1, keepdims=True)
    hand = centre_b + (centre_b - elbow)
    capsule, hand_volume = _volumes()
    com_b = centre_b + (hand - centre_b) * hand_volume / (capsule + hand_volume)
    hand_velocity = velocity_b + np.cross(omega_b, hand - com_b)
    # the goal circles the vertical through the root at goal_speed degrees per physics step
    turn_rate = np.radians(obs[:, 32]) / TIMESTEP
    goal_velocity = np.stack([goal[:, 2], np.zeros(len(goal)), -goal[:, 0]], 1) * turn_rate[:, None]
    force = _GAIN * (goal - hand) + _DAMPING * (goal_velocity - hand_velocity)
    lift = SEGMENT_MASS * gravity * _UP
    # the arm's redundant freedom: draw the elbow toward the pose of the inverse kinematics with the
    # elbow below the shoulder-goal line (keeps B away from folding over)
    elbow_force = _ELBOW_GAIN * (_elbow_target(goal) - elbow)
    torque_a = np.cross(elbow - _PIVOT, force + lift + elbow_force) + np.cross(centre_a - _PIVOT, lift)
    # damping of the elbow alone (equal and opposite on the two segments) keeps B from whipping
    elbow_damping = -_ELBOW_DAMPING * (omega_b - omega_a)
    torque_a = torque_a - elbow_damping
    torque_b = np.cross(hand - elbow, force) + np.cross(com_b - elbow, lift) + elbow_damping
    actions = np.stack([torque_a[:, 0], torque_a[:, 2], torque_b[:, 0], torque_b[:, 2]], 1) / TORQUE
    return np.clip(actions, -1.0, 1.0).astype(np.float32)
