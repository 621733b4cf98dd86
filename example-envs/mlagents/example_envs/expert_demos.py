"""The expert demonstrations shipped in ``demos/``: which example, brain and heuristic each comes from.

Each ``demos/<name>.demo`` is recorded by ``tools/record_demos.py``: the example runs in training
mode with every brain on its heuristic (the ``heuristic`` brain type), and the recorder writes
the chosen brain's decisions until the file holds ``steps`` of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .sdk.academy import Academy
from .sdk.brains import BrainSettings
from .sdk.catalogue import find_scene


@dataclass(frozen=True)
class ExpertDemo:
    """One shipped demonstration.

    :ivar name: the file name without ``.demo`` (at most 16 characters, as Unity names them).
    :ivar scene: the example's catalogue name.
    :ivar brain: the recorded brain.
    :ivar steps: decisions recorded.
    :ivar observation_heuristic: True when the heuristic is a function of the recorded observation
        alone (so the actions in the file can be recomputed from it).
    :ivar whole_episodes: keep finished episodes only, until the file holds ``steps`` decisions
        (for the examples whose episodes are short enough for a small file).
    :ivar episode_prefix: keep only the first this many decisions of every episode (0 = all): many
        episode starts in a small file, for a scene whose episodes are long and whose students
        fail at the start.
    """

    name: str
    scene: str
    brain: str
    steps: int
    observation_heuristic: bool
    whole_episodes: bool = False
    episode_prefix: int = 0


EXPERT_DEMOS: tuple[ExpertDemo, ...] = (
    ExpertDemo("ExpertBasic", "Basic", "BasicLearning", 3000, True, True),
    # The first 100 decisions of 200 episodes: students fail at the start (the ball dropping onto a
    # tilted platform), where 20 whole episodes showed too few starts.
    ExpertDemo("Expert3DBall", "3DBall", "3DBallLearning", 20000, True, True, episode_prefix=100),
    ExpertDemo("Expert3DBallHard", "3DBallHard", "3DBallHardLearning", 10000, True, True),
    ExpertDemo("ExpertGrid", "GridWorld", "GridWorldLearning", 2000, True, True),
    ExpertDemo("ExpertHallway", "Hallway", "HallwayLearning", 3000, False, True),
    ExpertDemo("ExpertPush", "PushBlock", "PushBlockLearning", 3000, False, True),
    # Only the small-wall brain: the big-wall heuristic walks off the platform to end its episodes.
    ExpertDemo("ExpertWallJump", "WallJump", "SmallWallJumpLearning", 1500, False, True),
    ExpertDemo("ExpertBouncer", "Bouncer", "BouncerLearning", 3000, True, True),
    ExpertDemo("ExpertReacher", "Reacher", "ReacherLearning", 3000, True),
    ExpertDemo("ExpertTennis", "Tennis", "TennisLearning", 3000, True),
    ExpertDemo("ExpertFood", "FoodCollector", "BananaLearning", 2000, False, True),
    ExpertDemo("ExpertPyramid", "Pyramids", "PyramidsLearning", 2000, False),
    ExpertDemo("ExpertSoccerStri", "SoccerTwos", "StrikerLearning", 2000, False),
    ExpertDemo("ExpertSoccerGoal", "SoccerTwos", "GoalieLearning", 2000, False),
    # The trot of the crawler heuristic (a function of time too); episodes of 1000 decisions would
    # make the file large, so the file holds the first 2000 decisions of the 12 agents.
    ExpertDemo("ExpertCrawlerSta", "CrawlerStatic", "CrawlerStaticLearning", 2000, False),
)

#: Academy steps after which a recording gives up (a heuristic that never lets its agents decide).
MAX_ACADEMY_STEPS = 200_000


def record_scene(scene_name: str, demos: list[ExpertDemo], folder: str, seed: int = 0) -> list[str]:
    """Run ``scene_name`` with heuristic brains and record ``demos`` (all of that scene) into
    ``folder``, replacing files of the same name. Returns the paths written.

    :raises RuntimeError: the recordings did not fill up within :data:`MAX_ACADEMY_STEPS` steps.
    """
    scene = find_scene(scene_name)
    spec = scene.spec()
    os.makedirs(folder, exist_ok=True)
    for demo in demos:
        path = os.path.join(folder, demo.name + ".demo")
        if os.path.exists(path):
            os.remove(path)
    settings = BrainSettings(
        kinds={brain.name: ("heuristic", None) for brain in spec.brains},
        record={demo.brain: demo.name for demo in demos},
        demo_folder=folder,
        demo_steps=max(demo.steps for demo in demos),
    )
    settings.validate(scene, spec)
    academy = Academy(scene, seed=seed, brain_settings=settings)
    # Each recorder stops at its own step count.
    for demo in demos:
        recorder = academy.recorder_of(demo.brain)
        assert recorder is not None
        recorder.max_steps = demo.steps
        recorder.whole_episodes = demo.whole_episodes
        recorder.episode_prefix = demo.episode_prefix
    try:
        academy.run(max_steps=MAX_ACADEMY_STEPS, stop=lambda: academy.recordings_complete, train_mode=True)
        if not academy.recordings_complete:
            raise RuntimeError(
                f"{scene_name}: the recordings were not complete after {MAX_ACADEMY_STEPS} steps."
            )
    finally:
        academy.close()
    return [os.path.join(folder, demo.name + ".demo") for demo in demos]
