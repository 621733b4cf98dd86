"""What the agents of the visual examples see: a MuJoCo model of the scene drawn for the cameras.

The physics of the planar examples (Hallway, PushBlock, Pyramids, FoodCollector) uses collision
prisms without floors or true heights (see ``box_arena``), so it cannot be drawn as it is. A
:class:`ViewModel` is a second MuJoCo model built from the same scene geometry with the true
sizes and the Unity materials' colours: static boxes (floor, walls), and mocap bodies for
everything that moves (agents, blocks, goals, food, bricks), whose poses are copied from the
physics before each picture. Every agent body carries a camera at the original's offset
(Unity local (0, 1, 0): 0.5 above the top of its 1 m cube) looking along the agent's forward.

Colours are the Unity materials' albedo or emission colours; Unity's Standard shader, its
directional light and textures other than checkers are not reproduced (an ambient-heavy light
here keeps every colour close to its material value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import mujoco
import numpy as np

from .box_arena import AreaBox, yaw_quaternions
from .sdk.rendering import OffscreenRenderer
from .sdk.scene import CameraResolution, Scene, SceneSpec
from .vector3 import to_mujoco

Colour = tuple[float, float, float]
#: one box of a moving body: its Unity centre relative to the body, its half extents, its material
Box = tuple[Sequence[float], Sequence[float], str]

#: image size of every camera of the visual examples
IMAGE_SIZE = 84
#: camera position relative to the agent's centre (Unity local frame)
CAMERA_OFFSET = (0.0, 1.0, 0.0)

AGENT_BLUE: Colour = (0.11, 0.60, 0.84)
WALL_GREY: Colour = (0.5, 0.5, 0.5)
WHITE: Colour = (1.0, 1.0, 1.0)
SUCCESS_GREEN: Colour = (0.48, 0.72, 0.31)
FAILURE_RED: Colour = (1.0, 0.49, 0.49)
#: the floor shows the success / failure colour for 0.5 s (25 physics steps) after an episode ends
FLASH_STEPS = 25


def with_agent_camera(spec: SceneSpec) -> SceneSpec:
    """``spec`` with every brain seeing one ``IMAGE_SIZE`` RGB camera and no vector observation,
    hence no stack of vector observations (one frame)."""
    camera = CameraResolution(IMAGE_SIZE, IMAGE_SIZE, gray_scale=False)
    spec.brains = [
        dataclasses.replace(
            brain, vector_observation_size=0, num_stacked_vector_observations=1, camera_resolutions=(camera,)
        )
        for brain in spec.brains
    ]
    return spec


class CameraOnly(Scene):
    """Base of the visual examples, listed before the scene it draws (``class
    VisualHallway(CameraOnly, Hallway)``): its brains see only the agent camera (see
    :func:`with_agent_camera`), so the vector observation is empty."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return with_agent_camera(super().spec())

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        return np.zeros((len(agents), 0), dtype=np.float32)


class Flash:
    """A colour shown for ``FLASH_STEPS`` physics steps after an event, one per area or agent
    (the floor after a goal, an agent after it ate): colour 0 is the look without a flash."""

    def __init__(self, count: int) -> None:
        self._steps = np.zeros(count, dtype=np.int64)
        self._colour = np.zeros(count, dtype=np.int64)

    def start(self, index: np.ndarray, colour: int | np.ndarray = 1) -> None:
        """Show ``colour`` (one, or one per index) at ``index`` from now on."""
        self._steps[index] = FLASH_STEPS
        self._colour[index] = colour

    def tick(self) -> None:
        """One physics step passed (call before the step's events start new flashes)."""
        np.subtract(self._steps, 1, out=self._steps, where=self._steps > 0)

    def colours(self, idle: int = 0) -> np.ndarray:
        """The colour shown now at each index, int64 ``(count,)``: ``idle`` where none flashes."""
        return np.where(self._steps > 0, self._colour, idle)


def _fmt(values: Sequence[float] | np.ndarray) -> str:
    return " ".join(f"{float(v):.6g}" for v in np.ravel(values))


