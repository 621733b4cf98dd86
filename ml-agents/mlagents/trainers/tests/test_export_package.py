"""The export package stands apart from the policy: it loads no trainer code, and it writes
whatever an :class:`~mlagents.trainers.export.ExportableModel` hands it."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mlagents.trainers import barracuda, tensorflow_to_barracuda
from mlagents.trainers.export import WRITERS, export_model
from mlagents.trainers.export.barracuda import convert_model, nn_format
from mlagents.trainers.export.network import DenseWeights, NetworkWeights, StreamWeights


def run_isolated(code: str) -> None:
    """Run ``code`` in a fresh interpreter (this process has loaded the trainers already)."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_importing_the_export_package_loads_no_trainer_code():
    run_isolated(
        """
        import sys
        import mlagents.trainers.export
        import mlagents.trainers.export.barracuda
        loaded = sorted(m for m in sys.modules if m.startswith("mlagents."))
        allowed = ("mlagents.trainers", "mlagents.trainers.export")
        stray = [m for m in loaded if m != allowed[0] and not m.startswith(allowed[1])]
        assert not stray, stray
        assert "tensorflow" not in sys.modules
        """
    )


@pytest.mark.slow
def test_the_policy_module_imports_the_exporter_without_ppo():
    run_isolated(
        """
        import sys
        import mlagents.trainers.tf_policy
        assert "mlagents.trainers.export" in sys.modules
        ppo = [m for m in sys.modules if m.startswith("mlagents.trainers.ppo")]
        assert not ppo, ppo
        """
    )


def tiny_network() -> NetworkWeights:
    """Discrete, one branch of 2 actions, 3 vector observations, one hidden layer of 4 units."""
    rng = np.random.default_rng(0)
    hidden = DenseWeights(rng.normal(size=(3, 4)).astype(np.float32), np.zeros(4, np.float32))
    return NetworkWeights(
        vector_observation_size=3,
        visual_observation_shapes=[],
        action_sizes=[2],
        is_continuous=False,
        use_recurrent=False,
        memory_size=0,
        version_number=2,
        normalizer=None,
        streams=[StreamWeights(visual=[], vector=[hidden])],
        policy_branches=[DenseWeights(rng.normal(size=(4, 2)).astype(np.float32), None)],
    )


class StaticModel:
    """An ExportableModel that is no LearningModel."""

    def export_weights(self) -> NetworkWeights:
        return tiny_network()


def test_export_model_writes_every_default_format(tmp_path):
    paths = export_model(StaticModel(), str(tmp_path / "deep" / "Brain"))
    assert paths == [str(tmp_path / "deep" / "Brain.nn"), str(tmp_path / "deep" / "Brain.onnx")]
    data = (tmp_path / "deep" / "Brain.nn").read_bytes()
    assert int.from_bytes(data[:8], "little") == nn_format.BARRACUDA_VERSION
    assert (tmp_path / "deep" / "Brain.onnx").read_bytes()[:2] == b"\x08\x08"  # ModelProto ir_version 8
    assert set(WRITERS) == {".nn", ".onnx"}


def test_export_model_rejects_an_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"\.pb"):
        export_model(StaticModel(), str(tmp_path / "Brain"), (".pb",))
    assert list(tmp_path.iterdir()) == []


def test_converted_graph_reads_the_weights_it_is_given():
    model = convert_model(tiny_network())
    assert model.inputs == {"vector_observation": [-1, 1, 1, 3], "action_masks": [-1, 1, 1, 2]}
    assert {"action", "action_probs"} <= set(model.outputs)
    tensors = {t.name: t.data for layer in model.layers for t in layer.tensors}
    np.testing.assert_array_equal(
        tensors["main_graph_0/hidden_0/kernel"][:, 0, 0, :], tiny_network().streams[0].vector[0].kernel
    )


def test_v09_module_paths_still_work(tmp_path):
    assert barracuda.write is nn_format.write
    assert barracuda.LayerType is nn_format.LayerType
    assert tensorflow_to_barracuda.convert_model is convert_model

    class Policy:
        model = StaticModel()

    target = str(tmp_path / "Brain.nn")
    assert tensorflow_to_barracuda.export_policy(Policy(), target) == target
    with pytest.raises(ValueError):
        tensorflow_to_barracuda.export_policy(Policy(), str(tmp_path / "Brain.onnx"))
