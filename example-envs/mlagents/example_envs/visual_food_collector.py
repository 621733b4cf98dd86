"""VisualFoodCollector ("VisualBanana"): FoodCollector seen through the agents' cameras.

Two areas of four agents (8) on brain ``VisualBananaLearning``: no vector observation, one 84 x 84
colour camera, discrete (3, 3, 3, 2) as in FoodCollector; the same physics, laser, freezing,
rewards and academy rules (``food_collector``). The scene has no reset parameters: the laser
length and the agent size keep their defaults (1).

Each camera rides on its agent 0.5 above the top of its cube, looking ahead, vertical field of
view 40 degrees, near 0.3, far 1000, background (0.838, 0.727, 0.586). It sees the white floor,
grey walls, yellow good food and blue bad food, the other agents (blue; dark grey while frozen;
for 0.5 s after eating green for good food, red for bad) and magenta lasers (drawn for the physics
step the laser was fired in, 25 m x laser_length long).
"""

from __future__ import annotations

import numpy as np

from .agent_view import FAILURE_RED, SUCCESS_GREEN, CameraOnly, Flash, ViewModel, centred_box
from .box_arena import forward_vectors
from .food_collector import FOOD_HALF, GROUND, LASER_LENGTH, WALLS, FoodCollector
from .sdk.scene import SceneSpec

CLEAR_COLOUR = (0.838, 0.727, 0.586)
GOOD_FOOD = (0.95, 0.83, 0.18)
BAD_FOOD = (0.18, 0.16, 0.74)
FROZEN_GREY = (0.2, 0.2, 0.2)
LASER_MAGENTA = (1.0, 0.0, 0.93)
LASER_HALF_WIDTH = 0.1
_HIDDEN = -1000.0
# agent looks, in the order of the agent materials
_NORMAL, _FROZEN, _ATE_GOOD, _ATE_BAD = range(4)


class VisualFoodCollector(CameraOnly, FoodCollector):
    """VisualFoodCollector: brain ``VisualBananaLearning``, 8 agents in 2 areas, one 84 x 84 RGB
    camera each."""

    brain_name = "VisualBananaLearning"
    num_areas = 2
    agents_per_area = 4

    @classmethod
    def spec(cls) -> SceneSpec:
        spec = super().spec()
        spec.reset_parameters = {}
        return spec

    def initialize(self) -> None:
        super().initialize()
        n, w = self.num_agents, self.world
        #: each agent's look after eating (_ATE_GOOD or _ATE_BAD)
        self.ate_flash = Flash(n)
        view = ViewModel("VisualFoodCollector", CLEAR_COLOUR, fovy=40.0, znear=0.3, zfar=1000.0)
        view.add_arenas(self.origins, GROUND, WALLS)
        view.add_agents(n)
        agent_materials = (
            "agent",
            view.add_material("agent_frozen", FROZEN_GREY),
            view.add_material("agent_good", SUCCESS_GREEN, emission=0.6),
            view.add_material("agent_bad", FAILURE_RED, emission=0.6),
        )
        view.add_material("good_food", GOOD_FOOD, emission=0.5)
        view.add_material("bad_food", BAD_FOOD, emission=0.3)
        view.add_material("laser", LASER_MAGENTA, emission=0.8)
        self._food_mocap = np.array(
            [
                view.add_mocap(f"food{j}", centred_box(FOOD_HALF, "good_food" if good else "bad_food"))
                for j, good in enumerate(w.food_good.tolist())
            ]
        )
        # a unit-long laser, stretched to its length when drawn; its body sits at the agent's centre
        laser = ((0.0, 0.0, 0.5), (LASER_HALF_WIDTH, LASER_HALF_WIDTH, 0.5), "laser")
        self._laser_mocap = view.add_movers("laser", n, [laser])
        view.build()
        assert view.model is not None
        self.view = view
        self._agent_geoms = np.array([view.geom(f"agent{i}_0") for i in range(n)])
        self._laser_geoms = np.array([view.geom(f"laser{i}_0") for i in range(n)])
        self._agent_materials = np.array([view.material(m) for m in agent_materials])
        self._camera_ids = np.array(
            [view.model.camera(f"agent{i}_camera").id for i in range(n)], dtype=np.int64
        )
        self._camera_offset = view.model.cam_pos[self._camera_ids].copy()

    def food_eaten(self, agents: np.ndarray, good: np.ndarray) -> None:
        self.ate_flash.start(agents, np.where(good, _ATE_GOOD, _ATE_BAD))

    def physics_step(self) -> None:
        self.ate_flash.tick()
        super().physics_step()

    def agent_looks(self) -> np.ndarray:
        """How each agent is drawn: 0 normal, 1 frozen, 2 just ate good food, 3 just ate bad food."""
        return np.where(self.frozen, _FROZEN, self.ate_flash.colours(idle=_NORMAL))

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        view, w = self.view, self.world
        assert view.model is not None
        model = view.model
        positions, yaws, scales = w.agent_positions, w.agent_yaws, w.agent_scales
        view.place_agents(positions, yaws)
        half = 0.5 * scales
        model.geom_size[self._agent_geoms] = half[:, None]
        # the camera is a child of the agent: its offset grows with the agent's scale
        model.cam_pos[self._camera_ids] = self._camera_offset * scales[:, None]
        model.geom_matid[self._agent_geoms] = self._agent_materials[self.agent_looks()]
        view.place(self._food_mocap, w.food_positions, w.food_yaws)
        length = LASER_LENGTH * self.laser_length
        laser = positions + forward_vectors(yaws) * half[:, None]
        laser[~self.shot, 1] = _HIDDEN
        view.place(self._laser_mocap, laser, yaws)
        model.geom_size[self._laser_geoms, 1] = 0.5 * length
        model.geom_pos[self._laser_geoms, 1] = 0.5 * length
        return view.render(agents.tolist())
