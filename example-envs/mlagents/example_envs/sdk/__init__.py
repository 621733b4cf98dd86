"""The Unity side of the ML-Agents wire, written in Python (the example-environment SDK).

* ``scene.py``: the contract a scene implements (Scene, SceneSpec, BrainSpec, AgentGroup).
* ``academy.py``: the Academy engine (Unity's step rules, vectorized over agents).
* ``local.py``: LocalEnvironment, a scene in-process without the wire.
* ``wire.py`` / ``client.py`` / ``png.py``: protobuf conversion, the gRPC client, PNG images.
* ``cli.py``: ``python -m mlagents.example_envs <Name> [Unity arguments]``.
* ``brains.py`` / ``player.py``: brain types (external, heuristic, player, registered kinds),
  broadcast and recording settings of a build.
* ``demo_recorder.py``: DemonstrationRecorder, one brain's decisions to a ``.demo`` file.
* ``ray_perception.py``: the RayPerception3D sensor shared by several scenes.
* ``rendering.py``: offscreen MuJoCo rendering (camera observations, videos), headless via EGL.
"""
