"""VisualPushBlock: PushBlock seen through the agent's camera instead of rays.

One area and one agent (the Unity scene has eight areas, seven of them switched off) on brain
``VisualPushBlockLearning``: no vector observation, one 84 x 84 colour camera, discrete [7] as in
PushBlock; the same physics, rewards, reset, reset parameters and episode rules
(``push_block``). The 0.9.3 brain asset of this scene is a stale placeholder; the brain here is
the one its agent's player brain declares (84 x 84 RGB camera, no vector observation, seven
actions).

The camera rides on the agent 0.5 above its top, looking ahead, vertical field of view 60
degrees, near 0.3, far 1000, background (0.243, 0.457, 0.792). It sees the white floor (green for
0.5 s after a goal), grey walls, the orange block (its size follows ``block_scale``) and the
white checkered goal strip, which turns with the area at every reset.
"""

from __future__ import annotations

import numpy as np

from .agent_view import SUCCESS_GREEN, CameraOnly, Flash, ViewModel, centred_box
from .push_block import BLOCK_HALF_HEIGHT, GOAL, GROUND, NOSE_CENTER, NOSE_HALF, WALLS, PushBlock

ORANGE = (0.85, 0.54, 0.0)
CLEAR_COLOUR = (0.243, 0.457, 0.792)


class VisualPushBlock(CameraOnly, PushBlock):
    """VisualPushBlock: brain ``VisualPushBlockLearning``, one agent, one 84 x 84 RGB camera."""

    brain_name = "VisualPushBlockLearning"
    num_agents = 1

    def initialize(self) -> None:
        super().initialize()
        n = self.num_agents
        #: each area's floor look: 0 white, 1 green (after a goal)
        self.floor_flash = Flash(n)
        view = ViewModel("VisualPushBlock", CLEAR_COLOUR, fovy=60.0, znear=0.3, zfar=1000.0)
        view.add_arenas(self.origins, GROUND, WALLS, flashes=(("floor_goal", SUCCESS_GREEN),))
        view.add_agents(n, nose=(NOSE_CENTER[2], NOSE_HALF[0]))
        view.add_material("block", ORANGE, emission=0.6)
        view.add_material("goal", (0.75, 0.75, 0.75), emission=0.3, checker=True)
        # the goal body sits at the goal's centre; its box keeps the strip's height about it
        self._goal_mocap = view.add_movers("goal", n, centred_box(GOAL[1], "goal"))
        self._block_mocap = view.add_movers("block", n, centred_box((1.0, BLOCK_HALF_HEIGHT, 1.0), "block"))
        view.build()
        self.view = view
        self._block_geoms = np.array([view.geom(f"block{i}_0") for i in range(n)])

    def goal_scored(self, agents: np.ndarray) -> None:
        self.floor_flash.start(agents)

    def physics_step(self) -> None:
        self.floor_flash.tick()
        super().physics_step()

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        view, w = self.view, self.world
        assert view.model is not None
        view.place_agents(w.agent_positions, w.agent_yaws)
        view.place(self._goal_mocap, w.goal_centers(), w.area_yaws)
        view.place(self._block_mocap, w.block_positions)
        # block_scale: the block's width and depth (MuJoCo x and y half sizes)
        view.model.geom_size[self._block_geoms, 0] = w.block_halves[:, 0]
        view.model.geom_size[self._block_geoms, 1] = w.block_halves[:, 1]
        view.colour_floors(self.floor_flash.colours())
        return view.render(agents.tolist())
