"""Kept for callers of this earlier path: :func:`check_demo_paths` is
:func:`mlagents.trainers.prelaunch.check_demo_paths`; demonstrations are read and checked against a
brain by :mod:`mlagents.trainers.demo_loader`."""

from mlagents.trainers.prelaunch import check_demo_paths

__all__ = ["check_demo_paths"]
