import json
import pickle
import time

import pytest

from mlagents.envs import timers
from mlagents.envs.timers import (
    TimerNode,
    TimerStack,
    get_timer_root,
    get_timer_tree,
    hierarchical_timer,
    reset_timers,
    set_gauge,
    timed,
)


@pytest.fixture
def stack() -> TimerStack:
    return TimerStack()


def test_nested_blocks_accumulate_per_parent(stack):
    for _ in range(3):
        with hierarchical_timer("outer", stack), hierarchical_timer("inner", stack):
            time.sleep(0.002)
    with hierarchical_timer("inner", stack):
        pass
    root = stack.get_root()
    assert set(root.children) == {"outer", "inner"}
    outer = root.children["outer"]
    assert outer.count == 3
    assert outer.children["inner"].count == 3
    assert outer.children["inner"].total >= 0.006
    assert outer.total >= outer.children["inner"].total
    assert root.children["inner"].count == 1
    assert root.count == 1


def test_time_is_recorded_when_block_raises(stack):
    with pytest.raises(RuntimeError), hierarchical_timer("failing", stack):
        raise RuntimeError("boom")
    assert stack.get_root().children["failing"].count == 1
    assert stack.stack == [stack.root]  # popped despite the exception


def test_timed_uses_qualified_name():
    class Worker:
        @timed
        def run(self, x):
            return x * 2

    reset_timers()
    assert Worker().run(21) == 42
    assert Worker.run.__name__ == "run"
    names = [child["name"] for child in get_timer_tree()["children"]]
    assert names == ["test_timed_uses_qualified_name.<locals>.Worker.run"]
    reset_timers()


def test_json_tree_shape(stack):
    with hierarchical_timer("env_step", stack), hierarchical_timer("UnityEnvironment.step", stack):
        pass
    with hierarchical_timer("leaf", stack):
        pass
    tree = stack.get_timing_tree()
    json.loads(json.dumps(tree))  # serialisable
    assert tree["name"] == "root"
    assert tree["count"] == 1
    assert set(tree) == {"name", "total", "count", "self", "children"}  # no gauges, not parallel
    env_step, leaf = tree["children"]
    assert env_step["name"] == "env_step" and leaf["name"] == "leaf"
    assert set(leaf) == {"name", "total", "count", "self"}  # no empty children list
    (child,) = env_step["children"]
    assert child["name"] == "UnityEnvironment.step"
    assert env_step["self"] == pytest.approx(max(0.0, env_step["total"] - child["total"]))
    assert tree["self"] >= 0.0
    assert tree["total"] >= env_step["total"] + leaf["total"]


def test_self_is_never_negative():
    stack = TimerStack()
    parent = stack.root.get_child("parent")
    parent.add_time(1.0)
    parent.get_child("child").add_time(2.0)  # e.g. parallel time merged from workers
    tree = stack.get_timing_tree()
    assert tree["children"][0]["self"] == 0.0


def test_merge_adds_counts_and_marks_parallel():
    main = TimerNode()
    main.get_child("x").add_time(1.0)
    worker = TimerNode()
    worker.add_time(5.0)
    worker.get_child("x").add_time(2.0)
    worker.get_child("x").get_child("y").add_time(0.5)
    main.merge(worker, root_name="worker_root", is_parallel=True)
    main.merge(worker, root_name="worker_root", is_parallel=True)
    merged = main.children["worker_root"]
    assert merged.total == 10.0 and merged.count == 2 and merged.is_parallel
    assert merged.children["x"].total == 4.0 and merged.children["x"].count == 2
    assert merged.children["x"].children["y"].is_parallel
    assert not main.children["x"].is_parallel
    # merging in place (no root_name) adds into this node; is_parallel=False leaves the flag alone
    other = TimerNode()
    other.get_child("x").add_time(3.0)
    main.merge(other, is_parallel=False)
    assert main.children["x"].total == 4.0 and not main.children["x"].is_parallel

    stack = TimerStack()
    stack.root.merge(worker, root_name="worker_root")
    node = stack.get_timing_tree()["children"][0]
    assert node["is_parallel"] is True
    assert node["children"][0]["is_parallel"] is True


def test_timer_nodes_survive_pickling():
    # Worker processes send their timer root to the manager.
    node = TimerNode()
    node.get_child("a").add_time(0.25)
    copy = pickle.loads(pickle.dumps(node))
    assert copy.children["a"].total == 0.25 and copy.children["a"].count == 1


def test_gauges(stack):
    set_gauge("buffer_size", 3.0, stack)
    set_gauge("buffer_size", float("nan"), stack)  # ignored
    set_gauge("buffer_size", 1.0, stack)
    set_gauge("buffer_size", 7.0, stack)
    set_gauge("other", 2.0, stack)
    gauges = stack.get_timing_tree()["gauges"]
    assert gauges == [
        {"name": "buffer_size", "value": 7.0, "min": 1.0, "max": 7.0, "count": 3},
        {"name": "other", "value": 2.0, "min": 2.0, "max": 2.0, "count": 1},
    ]
    stack.reset()
    assert "gauges" not in stack.get_timing_tree()


def test_reset_and_root_total(stack):
    with hierarchical_timer("a", stack):
        pass
    time.sleep(0.01)
    root = get_timer_root(stack)
    assert root.total >= 0.01 and root.count == 1
    reset_timers(stack)
    assert get_timer_tree(stack)["total"] < 0.01
    assert "children" not in get_timer_tree(stack)


def test_global_stack_is_default():
    reset_timers()
    with hierarchical_timer("global_block"):
        pass
    assert timers._global_timer_stack.root.children["global_block"].count == 1
    reset_timers()
