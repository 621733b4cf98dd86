"""The intrinsic curiosity module (ICM) reward signal: :mod:`.signal` and its network :mod:`.model`."""
