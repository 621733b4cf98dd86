"""Lightweight hierarchical timers and gauges.

Blocks of code are timed either with the :func:`hierarchical_timer` context manager or the
:func:`timed` decorator. Nested blocks form a tree; a block entered several times under the same
parent accumulates into one node (total seconds and call count). Trees recorded in worker processes
travel back to the main process and are merged in with :meth:`TimerNode.merge`, marked as parallel
(their time overlaps the main process' wall time).

Example::

    from mlagents.envs.timers import hierarchical_timer, timed, get_timer_tree

    @timed
    def work():
        with hierarchical_timer("inner"):
            ...

    work()
    tree = get_timer_tree()  # {"name": "root", "total": ..., "children": [{"name": "work", ...}]}

:func:`get_timer_tree` returns the JSON shape written by the trainer to ``<run_id>_timers.json``:
every node has ``name``, ``total`` (seconds, children included), ``count``, ``self`` (seconds not
spent in children, never negative), ``is_parallel`` (only when true) and ``children`` (only when
non-empty); the root has ``gauges`` when any gauge was set.

The timers are not thread-safe: one stack per process, used from the main thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps
from time import perf_counter
from typing import Any, TypeVar

__all__ = [
    "TimerNode",
    "GaugeNode",
    "TimerStack",
    "hierarchical_timer",
    "timed",
    "set_gauge",
    "get_timer_tree",
    "get_timer_root",
    "reset_timers",
]


class TimerNode:
    """Accumulated time of one named block under one parent.

    :ivar children: child nodes by block name.
    :ivar total: seconds spent in the block, children included.
    :ivar count: number of times the block was entered.
    :ivar is_parallel: True when the node holds time merged from other processes.
    """

    __slots__ = ["children", "total", "count", "is_parallel"]

    def __init__(self) -> None:
        self.children: dict[str, TimerNode] = {}
        self.total: float = 0.0
        self.count: int = 0
        self.is_parallel: bool = False

    def get_child(self, name: str) -> TimerNode:
        """Return the child called ``name``, creating it if it does not exist yet."""
        child = self.children.get(name)
        if child is None:
            child = TimerNode()
            self.children[name] = child
        return child

    def add_time(self, elapsed: float) -> None:
        """Record one pass through the block that lasted ``elapsed`` seconds."""
        self.total += elapsed
        self.count += 1

    def merge(self, other: TimerNode, root_name: str | None = None, is_parallel: bool = True) -> None:
        """Add the totals and counts of ``other`` (recursively) into this node.

        :param other: the tree to merge in; it is not modified.
        :param root_name: when given, merge into the child of that name instead of into this node.
        :param is_parallel: mark the merged nodes as parallel (time overlapping this process').
        """
        node = self.get_child(root_name) if root_name else self
        node.total += other.total
        node.count += other.count
        node.is_parallel |= is_parallel
        for name, other_child in other.children.items():
            node.get_child(name).merge(other_child, is_parallel=is_parallel)

    def __repr__(self) -> str:
        return f"TimerNode(total={self.total:.6f}, count={self.count}, children={list(self.children)})"


class GaugeNode:
    """Latest, minimum and maximum of a value sampled over time (e.g. a buffer size)."""

    __slots__ = ["value", "min_value", "max_value", "count"]

    def __init__(self, value: float) -> None:
        self.value = value
        self.min_value = value
        self.max_value = value
        self.count = 1

    def update(self, new_value: float) -> None:
        self.value = new_value
        self.min_value = min(self.min_value, new_value)
        self.max_value = max(self.max_value, new_value)
        self.count += 1

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "min": self.min_value, "max": self.max_value, "count": self.count}


class TimerStack:
    """The tree of timers of one process plus the stack of the blocks currently entered."""

    __slots__ = ["root", "stack", "start_time", "gauges"]

    def __init__(self) -> None:
        self.root = TimerNode()
        self.stack: list[TimerNode] = [self.root]
        self.start_time = perf_counter()
        self.gauges: dict[str, GaugeNode] = {}

    def reset(self) -> None:
        """Forget every recorded time and gauge; the root's clock restarts now."""
        self.root = TimerNode()
        self.stack = [self.root]
        self.start_time = perf_counter()
        self.gauges = {}

    def push(self, name: str) -> TimerNode:
        """Enter the block ``name`` under the current block and return its node."""
        child = self.stack[-1].get_child(name)
        self.stack.append(child)
        return child

    def pop(self) -> None:
        """Leave the current block."""
        self.stack.pop()

    def get_root(self) -> TimerNode:
        """Return the root node, its total set to the seconds since the stack was created or reset."""
        self.root.total = perf_counter() - self.start_time
        self.root.count = 1
        return self.root

    def get_timing_tree(self, node: TimerNode | None = None) -> dict[str, Any]:
        """Return the tree below ``node`` (default: the root) as JSON-serialisable dicts.

        See the module docstring for the keys.
        """
        is_root = node is None
        if node is None:
            node = self.get_root()
        result: dict[str, Any] = {"name": "root"} if is_root else {}
        result["total"] = node.total
        result["count"] = node.count
        if is_root and self.gauges:
            result["gauges"] = [{"name": name, **gauge.as_dict()} for name, gauge in self.gauges.items()]
        if node.is_parallel:
            result["is_parallel"] = True

        children_total = 0.0
        children: list[dict[str, Any]] = []
        for name, child in node.children.items():
            child_dict = {"name": name, **self.get_timing_tree(child)}
            children.append(child_dict)
            children_total += child.total
        result["self"] = max(0.0, node.total - children_total)
        if children:
            result["children"] = children
        return result

    def set_gauge(self, name: str, value: float) -> None:
        if math.isnan(value):
            return
        gauge = self.gauges.get(name)
        if gauge is None:
            self.gauges[name] = GaugeNode(value)
        else:
            gauge.update(value)


_global_timer_stack = TimerStack()


# Lower-case: a function in ML-Agents 0.9; a class is cheaper to enter than a generator.
class hierarchical_timer:
    """Time the enclosed block as ``name`` under the block currently entered::

        with hierarchical_timer("env_step") as node:
            ...

    The time is recorded also when the block raises. A plain class rather than a generator-based
    context manager: it is entered several times per environment step, and this costs a third.

    :param name: the node name in the tree.
    :param timer_stack: the stack to record into; default the process-wide one.
    :returns: (on entering) the node that accumulates the block's time.
    """

    __slots__ = ["_stack", "_name", "_node", "_start"]

    def __init__(self, name: str, timer_stack: TimerStack | None = None) -> None:
        self._stack = timer_stack or _global_timer_stack
        self._name = name

    def __enter__(self) -> TimerNode:
        self._node = self._stack.push(self._name)
        self._start = perf_counter()
        return self._node

    def __exit__(self, *exc_info: object) -> None:
        self._node.add_time(perf_counter() - self._start)
        self._stack.pop()


FuncT = TypeVar("FuncT", bound=Callable[..., Any])


def timed(func: FuncT) -> FuncT:
    """Decorator: time every call of ``func`` under its ``__qualname__`` (e.g. ``"UnityEnvironment.step"``)."""
    name = func.__qualname__

    @wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        # The stack is looked up per call: reset_timers() may replace the process-wide one.
        stack = _global_timer_stack
        node = stack.push(name)
        start = perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            node.add_time(perf_counter() - start)
            stack.pop()

    return wrapped  # type: ignore[return-value]


def set_gauge(name: str, value: float, timer_stack: TimerStack | None = None) -> None:
    """Record a sample of the gauge ``name``; NaN samples are ignored."""
    (timer_stack or _global_timer_stack).set_gauge(name, value)


def get_timer_tree(timer_stack: TimerStack | None = None) -> dict[str, Any]:
    """Return the whole timer tree (JSON shape, see the module docstring)."""
    return (timer_stack or _global_timer_stack).get_timing_tree()


def get_timer_root(timer_stack: TimerStack | None = None) -> TimerNode:
    """Return the root node (its total updated to the time elapsed since creation or reset)."""
    return (timer_stack or _global_timer_stack).get_root()


def reset_timers(timer_stack: TimerStack | None = None) -> None:
    """Clear all timers and gauges of the given stack (default the process-wide one)."""
    (timer_stack or _global_timer_stack).reset()
