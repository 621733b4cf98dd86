"""RayPerception3D against hand-computed sphere casts."""

import math

import numpy as np
import pytest

from mlagents.example_envs.sdk.ray_perception import CastWorld, RayPerception, sphere_cast_boxes, yaw_rotate

ORIGIN = np.array([[0.0, 1.0, 0.0]])


def perceive(sensor, world, origins=ORIGIN, yaws=0.0, groups=0, exclude=None):
    origins = np.asarray(origins, dtype=float)
    k = len(origins)
    return sensor.perceive(
        world, origins, np.broadcast_to(yaws, (k,)).astype(float), np.broadcast_to(groups, (k,)), exclude
    )


def wall_ahead(z=5.0, half=1.0, tag="wall", group=-1, yaw=0.0, x=0.0, y=1.0):
    world = CastWorld()
    world.add_boxes([[x, y, z]], [[half, half, half]], yaw, tag, group)
    return world


def test_yaw_convention_turns_forward_toward_plus_x():
    forward = np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(yaw_rotate(forward, 90.0), [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(yaw_rotate(forward, -90.0), [-1.0, 0.0, 0.0], atol=1e-12)


def test_face_hit_straight_ahead_layout():
    sensor = RayPerception(10, [90], ["goal", "wall"])
    # front face at z = 4, the sphere touches it after travelling 4 - 0.5 m
    obs = perceive(sensor, wall_ahead())
    assert obs.dtype == np.float32 and obs.shape == (1, 4)
    np.testing.assert_allclose(obs[0], [0, 1, 0, 0.35], atol=1e-6)


def test_angles_zero_is_right_and_180_is_left():
    sensor = RayPerception(10, [0, 90, 180], ["wall"])
    obs = perceive(sensor, wall_ahead(z=0.0, x=5.0)).reshape(3, 3)
    np.testing.assert_allclose(obs[0], [1, 0, 0.35], atol=1e-6)  # right (+x) sees the box
    np.testing.assert_allclose(obs[1], [0, 1, 0], atol=1e-6)  # ahead: nothing
    np.testing.assert_allclose(obs[2], [0, 1, 0], atol=1e-6)  # left: nothing


def test_agent_yaw_rotates_the_rays():
    sensor = RayPerception(10, [90], ["wall"])
    world = wall_ahead(z=0.0, x=5.0)
    np.testing.assert_allclose(perceive(sensor, world, yaws=90.0)[0], [1, 0, 0.35], atol=1e-6)
    np.testing.assert_allclose(perceive(sensor, world, yaws=-90.0)[0], [0, 1, 0], atol=1e-6)


def test_rounded_edge_is_exact():
    # ray along +z passing 0.3 m beside the box's vertical edge at (x=1, z=4): the sphere
    # touches the edge when (z - 4)^2 + 0.3^2 = 0.5^2, i.e. after 4 - 0.4 = 3.6 m
    sensor = RayPerception(10, [90], ["wall"])
    obs = perceive(sensor, wall_ahead(), origins=[[1.3, 1.0, 0.0]])
    np.testing.assert_allclose(obs[0], [1, 0, 0.36], atol=1e-6)


def test_rounded_corner_is_exact():
    # 0.3 m beside and 0.3 m above the corner (1, 2, 4): (z - 4)^2 = 0.25 - 0.18
    sensor = RayPerception(10, [90], ["wall"])
    obs = perceive(sensor, wall_ahead(), origins=[[1.3, 2.3, 0.0]])
    np.testing.assert_allclose(obs[0], [1, 0, (4 - math.sqrt(0.07)) / 10], atol=1e-6)


def test_rotated_box_corner_first():
    # a box turned 45 degrees points an edge at the agent: it is sqrt(2) closer
    sensor = RayPerception(10, [90], ["wall"])
    obs = perceive(sensor, wall_ahead(yaw=45.0))
    np.testing.assert_allclose(obs[0], [1, 0, (5 - math.sqrt(2) - 0.5) / 10], atol=1e-6)


def test_beyond_ray_distance_is_nothing_hit():
    sensor = RayPerception(10, [90], ["wall"])
    np.testing.assert_allclose(perceive(sensor, wall_ahead(z=11.6))[0], [0, 1, 0])
    # 10.0 m of travel exactly still counts as a hit
    np.testing.assert_allclose(perceive(sensor, wall_ahead(z=11.5))[0], [1, 0, 1.0], atol=1e-6)


def test_start_overlap_is_ignored_and_far_collider_is_seen():
    world = CastWorld()
    world.add_boxes(
        [[0.0, 1.0, 0.0], [0.0, 1.0, 7.0]], [[0.5, 0.5, 0.5], [1.0, 1.0, 1.0]], 0.0, ["agent", "wall"], 0
    )
    sensor = RayPerception(10, [90], ["agent", "wall"])
    np.testing.assert_allclose(perceive(sensor, world)[0], [0, 1, 0, 0.55], atol=1e-6)


def test_floor_under_a_resting_agent_is_ignored():
    # agent centre exactly 0.5 above the floor top: the horizontal cast grazes the floor
    world = CastWorld()
    world.add_boxes([[0.0, 0.0, 0.0]], [[50.0, 0.5, 50.0]], 0.0, "ground", -1)
    sensor = RayPerception(10, [0, 45, 90, 135, 180], ["ground"])
    obs = perceive(sensor, world).reshape(5, 3)
    np.testing.assert_allclose(obs, np.tile([0, 1, 0], (5, 1)))


def test_untagged_or_undetectable_hit_gives_zeros_and_blocks_the_view():
    world = CastWorld()
    world.add_boxes([[0.0, 1.0, 3.0], [0.0, 1.0, 7.0]], [[1, 1, 0.5], [1, 1, 1]], 0.0, [None, "wall"], -1)
    sensor = RayPerception(10, [90], ["wall"])
    np.testing.assert_allclose(perceive(sensor, world)[0], [0, 0, 0])
    world2 = wall_ahead(tag="pit")
    np.testing.assert_allclose(perceive(sensor, world2)[0], [0, 0, 0])


def test_first_matching_tag_wins_and_tag_order_follows_the_list():
    sensor = RayPerception(10, [90], ["goal", "wall", "wall"])
    np.testing.assert_allclose(perceive(sensor, wall_ahead())[0], [0, 1, 0, 0, 0.35], atol=1e-6)


def test_nearest_collider_wins():
    world = CastWorld()
    world.add_boxes([[0.0, 1.0, 8.0]], [[1, 1, 1]], 0.0, "wall", -1)
    world.add_spheres([[0.0, 1.0, 5.0]], [1.0], "goal", -1)
    sensor = RayPerception(10, [90], ["goal", "wall"])
    np.testing.assert_allclose(perceive(sensor, world)[0], [1, 0, 0, 0.35], atol=1e-6)
    world.update_spheres(0, [[0.0, 1.0, 9.5]])
    np.testing.assert_allclose(perceive(sensor, world)[0], [0, 1, 0, 0.65], atol=1e-6)


def test_groups_see_their_own_and_shared_colliders_only():
    world = CastWorld()
    world.add_boxes([[0.0, 1.0, 5.0]], [[1, 1, 1]], 0.0, "wall", 0)
    world.add_boxes([[0.0, 1.0, 3.0]], [[1, 1, 1]], 0.0, "goal", 1)
    world.add_boxes([[0.0, 1.0, 9.0]], [[1, 1, 1]], 0.0, "block", -1)
    sensor = RayPerception(10, [90], ["wall", "goal", "block"])
    obs = perceive(sensor, world, origins=np.repeat(ORIGIN, 3, 0), groups=np.array([0, 1, 7]))
    np.testing.assert_allclose(obs[0], [1, 0, 0, 0, 0.35], atol=1e-6)
    np.testing.assert_allclose(obs[1], [0, 1, 0, 0, 0.15], atol=1e-6)
    np.testing.assert_allclose(obs[2], [0, 0, 1, 0, 0.75], atol=1e-6)


def test_end_offset_tilts_the_cast():
    # e = D: the direction is (0, 1, 1)/sqrt(2); a ceiling with bottom y = 6 is touched
    # when the sphere centre reaches y = 5.5, after 4.5 * sqrt(2) m
    world = CastWorld()
    world.add_boxes([[0.0, 7.0, 0.0]], [[50, 1, 50]], 0.0, "wall", -1)
    sensor = RayPerception(10, [90], ["wall"], end_offset=10.0)
    np.testing.assert_allclose(perceive(sensor, world)[0], [1, 0, 0.45 * math.sqrt(2)], atol=1e-6)


def test_start_offset_passes_over_a_low_block():
    world = CastWorld()
    world.add_boxes([[0.0, 0.875, 4.0]], [[1.0, 0.375, 1.0]], 0.0, "block", -1)  # top 1.25
    world.add_boxes([[0.0, 1.0, 9.0]], [[5.0, 1.5, 0.5]], 0.0, "wall", -1)  # y in [-0.5, 2.5]
    low = RayPerception(12, [90], ["block", "wall"])
    high = RayPerception(12, [90], ["block", "wall"], start_offset=1.5)
    np.testing.assert_allclose(perceive(low, world)[0], [1, 0, 0, 2.5 / 12], atol=1e-6)
    np.testing.assert_allclose(perceive(high, world)[0], [0, 1, 0, 8.0 / 12], atol=1e-6)


def test_exclude_skips_the_agent_collider():
    world = CastWorld()
    world.add_boxes([[0.0, 1.0, 3.0], [0.0, 1.0, 7.0]], [[1, 1, 0.5], [1, 1, 1]], 0.0, ["agent", "wall"], 0)
    sensor = RayPerception(10, [90], ["agent", "wall"])
    np.testing.assert_allclose(perceive(sensor, world)[0], [1, 0, 0, 0.2], atol=1e-6)
    np.testing.assert_allclose(perceive(sensor, world, exclude=np.array([0]))[0], [0, 1, 0, 0.55], atol=1e-6)


def test_update_and_resize_boxes():
    world = wall_ahead()
    sensor = RayPerception(10, [90], ["wall"])
    world.update_boxes(0, [[0.0, 1.0, 6.0]], [0.0])
    np.testing.assert_allclose(perceive(sensor, world)[0], [1, 0, 0.45], atol=1e-6)
    world.set_box_half_extents(0, [[2.0, 2.0, 2.0]])
    np.testing.assert_allclose(perceive(sensor, world)[0], [1, 0, 0.35], atol=1e-6)
    with pytest.raises(IndexError, match="do not exist"):
        world.update_boxes(1, [[0.0, 0.0, 0.0]])


def test_shapes_and_errors():
    sensor = RayPerception(12, [20, 60, 90, 120, 160], ["a", "b", "c", "d", "e"])
    assert sensor.observation_size == 35
    out = sensor.perceive(CastWorld(), np.zeros((0, 3)), np.zeros(0), np.zeros(0, int))
    assert out.shape == (0, 35) and out.dtype == np.float32
    empty = sensor.perceive(CastWorld(), np.zeros((2, 3)), np.zeros(2), np.zeros(2, int))
    np.testing.assert_array_equal(empty.reshape(2, 5, 7)[..., 5], 1.0)
    with pytest.raises(ValueError, match="ray_distance"):
        RayPerception(0, [90], ["a"])
    with pytest.raises(ValueError, match="half_extents"):
        CastWorld().add_boxes(np.zeros((2, 3)), np.ones((3, 3)), 0.0, "a", 0)


def _reference_cast(o, d, center, half, yaw, radius=0.5, tmax=10.0):
    """Brute force: march the sphere along the ray and bisect the first contact, using the
    exact point-to-oriented-box distance. Returns inf for a start overlap or a miss."""

    def dist(p):
        local = yaw_rotate(p - center, -yaw)
        q = np.maximum(np.abs(local) - half, 0.0)
        return np.linalg.norm(q, axis=-1)

    if dist(o) <= radius + 1e-4:
        return np.inf
    ts = np.linspace(0.0, tmax, 4001)
    inside = dist(o + ts[:, None] * d) <= radius
    if not inside.any():
        return np.inf
    i = int(np.argmax(inside))
    lo, hi = ts[i - 1], ts[i]
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if dist(o + mid * d) <= radius else (mid, hi)
    return hi


def test_matches_brute_force_sphere_march_on_random_boxes():
    rng = np.random.default_rng(3)
    for case in range(200):
        center = rng.uniform(-4, 4, 3)
        half = rng.uniform(0.1, 2.0, 3)
        yaw = rng.uniform(0, 360)
        if case % 2:
            o = rng.uniform(-6, 6, 3)
        else:
            # close to the box: many of these starts lie beside an edge or a corner, inside
            # the sharp inflated box but outside the rounded one
            o = center + yaw_rotate(half + rng.uniform(0.2, 0.6, 3), yaw) * rng.choice([-1, 1], 3)
        # aim roughly at the box so most cases hit, some graze edges and corners
        d = center + rng.normal(0, 1.5, 3) - o
        d /= np.linalg.norm(d)
        expected = _reference_cast(o, d, center, half, yaw)
        o_local = yaw_rotate(o - center, -yaw)
        d_local = yaw_rotate(d, -yaw)
        got = sphere_cast_boxes(o_local, d_local, half, 0.5)
        got = got if got <= 10.0 else np.inf
        if np.isinf(expected):
            assert np.isinf(got) or got > 9.99
        else:
            assert got == pytest.approx(expected, abs=2e-3)


def test_vectorized_over_agents_rays_and_areas():
    rng = np.random.default_rng(0)
    world = CastWorld()
    n_areas = 6
    for g in range(n_areas):
        offset = np.array([100.0 * g, 0, 0])
        world.add_boxes(
            offset + rng.uniform(-5, 5, (4, 3)),
            rng.uniform(0.3, 2, (4, 3)),
            rng.uniform(0, 360, 4),
            ["a", "b", "c", None],
            g,
        )
    world.add_spheres([[0.0, 1.0, 0.0]], [0.7], "b", -1)
    sensor = RayPerception(
        12, [0, 45, 90, 135, 180, 110, 70], ["a", "b", "c"], start_offset=0.3, end_offset=1.0
    )
    origins = np.array([[100.0 * g, 1.0, 0.0] for g in range(n_areas)]) + rng.uniform(-1, 1, (n_areas, 3))
    yaws = rng.uniform(0, 360, n_areas)
    groups = np.arange(n_areas)
    batch = sensor.perceive(world, origins, yaws, groups)
    for i in range(n_areas):
        single = sensor.perceive(world, origins[i : i + 1], yaws[i : i + 1], groups[i : i + 1])
        np.testing.assert_array_equal(batch[i], single[0])