class ViewModel:
    """Builds (``add_*``, then :meth:`build`) and draws a view model.

    :param name: model name.
    :param clear_colour: the cameras' background (Unity's solid clear colour or sky).
    :param fovy: the cameras' vertical field of view (degrees).
    :param znear: near clipping distance (m); ``zfar``: far clipping distance (m).
    """

    def __init__(self, name: str, clear_colour: Colour, fovy: float, znear: float, zfar: float) -> None:
        self.name = name
        self.clear_colour = clear_colour
        self.fovy = fovy
        self.znear = znear
        self.zfar = zfar
        self._materials: list[str] = []
        self._static: list[str] = []
        self._bodies: list[str] = []
        self._mocap_names: list[str] = []
        self._cameras: list[str] = []
        #: the floor geoms of the areas, and the floor materials in the order of their looks
        self._floor_names: list[str] = []
        self._floor_looks: list[str] = []
        self._floor_geoms = np.zeros(0, dtype=np.int64)
        self._floor_materials = np.zeros(0, dtype=np.int64)
        #: the agents' mocap indices (see :meth:`add_agents`)
        self._agents = np.zeros(0, dtype=np.int64)
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        self._renderer: OffscreenRenderer | None = None

    # ---- building ----
    def add_material(self, name: str, colour: Colour, emission: float = 0.0, checker: bool = False) -> str:
        """A material of ``colour`` (``emission`` 0..1 makes it glow like Unity's emission);
        ``checker`` draws it as a checker board of the colour and white. Returns ``name``."""
        texture = ""
        if checker:
            light = tuple(0.5 * (c + 1.0) for c in colour)
            self._materials.append(
                f'<texture name="{name}_tex" type="2d" builtin="checker" rgb1="{_fmt(colour)}" '
                f'rgb2="{_fmt(light)}" width="64" height="64"/>'
            )
            texture = f' texture="{name}_tex" texrepeat="1 1" texuniform="true"'
            colour = (1.0, 1.0, 1.0)
        self._materials.append(
            f'<material name="{name}" rgba="{_fmt(colour)} 1" emission="{emission:g}" specular="0" '
            f'shininess="0" reflectance="0"{texture}/>'
        )
        return name

    def add_box(self, name: str, center: Sequence[float], half: Sequence[float], material: str) -> None:
        """A static box from a Unity centre and half extents."""
        self._static.append(
            f'<geom name="{name}" type="box" pos="{_fmt(to_mujoco(np.asarray(center)))}" '
            f'size="{_fmt(to_mujoco(np.asarray(half)))}" material="{material}"/>'
        )

    def add_mocap(self, name: str, boxes: Sequence[Box], camera: bool = False) -> int:
        """A moving body ``name`` made of ``boxes`` (Unity centre relative to the body, half
        extents, material), with an agent camera when ``camera``. Returns its mocap index."""
        geoms = "".join(
            f'<geom name="{name}_{i}" type="box" pos="{_fmt(to_mujoco(np.asarray(c)))}" '
            f'size="{_fmt(to_mujoco(np.asarray(h)))}" material="{m}"/>'
            for i, (c, h, m) in enumerate(boxes)
        )
        if camera:
            # MuJoCo cameras look along their -z: x = right, y = up gives a view along body +y
            # (Unity forward).
            geoms += (
                f'<camera name="{name}_camera" pos="{_fmt(to_mujoco(np.asarray(CAMERA_OFFSET)))}" '
                f'xyaxes="1 0 0 0 0 1" fovy="{self.fovy:g}"/>'
            )
            self._cameras.append(f"{name}_camera")
        self._bodies.append(f'<body name="{name}" mocap="true" pos="0 0 -1000">{geoms}</body>')
        self._mocap_names.append(name)
        return len(self._mocap_names) - 1

    def add_movers(self, name: str, count: int, boxes: Sequence[Box]) -> np.ndarray:
        """``count`` moving bodies ``{name}{i}`` made of the same ``boxes`` (see :meth:`add_mocap`);
        returns their mocap indices int ``(count,)``."""
        return np.array([self.add_mocap(f"{name}{i}", boxes) for i in range(count)])

    def add_arenas(
        self,
        origins: np.ndarray,
        ground: AreaBox,
        walls: Sequence[AreaBox],
        floor: Colour = WHITE,
        flashes: Sequence[tuple[str, Colour]] = (),
    ) -> None:
        """The static floor (``floor{a}``, material ``floor`` of colour ``floor``) and grey walls
        (``wall{a}_{w}``, material ``wall``) of every area ``a`` at ``origins`` ``(areas, 3)``;
        ``ground`` and each of ``walls`` is a (centre, half extents) pair in the area frame.
        ``flashes``: the (material name, colour) of each other look of the floor (glowing), in the
        order of :meth:`colour_floors`."""
        self._floor_looks = [self.add_material("floor", floor)]
        self._floor_looks += [self.add_material(name, colour, emission=0.5) for name, colour in flashes]
        self.add_material("wall", WALL_GREY)
        for a, origin in enumerate(origins):
            self._floor_names.append(f"floor{a}")
            self.add_box(f"floor{a}", origin + ground[0], ground[1], "floor")
            for w, (center, half) in enumerate(walls):
                self.add_box(f"wall{a}_{w}", origin + center, half, "wall")

    def add_agents(self, count: int, nose: tuple[float, float] | None = None) -> None:
        """``count`` blue cube agents ``agent{i}`` of material ``agent`` (see :func:`agent_boxes`),
        each with its camera (placed by :meth:`place_agents`)."""
        boxes = agent_boxes(0.5, self.add_material("agent", AGENT_BLUE, emission=0.6), nose)
        self._agents = np.array([self.add_mocap(f"agent{i}", boxes, camera=True) for i in range(count)])

    def xml(self) -> str:
        sky = _fmt(self.clear_colour)
        return (
            f'<mujoco model="{self.name}">'
            '<statistic extent="1" center="0 0 0"/>'
            f'<visual><map znear="{self.znear:g}" zfar="{self.zfar:g}"/>'
            '<headlight ambient="0.55 0.55 0.55" diffuse="0.2 0.2 0.2" specular="0 0 0"/>'
            '<quality shadowsize="0"/></visual>'
            f'<asset><texture type="skybox" builtin="flat" rgb1="{sky}" rgb2="{sky}" width="8" height="8"/>'
            f"{''.join(self._materials)}</asset>"
            '<worldbody><light directional="true" dir="0.3 0.5 -1" diffuse="0.35 0.35 0.35" '
            'specular="0 0 0" castshadow="false"/>'
            f"{''.join(self._static)}{''.join(self._bodies)}</worldbody></mujoco>"
        )

    def build(self) -> None:
        """Compile the model (the renderer is made at the first picture)."""
        self.model = mujoco.MjModel.from_xml_string(self.xml())
        self.data = mujoco.MjData(self.model)
        self._floor_geoms = np.array([self.geom(name) for name in self._floor_names], dtype=np.int64)
        self._floor_materials = np.array([self.material(name) for name in self._floor_looks], dtype=np.int64)

    # ---- drawing ----
    def geom(self, name: str) -> int:
        assert self.model is not None
        return int(mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, name))

    def material(self, name: str) -> int:
        assert self.model is not None
        return int(mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_MATERIAL, name))

    def place(
        self,
        mocap: np.ndarray | Sequence[int],
        positions: np.ndarray,
        yaws: np.ndarray | None = None,
        quaternions: np.ndarray | None = None,
    ) -> None:
        """Move mocap bodies to Unity ``positions`` ``(k, 3)`` with Unity ``yaws`` ``(k,)``
        (degrees) or MuJoCo ``quaternions`` ``(k, 4)`` (neither: unrotated)."""
        assert self.data is not None
        index = np.asarray(mocap, dtype=np.int64)
        self.data.mocap_pos[index] = to_mujoco(positions)
        if quaternions is not None:
            self.data.mocap_quat[index] = quaternions
        elif yaws is not None:
            self.data.mocap_quat[index] = yaw_quaternions(yaws)

    def place_agents(self, positions: np.ndarray, yaws: np.ndarray) -> None:
        """Move the agents to Unity ``positions`` ``(count, 3)`` facing Unity ``yaws`` ``(count,)``."""
        self.place(self._agents, positions, yaws)

    def colour_floors(self, looks: np.ndarray) -> None:
        """Show the floor of area ``a`` in look ``looks[a]``: 0 its own colour, ``k`` the ``k``-th
        of the ``flashes`` of :meth:`add_arenas`."""
        assert self.model is not None
        self.model.geom_matid[self._floor_geoms] = self._floor_materials[looks]

    def render(self, cameras: Sequence[int], size: int = IMAGE_SIZE) -> np.ndarray:
        """Pictures of the current poses from the agent cameras ``cameras`` (their order of
        creation): uint8 ``(len(cameras), size, size, 3)``, row 0 = top."""
        assert self.model is not None and self.data is not None
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_camlight(self.model, self.data)
        if self._renderer is None:
            self._renderer = OffscreenRenderer(self.model, size, size)
        images = np.empty((len(cameras), size, size, 3), dtype=np.uint8)
        for i, camera in enumerate(cameras):
            images[i] = self._renderer.render(self.data, self._cameras[camera])
        return images


def centred_box(half: Sequence[float], material: str) -> list[Box]:
    """The one box of a moving body, of half extents ``half``, centred on the body."""
    return [((0.0, 0.0, 0.0), half, material)]


def agent_boxes(half: float, material: str, nose: tuple[float, float] | None = None) -> list[Box]:
    """The boxes of a cube agent of half size ``half`` with an optional nose (centre z, half size)."""
    boxes = centred_box((half, half, half), material)
    if nose is not None:
        z, h = nose
        boxes.append(((0.0, 0.0, z), (h, h, h), material))
    return boxes
