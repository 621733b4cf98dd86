"""RayPerception3D (example-environments spec section 2), shared by Hallway, PushBlock,
WallJump (and later FoodCollector, Pyramids, Soccer).

INTERFACE CONTRACT (implementation owned by the Hallway/PushBlock work; do not change
the signatures below without updating every user):

    world = CastWorld()                              # the static + moving colliders of a scene
    world.add_boxes(centers, half_extents, yaws, tags, groups)   # oriented boxes (yaw about +y, degrees)
    world.add_spheres(centers, radii, tags, groups)
    world.update_boxes(first_index, centers, yaws)   # move boxes (e.g. blocks, agents) each step
    world.update_spheres(first_index, centers)

    sensor = RayPerception(ray_distance, angles_deg, detectable_tags, start_offset=0.0, end_offset=0.0)
    obs = sensor.perceive(world, origins, yaws, groups, exclude=None)
        origins: float (k, 3) agent positions; yaws: float (k,) agent yaw in degrees
        (Unity convention: yaw 0 looks along +z, positive yaw turns toward +x);
        groups: int (k,) training-area id of each agent: a ray only sees colliders of its own
        group or of group -1 (shared); exclude: optional int (k,) collider index of the
        agent's own collider (overlaps at the cast start are ignored anyway, as in Unity).
        returns float32 (k, len(angles) * (len(tags) + 2)), laid out ray by ray exactly as
        the spec says (one-hot of the hit tag, "nothing hit" flag, distance / ray_distance).
    Tags are strings; a collider whose tag is not in detectable_tags is still hit
    (and then yields all zeros for that ray).
"""
