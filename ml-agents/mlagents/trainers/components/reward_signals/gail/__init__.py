"""The GAIL reward signal (with the optional VAIL bottleneck): :mod:`.signal` and the discriminator
:mod:`.model`."""
