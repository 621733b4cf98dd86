"""docs/Using-Tensorboard.md names every TensorBoard tag the trainers write: each tag string of the
trainers' code (``"Environment/..."``, ``"Policy/..."``, ``"Losses/..."``) and the two tags of each
reward signal of the registry (``Policy/<Signal> Reward``, ``Policy/<Signal> Value Estimate``)."""

import ast
import re
from pathlib import Path

from mlagents.trainers.components.reward_signals import signal_tags
from mlagents.trainers.settings import REWARD_SIGNAL_KINDS

REPO = Path(__file__).resolve().parents[2]
TRAINERS = REPO / "ml-agents" / "mlagents" / "trainers"
PAGE = REPO / "docs" / "Using-Tensorboard.md"
TAG = re.compile(r"(Environment|Policy|Losses)/[A-Z][A-Za-z ]*")


def tags_in_code() -> set[str]:
    tags = set()
    for path in TRAINERS.rglob("*.py"):
        if "tests" in path.relative_to(TRAINERS).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.JoinedStr):
                continue  # the reward signals' f-strings, below
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and TAG.fullmatch(node.value):
                tags.add(node.value)
    return tags


def reward_signal_tags() -> set[str]:
    return {tag for kind in REWARD_SIGNAL_KINDS.values() for tag in signal_tags(kind.class_name)}


def test_every_tag_the_trainers_write_is_on_the_page() -> None:
    code = tags_in_code()
    # The ones every PPO run writes must be among those found, or the search is broken.
    assert {"Environment/Cumulative Reward", "Policy/Entropy", "Losses/Value Loss"} <= code
    page = PAGE.read_text()
    missing = sorted(tag for tag in code | reward_signal_tags() if f"`{tag}`" not in page)
    assert not missing, f"add to {PAGE.name}'s table: {missing}"
