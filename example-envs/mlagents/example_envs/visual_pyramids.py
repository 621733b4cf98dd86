"""VisualPyramids: Pyramids seen through the agent's camera instead of rays.

One area and one agent (the Unity scene has eight areas, seven of them switched off) on brain
``VisualPyramidsLearning``: no vector observation, one 84 x 84 colour camera, discrete [5] as in
Pyramids; the same physics, rewards, reset and episode rules (``pyramids``).

The camera rides on the agent 0.5 above its top, looking ahead, vertical field of view 60
degrees, near 0.3, far 1000. It sees the brown floor, grey walls and stone pyramids (drawn as
the four solid layers the physics uses for them), the switch (a grey pad with a red button, green
once pressed), the brown bricks of the brick pyramid and the glowing gold brick, each brick at
its simulated position and orientation. The Unity scene clears to its skybox (not transcribed);
a plain sky colour stands in for it.
"""

from __future__ import annotations

import numpy as np

from .agent_view import FAILURE_RED, SUCCESS_GREEN, CameraOnly, ViewModel, centred_box
from .pyramids import Pyramids
from .pyramids_physics import GOLD_HALF, GROUND, STONE_LAYERS, SWITCH_HALF, WALLS, stone_layer_boxes
from .vector3 import to_mujoco

FLOOR_COLOUR = (0.49, 0.43, 0.39)
BRICK_COLOUR = (0.57, 0.38, 0.19)
GOLD_COLOUR = (1.0, 0.51, 0.0)
SKY_COLOUR = (0.62, 0.72, 0.85)
#: the switch as drawn: a grey pad on the floor and the button on it (Unity local frame of the switch origin)
SWITCH_PAD = ((0.0, -0.25, 0.0), (SWITCH_HALF[0], 0.25, SWITCH_HALF[2]))
SWITCH_BUTTON = ((0.0, 0.5, 0.0), (1.0, 0.5, 1.0))
_HIDDEN = -1000.0


class VisualPyramids(CameraOnly, Pyramids):
    """VisualPyramids: brain ``VisualPyramidsLearning``, one agent, one 84 x 84 RGB camera."""

    brain_name = "VisualPyramidsLearning"
    num_agents = 1

    def initialize(self) -> None:
        super().initialize()
        n = self.num_agents
        view = ViewModel("VisualPyramids", SKY_COLOUR, fovy=60.0, znear=0.3, zfar=1000.0)
        view.add_arenas(self.origins, GROUND, WALLS, floor=FLOOR_COLOUR)
        view.add_agents(n)
        view.add_material("brick", BRICK_COLOUR)
        view.add_material("gold", GOLD_COLOUR, emission=0.6)
        view.add_material("button_off", FAILURE_RED, emission=0.6)
        view.add_material("button_on", SUCCESS_GREEN, emission=0.6)
        # a stone pyramid: its four layers about a root on the floor
        layer_centers, layer_half = stone_layer_boxes(np.zeros((1, 3)))
        stone = [(layer_centers[0, k], layer_half[k], "wall") for k in range(len(STONE_LAYERS))]
        self._stone_mocap = np.array([view.add_movers(f"stone{i}_", 6, stone) for i in range(n)])
        self._switch_mocap = view.add_movers(
            "switch", n, [(*SWITCH_PAD, "wall"), (*SWITCH_BUTTON, "button_off")]
        )
        self._brick_mocap = np.array(
            [view.add_movers(f"brick{i}_", 25, centred_box((0.5, 0.5, 0.5), "brick")) for i in range(n)]
        )
        self._gold_mocap = view.add_movers("gold", n, centred_box((GOLD_HALF,) * 3, "gold"))
        view.build()
        self.view = view
        self._button_geoms = np.array([view.geom(f"switch{i}_1") for i in range(n)])
        self._button_materials = np.array([view.material("button_off"), view.material("button_on")])

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        view, w = self.view, self.world
        assert view.model is not None and view.data is not None
        view.place_agents(w.agent_positions, w.agent_yaws)
        # stone pyramid roots carry only their horizontal place; the layers stand on the floor
        view.place(self._stone_mocap.ravel(), (self.stone_roots * [1.0, 0.0, 1.0]).reshape(-1, 3))
        view.place(self._switch_mocap, self.switch_positions)
        view.model.geom_matid[self._button_geoms] = self._button_materials[self.switch_on.astype(np.int64)]
        for a, pyramid in enumerate(self.pyramids):
            bricks, gold = self._brick_mocap[a], self._gold_mocap[a]
            if not pyramid.active:
                view.data.mocap_pos[bricks, 2] = _HIDDEN
                view.data.mocap_pos[gold, 2] = _HIDDEN
                continue
            # the brick model is in the area's frame with MuJoCo axes: shift by the area origin
            poses = pyramid.data.qpos[2:].reshape(26, 7)
            offset = to_mujoco(self.origins[a])
            view.data.mocap_pos[bricks] = poses[:25, :3] + offset
            view.data.mocap_quat[bricks] = poses[:25, 3:]
            view.data.mocap_pos[gold] = poses[25, :3] + offset
            view.data.mocap_quat[gold] = poses[25, 3:]
        return view.render(agents.tolist())
