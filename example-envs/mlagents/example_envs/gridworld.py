"""GridWorld (described in docs/Learning-Environment-Examples.md).

One agent on a g x g board with ``numObstacles`` pits and ``numGoals`` goals. It sees
only an 84 x 84 RGB top-down picture of the board and moves one cell per decision.
No physics: the scene is integer grid logic plus a small numpy rasteriser that draws
what the Unity agent camera shows (unlit material colours; Unity's image is lit by a
directional light, so its colours differ a little).

Cells are (x, z) with integers in [0, g - 1]; the image's right is +x and its top
row is the largest z. Actions (one branch of 5): 0 no-op, 1 up (z + 1), 2 down
(z - 1), 3 left (x - 1), 4 right (x + 1); moves into the border walls are masked.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, CameraResolution, EngineConfiguration, Scene, SceneSpec, one_brain_spec

BRAIN_NAME = "GridWorldLearning"
IMAGE_SIZE = 84
MAX_STEP = 100
STEP_REWARD = -0.01
GOAL_REWARD = 1.0
PIT_REWARD = -1.0
# Decision cadence of GridAgent in inference mode (training mode decides every physics step).
INFERENCE_DECISION_PERIOD_S = 0.15
FIXED_DELTA_TIME = 0.02
RESET_PARAMETERS = {"gridSize": 5.0, "numObstacles": 1.0, "numGoals": 1.0}

NOOP, UP, DOWN, LEFT, RIGHT = range(5)
# (dx, dz) per action
MOVES = np.array([[0, 0], [0, 1], [0, -1], [-1, 0], [1, 0]], dtype=np.int64)

# Unlit albedo colours of the prefabs' materials, RGB 0..255.
AGENT_COLOUR = np.round(np.array([0.110, 0.604, 1.0]) * 255).astype(np.uint8)
GOAL_COLOUR = np.round(np.array([0.506, 0.745, 0.255]) * 255).astype(np.uint8)
PIT_COLOUR = np.round(np.array([0.941, 0.318, 0.235]) * 255).astype(np.uint8)
# Shape dimensions in cell units: bar width of all shapes, half length of the goal/pit bars.
BAR_HALF_WIDTH = 0.1
BAR_HALF_LENGTH = 0.5
AGENT_RING_WIDTH = 0.2
#: Player brain keys (branch 0): the arrows move one cell.
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "up": (0, UP),
    "down": (0, DOWN),
    "left": (0, LEFT),
    "right": (0, RIGHT),
}


class GridRenderer:
    """Draws the agent camera's view of a g x g board into ``IMAGE_SIZE`` square uint8 RGB images.

    The orthographic camera covers x, z in [-0.5, g - 0.5]; each pixel shows what lies
    under its centre. The pixel mask of each shape in each cell is computed once and cached.
    """

    def __init__(self, grid_size: int, image_size: int = IMAGE_SIZE) -> None:
        self.grid_size = grid_size
        self.image_size = image_size
        centres = -0.5 + (np.arange(image_size) + 0.5) * grid_size / image_size
        self._x = centres[None, :]  # per column
        self._z = (grid_size - 1.0 - centres)[:, None]  # per row: row 0 is the top (largest z)
        self._masks: dict[tuple[str, int, int], np.ndarray] = {}
        self._pixels: dict[tuple[str, int, int], np.ndarray] = {}

    def shape_mask(self, shape: str, x: int, z: int) -> np.ndarray:
        """Pixels covered by ``shape`` ("plus", "cross" or "ring") drawn in cell (x, z): bool ``(H, W)``."""
        key = (shape, x, z)
        mask = self._masks.get(key)
        if mask is None:
            dx, dz = self._x - x, self._z - z
            if shape == "plus":
                dx, dz = np.abs(dx), np.abs(dz)
                mask = ((dx < BAR_HALF_LENGTH) & (dz < BAR_HALF_WIDTH)) | (
                    (dx < BAR_HALF_WIDTH) & (dz < BAR_HALF_LENGTH)
                )
            elif shape == "cross":  # the plus turned by 45 degrees
                u, v = np.abs(dx + dz) / np.sqrt(2.0), np.abs(dx - dz) / np.sqrt(2.0)
                mask = ((u < BAR_HALF_LENGTH) & (v < BAR_HALF_WIDTH)) | (
                    (v < BAR_HALF_LENGTH) & (u < BAR_HALF_WIDTH)
                )
            else:  # ring: a hollow square whose outer edge is the cell border
                extent = np.maximum(np.abs(dx), np.abs(dz))
                mask = (extent < 0.5) & (extent >= 0.5 - AGENT_RING_WIDTH)
            self._masks[key] = mask
        return mask

    def _pixel_indices(self, shape: str, x: int, z: int) -> np.ndarray:
        """Flat pixel indices of :meth:`shape_mask` (assigning through them is several times faster)."""
        key = (shape, x, z)
        indices = self._pixels.get(key)
        if indices is None:
            indices = self._pixels[key] = np.flatnonzero(self.shape_mask(shape, x, z))
        return indices

    def draw(self, agent: np.ndarray, goals: np.ndarray, pits: np.ndarray) -> np.ndarray:
        """Image ``(IMAGE_SIZE, IMAGE_SIZE, 3)`` uint8 of a board: goals, then pits, then the agent on top.

        :param agent: agent cell ``(2,)`` int (x, z).
        :param goals: goal cells ``(n, 2)``.
        :param pits: pit cells ``(m, 2)``.
        """
        image = np.zeros((self.image_size, self.image_size, 3), dtype=np.uint8)
        pixels = image.reshape(-1, 3)
        for x, z in goals.tolist():
            pixels[self._pixel_indices("plus", x, z)] = GOAL_COLOUR
        for x, z in pits.tolist():
            pixels[self._pixel_indices("cross", x, z)] = PIT_COLOUR
        pixels[self._pixel_indices("ring", int(agent[0]), int(agent[1]))] = AGENT_COLOUR
        return image


class GridWorld(Scene):
    """GridWorld: brain ``GridWorldLearning``, one on-demand agent, camera-only observation."""

    player_key_table = PLAYER_KEYS

    grid_size: int
    agent_cell: np.ndarray  # (2,) int64 (x, z)
    goal_cells: np.ndarray  # (numGoals, 2)
    pit_cells: np.ndarray  # (numObstacles, 2)

    @classmethod
    def spec(cls) -> SceneSpec:
        camera = CameraResolution(IMAGE_SIZE, IMAGE_SIZE, gray_scale=False)
        return one_brain_spec(
            BrainSpec(BRAIN_NAME, 0, "discrete", (5,), camera_resolutions=(camera,)),
            max_step=MAX_STEP,
            on_demand=True,
            reset_parameters=RESET_PARAMETERS,
            training=EngineConfiguration(84, 84, 0, 20.0, -1),
            academy_name="GridAcademy",
        )

    def initialize(self) -> None:
        # The board size is read once, at start-up (a quirk of the Unity scene): later gridSize
        # changes do not resize the board, the walls, the masks or the camera.
        grid_size = int(self.academy.reset_parameters["gridSize"])
        if grid_size < 1:
            raise ValueError(f"GridWorld needs gridSize >= 1, got {grid_size}.")
        self.grid_size = grid_size
        self.renderer = GridRenderer(grid_size)
        self.agent_cell = np.zeros(2, dtype=np.int64)
        self.goal_cells = np.zeros((0, 2), dtype=np.int64)
        self.pit_cells = np.zeros((0, 2), dtype=np.int64)
        self._time_since_decision = 0.0

    def _build_grid(self) -> None:
        """GridAcademy.AcademyReset: place the pits, goals and the agent on distinct random cells."""
        params = self.academy.reset_parameters
        num_pits, num_goals = int(params["numObstacles"]), int(params["numGoals"])
        cells = self.grid_size * self.grid_size
        if num_pits < 0 or num_goals < 0 or num_pits + num_goals + 1 > cells:
            raise ValueError(
                f"GridWorld cannot place numObstacles={num_pits} pits, numGoals={num_goals} goals and the agent "
                f"on distinct cells of its {self.grid_size}x{self.grid_size} board (the board size is fixed at "
                f"start-up). Use non-negative counts with numObstacles + numGoals <= {cells - 1}."
            )
        drawn: list[int] = []
        while len(drawn) < num_pits + num_goals + 1:
            n = int(self.academy.rng.integers(0, cells))
            if n not in drawn:
                drawn.append(n)
        positions = np.array([[n // self.grid_size, n % self.grid_size] for n in drawn], dtype=np.int64)
        self.pit_cells = positions[:num_pits]
        self.goal_cells = positions[num_pits : num_pits + num_goals]
        self.agent_cell = positions[-1].copy()

    def academy_reset(self) -> None:
        self._build_grid()

    def agent_reset(self, agents: np.ndarray) -> None:
        # GridAgent.AgentReset calls the academy's reset: the board is rebuilt every episode.
        if agents.size:
            self._build_grid()

    def pre_step(self) -> None:
        agent = np.zeros(1, dtype=np.int64)
        if self.academy.is_training:
            self.academy.request_decision(agent)
        elif self._time_since_decision >= INFERENCE_DECISION_PERIOD_S:
            self._time_since_decision = 0.0
            self.academy.request_decision(agent)
        else:
            self._time_since_decision += FIXED_DELTA_TIME

    def action_mask(self) -> np.ndarray:
        """Forbidden actions at the agent's cell: bool ``(5,)``, True = masked (moves into a border wall)."""
        x, z = self.agent_cell
        last = self.grid_size - 1
        mask = np.zeros(5, dtype=bool)
        mask[LEFT] = x == 0
        mask[RIGHT] = x == last
        mask[DOWN] = z == 0
        mask[UP] = z == last
        return mask

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        if agents.size:
            self.academy.set_action_mask(agents, np.tile(self.action_mask(), (agents.size, 1)))
        return np.zeros((agents.size, 0), dtype=np.float32)

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        image = self.renderer.draw(self.agent_cell, self.goal_cells, self.pit_cells)
        return np.repeat(image[None], agents.size, axis=0)

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        images = batch.visual_observations[0]
        return np.array([[shortest_path_action(image, self.grid_size)] for image in images], dtype=np.float32)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        if agents.size == 0:
            return
        self.academy.add_reward(agents, STEP_REWARD)
        action = int(np.floor(actions[0, 0]))
        if not 0 <= action < len(MOVES):
            raise ValueError(f"GridWorld actions are 0..{len(MOVES) - 1}, got {actions[0, 0]}.")
        target = self.agent_cell + MOVES[action]
        if np.any(target < 0) or np.any(target >= self.grid_size):
            return  # a border wall: the agent stays where it is
        self.agent_cell = target
        if _occupied(self.goal_cells, target):
            self.academy.done(agents)
            self.academy.set_reward(agents, GOAL_REWARD)
        if _occupied(self.pit_cells, target):
            self.academy.done(agents)
            self.academy.set_reward(agents, PIT_REWARD)


