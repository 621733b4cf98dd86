"""VisualHallway: Hallway seen through the agent's camera instead of rays.

One hall and one agent (the Unity scene has eight halls, seven of them switched off) on brain
``VisualHallwayLearning``: no vector observation, one 84 x 84 colour camera, discrete [5] as in
Hallway; the same physics, rewards, reset and episode rules (``hallway``). The 0.9.3 brain asset
of this scene is a stale placeholder; the brain here is the one the scene was built with (84 x 84
RGB camera, no vector observation, five actions).

The camera rides on the agent 0.5 above its top, looking ahead, vertical field of view 60
degrees, near 0.1, far 5000, background (0.504, 0.600, 0.647). It sees the white floor (green for
0.5 s after the right goal, red after the wrong one, also into the next episode), grey walls, the
orange or the red block, and the two goals. Deviation: each goal is drawn as a checker board of
its colour (orange or red) and white; in Unity the goals are white checker boxes with a thin plate
of their colour along the back edge.
"""

from __future__ import annotations

import numpy as np

from .agent_view import FAILURE_RED, SUCCESS_GREEN, CameraOnly, Flash, ViewModel, centred_box
from .hallway import BLOCK_HALF, GOAL_HALF, GROUND, NOSE_CENTER, NOSE_HALF, WALLS, Hallway

ORANGE: tuple[float, float, float] = (0.85, 0.54, 0.0)
RED: tuple[float, float, float] = (0.76, 0.13, 0.20)
CLEAR_COLOUR = (0.504, 0.600, 0.647)


class VisualHallway(CameraOnly, Hallway):
    """VisualHallway: brain ``VisualHallwayLearning``, one agent, one 84 x 84 RGB camera."""

    brain_name = "VisualHallwayLearning"
    num_agents = 1

    def initialize(self) -> None:
        super().initialize()
        n = self.num_agents
        #: each hall's floor look: 0 white, 1 green (right goal), 2 red (wrong goal)
        self.floor_flash = Flash(n)
        view = ViewModel("VisualHallway", CLEAR_COLOUR, fovy=60.0, znear=0.1, zfar=5000.0)
        view.add_arenas(
            self.origins,
            GROUND,
            WALLS,
            flashes=(("floor_right", SUCCESS_GREEN), ("floor_wrong", FAILURE_RED)),
        )
        view.add_agents(n, nose=(NOSE_CENTER[2], NOSE_HALF[0]))
        view.add_material("orange_block", ORANGE, emission=0.6)
        view.add_material("red_block", RED, emission=0.6)
        view.add_material("orange_goal", ORANGE, checker=True)
        view.add_material("red_goal", RED, checker=True)
        self._orange_goal_mocap = view.add_movers("orange_goal", n, centred_box(GOAL_HALF, "orange_goal"))
        self._red_goal_mocap = view.add_movers("red_goal", n, centred_box(GOAL_HALF, "red_goal"))
        self._orange_block_mocap = view.add_movers("orange_block", n, centred_box(BLOCK_HALF, "orange_block"))
        self._red_block_mocap = view.add_movers("red_block", n, centred_box(BLOCK_HALF, "red_block"))
        view.build()
        self.view = view

    def goals_touched(self, right: np.ndarray, wrong: np.ndarray) -> None:
        self.floor_flash.start(right, 1)
        self.floor_flash.start(wrong, 2)

    def physics_step(self) -> None:
        self.floor_flash.tick()
        super().physics_step()

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        view = self.view
        view.place_agents(self.world.agent_positions, self.world.agent_yaws)
        orange_goal, red_goal = self.goal_positions()
        view.place(self._orange_goal_mocap, orange_goal)
        view.place(self._red_goal_mocap, red_goal)
        view.place(self._orange_block_mocap, self.orange_block)
        view.place(self._red_block_mocap, self.red_block)
        view.colour_floors(self.floor_flash.colours())
        return view.render(agents.tolist())
