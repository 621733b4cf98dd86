"""use_single_blas_thread leaves numpy's BLAS with one thread."""

import subprocess
import sys

SCRIPT = """
import numpy as np
from threadpoolctl import threadpool_info
from mlagents.envs.blas_threads import use_single_blas_thread
use_single_blas_thread()
use_single_blas_thread()
blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
assert blas, "numpy has no BLAS thread pool"
print(sorted({pool["num_threads"] for pool in blas}))
"""


def test_numpy_blas_runs_on_one_thread_afterwards() -> None:
    # A fresh interpreter: the limit lasts for the whole process.
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"


def test_the_build_side_model_runtime_uses_it() -> None:
    # Building the .nn runtime of a build (an empty model here) limits the threads.
    script = SCRIPT.replace(
        "use_single_blas_thread()\nuse_single_blas_thread()",
        "import mlagents.envs.blas_threads as threads\n"
        "from mlagents.example_envs.sdk.inference.engine import Engine\n"
        "from mlagents.example_envs.sdk.inference.nn_file import NNModel\n"
        "assert not threads._done\n"
        "Engine(NNModel(version=0, inputs={}, outputs=[], memories=[], layers=[]))\n"
        "assert threads._done\n",
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1]"
