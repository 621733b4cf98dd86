"""The extrinsic reward signal: the environment's own reward."""
