"""The Unity side of the ML-Agents wire, written in Python (the example-environment SDK).

Its modules import one another one way only, from the data types up to the command line:

* data: ``specs.py`` (what a scene declares: SceneSpec, BrainSpec, AgentGroup, CameraResolution),
  ``messages.py`` (what the academy and Python exchange: AcademyInput, AcademyOutput, Command,
  DecisionBatch); ``png.py``, ``ray_perception.py`` (the RayPerception3D sensor shared by several
  scenes) and ``rendering.py`` (offscreen MuJoCo rendering, headless via EGL) need nothing else.
* the scene contract: ``scene.py`` (Scene, the hooks a scene implements); ``catalogue.py`` (the
  names under which scenes are started).
* brains that decide in the build: ``controller.py`` (the BrainController contract), the built-in
  types ``heuristic.py``, ``player.py`` and ``inference/`` (an exported ``.nn`` model),
  registered in ``brain_registry.py``; ``brains.py`` (BrainSettings: the brain types, broadcast,
  recordings and teachers of one build).
* the wire and recordings: ``wire.py`` (protobuf conversion), ``demo_recorder.py``
  (DemonstrationRecorder, one brain's decisions to a ``.demo`` file).
* engines: ``academy.py`` (the Academy: Unity's step rules, vectorized over agents), ``local.py``
  (LocalEnvironment, a scene in-process without the wire), ``client.py`` (the gRPC client of a
  build), ``frames.py`` and ``video.py`` (episode videos).
* the command line: ``arguments.py`` (every option of a build, read in one place), ``cli.py``
  (``python -m mlagents.example_envs <Name> [arguments]``, the entry point of a build).
"""