# ---------------------------------------------------------------- the heuristic reads the picture
Cell = tuple[int, int]


def cells_of_colour(image: np.ndarray, colour: np.ndarray, grid_size: int = 5) -> set[Cell]:
    """Cells (x, z) whose pixels show ``colour`` (image right = +x, top row = largest z)."""
    rows, cols = np.nonzero(np.all(image == colour, axis=-1))
    cell = image.shape[0] / grid_size
    return {(int((c + 0.5) // cell), grid_size - 1 - int((r + 0.5) // cell)) for r, c in zip(rows, cols)}


def read_board(image: np.ndarray, grid_size: int = 5) -> tuple[Cell, set[Cell], set[Cell]]:
    """(agent cell, goal cells, pit cells) drawn in a uint8 observation ``(H, W, 3)``.

    :raises ValueError: the agent is not drawn in exactly one cell.
    """
    agents = cells_of_colour(image, AGENT_COLOUR, grid_size)
    if len(agents) != 1:
        raise ValueError(f"the agent must be drawn in exactly one cell, found {sorted(agents)}")
    return (
        agents.pop(),
        cells_of_colour(image, GOAL_COLOUR, grid_size),
        cells_of_colour(image, PIT_COLOUR, grid_size),
    )


def shortest_path_action(image: np.ndarray, grid_size: int = 5) -> int:
    """The heuristic: first move of a shortest path to a goal that avoids pits (breadth-first
    search on the picture); no-op when no goal can be reached."""
    start, goals, pits = read_board(image, grid_size)
    parents: dict[Cell, tuple[Cell, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell in goals:
            action = NOOP
            step = parents[cell]
            while step is not None:
                cell, action = step
                step = parents[cell]
            return action
        for action in (UP, DOWN, LEFT, RIGHT):
            nxt = (cell[0] + int(MOVES[action, 0]), cell[1] + int(MOVES[action, 1]))
            if 0 <= nxt[0] < grid_size and 0 <= nxt[1] < grid_size and nxt not in pits and nxt not in parents:
                parents[nxt] = (cell, action)
                queue.append(nxt)
    return NOOP


def _occupied(cells: np.ndarray, cell: np.ndarray) -> bool:
    """Whether ``cell`` ``(2,)`` is one of ``cells`` ``(n, 2)``."""
    return (int(cell[0]), int(cell[1])) in map(tuple, cells.tolist())
