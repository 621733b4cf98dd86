"""Where the video camera of each MuJoCo example looks: its first training area (MuJoCo
coordinates; the planar examples are seen from above). Registered with the SDK's frame drawing
(:func:`mlagents.example_envs.sdk.frames.register_view`) when this module is imported."""

from __future__ import annotations

from .sdk.frames import View, register_view

__all__ = ["VIEWS"]

VIEWS: dict[str, View] = {
    "Ball3D": View((0.0, -5.0, 3.0), 16.0, azimuth=90.0, elevation=-25.0),
    "Ball3DHard": View((0.0, -5.0, 3.0), 16.0, azimuth=90.0, elevation=-25.0),
    # The planar arenas' walls reach 50 m up: the camera looks down from above their tops.
    "Hallway": View((0.0, -13.0, 0.0), 50.0 + 62.0, azimuth=90.0, elevation=-90.0),
    "PushBlock": View((0.0, 0.0, 0.0), 50.0 + 34.0, azimuth=90.0, elevation=-90.0),
    "Pyramids": View((0.0, 0.0, 0.0), 50.0 + 125.0, azimuth=90.0, elevation=-90.0),
    "FoodCollector": View((0.0, 0.0, 0.0), 50.0 + 125.0, azimuth=90.0, elevation=-90.0),
    "SoccerTwos": View((0.0, 0.0, 0.0), 50.0 + 40.0, azimuth=90.0, elevation=-90.0),
    # WallJump runs on Unity's axes (y up): looking along -y is Unity's view from above.
    "WallJump": View((0.0, 0.0, -6.0), 40.0, azimuth=-90.0, elevation=0.0),
    "Tennis": View((-45.6, 0.0, 4.0), 42.0, azimuth=90.0, elevation=0.0),
    "Reacher": View((-40.0, 0.0, -4.0), 26.0, azimuth=90.0, elevation=-20.0),
    "Bouncer": View((0.0, 0.0, 2.0), 50.0, azimuth=90.0, elevation=-30.0),
}

for _name, _view in VIEWS.items():
    register_view(_name, _view)
