"""RayEnvManager and ``mlagents-learn --env-manager=ray`` on a real two-node Ray cluster.

The module starts one cluster for all its tests: a head node and a second node on this machine, each
with its own temporary folder, loopback address, two CPUs and a custom resource naming it; each
node's processes form their own session, which the fixture ends at the end (it never runs
``ray stop``, which would end every Ray process of the machine).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo
from mlagents.envs.env_manager import EnvManager
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.tests.example_builds import TiltPolicy
from mlagents.envs.tests.processes import process_alive, session_members
from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers import learn
from mlagents.trainers.settings import CommandLineError
from mlagents.trainers.tests.learn_helpers import (
    SHIPPED_SAC_CONFIG,
    LearnProcess,
    assert_nothing_left,
    cpu_load,
    finish_ok,
    model_digests,
    shipped_config,
    summary_scalars,
    trainer_config,
)

ray = pytest.importorskip("ray")

# Every test but the option checks uses the module's two-node Ray cluster.
pytestmark = pytest.mark.slow

from mlagents.envs.ray_env_manager import RAY_MISSING, RayEnvManager  # noqa: E402
from mlagents.envs.restart_policy import RestartPolicy  # noqa: E402

BUILDS = Path(__file__).resolve().parents[4] / "example-envs" / "builds"
BASIC = str(BUILDS / "Basic.x86_64")
BALL = str(BUILDS / "3DBall.x86_64")
# Ray's own processes on this machine get these loopback addresses (Ray turns 127.0.0.1 itself into
# the machine's network address; other loopback addresses it keeps).
HEAD_IP, SECOND_IP = "127.0.0.2", "127.0.0.3"
# Ray processes and drivers of the tests: no token (the cluster is only reachable on loopback) and
# no usage statistics.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


class RayCluster(NamedTuple):
    address: str
    sessions: list[int]


def end_sessions(sessions: list[int]) -> None:
    """SIGTERM every process of ``sessions``, then SIGKILL those still there after 5 s."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for sid in sessions:
            for pid in session_members(sid):
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5.0
        while any(session_members(sid) for sid in sessions) and time.monotonic() < deadline:
            time.sleep(0.1)


def start_node(temp_dir: str, ip: str, resource: str, head_port: int | None, gcs_address: str | None) -> int:
    """Run ``ray start`` for one node in a new session (it returns once the node runs); its session id.

    Ray gives a node 30 s to register, which a busy machine can exceed: a second attempt follows a
    failed one (after its processes were ended).
    """
    try:
        return _start_node(temp_dir, ip, resource, head_port, gcs_address)
    except RuntimeError:
        return _start_node(temp_dir, ip, resource, head_port, gcs_address)


def _start_node(temp_dir: str, ip: str, resource: str, head_port: int | None, gcs_address: str | None) -> int:
    ports = [find_free_port_range(1) for _ in range(8)]
    args = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        f"--node-ip-address={ip}",
        "--num-cpus=2",
        f"--resources={json.dumps({resource: 1})}",
        f"--temp-dir={temp_dir}",
        "--object-store-memory=100000000",
        f"--node-manager-port={ports[0]}",
        f"--object-manager-port={ports[1]}",
        f"--dashboard-agent-listen-port={ports[2]}",
        f"--dashboard-agent-grpc-port={ports[3]}",
        f"--runtime-env-agent-port={ports[4]}",
        f"--metrics-export-port={ports[5]}",
        "--disable-usage-stats",
        "--include-log-monitor=false",
    ]
    if head_port is not None:
        args += [
            "--head",
            f"--port={head_port}",
            "--include-dashboard=false",
            f"--dashboard-port={ports[6]}",
            f"--ray-client-server-port={ports[7]}",
        ]
    else:
        args += [f"--address={gcs_address}"]
    log_path = Path(temp_dir) / "ray-start.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            args,
            env={**os.environ, **RAY_ENV, "TMPDIR": temp_dir},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        status = process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        end_sessions([process.pid])
        raise
    if status != 0:
        end_sessions([process.pid])
        raise RuntimeError(f"ray start failed ({status}):\n{log_path.read_text()[-3000:]}")
    return process.pid


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """A two-node Ray cluster on this machine (nodes with the resources ``head_node`` and ``second_node``)."""
    for name in ("Basic", "3DBall"):
        if not (BUILDS / f"{name}.x86_64").exists():
            pytest.skip(f"example-envs/builds/{name}.x86_64 is missing")
    saved = {name: os.environ.get(name) for name in RAY_ENV}
    os.environ.update(RAY_ENV)
    temp_dirs = [tempfile.mkdtemp(prefix="mlr", dir="/tmp") for _ in range(2)]
    sessions: list[int] = []
    head_port = find_free_port_range(1)
    address = f"{HEAD_IP}:{head_port}"
    try:
        sessions.append(start_node(temp_dirs[0], HEAD_IP, "head_node", head_port, None))
        sessions.append(start_node(temp_dirs[1], SECOND_IP, "second_node", None, address))
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
        try:
            deadline = time.monotonic() + 60
            while sum(node["Alive"] for node in ray.nodes()) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert sum(node["Alive"] for node in ray.nodes()) == 2, ray.nodes()
        finally:
            ray.shutdown()
        yield RayCluster(address, sessions)
    finally:
        end_sessions(sessions)
        for temp_dir in temp_dirs:
            shutil.rmtree(temp_dir, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def node_resource_names() -> dict[str, str]:
    """Ray node id -> the custom resource that names the node (needs a Ray connection)."""
    names = {}
    for node in ray.nodes():
        for resource in ("head_node", "second_node"):
            if resource in node["Resources"]:
                names[node["NodeID"]] = resource
    return names


# ------------------------------------------------------------------------------------------ policies


def rewards_per_worker(manager: EnvManager, steps: int) -> dict[str, list[list[float]]]:
    """Step ``manager`` until every worker made ``steps`` steps; per worker, its agents' rewards of
    each of its first ``steps`` steps (agent ids start with ``$<worker>-``)."""
    manager.set_policy("3DBallLearning", TiltPolicy())  # type: ignore[arg-type]
    manager.reset()
    per_worker: dict[str, list[list[float]]] = defaultdict(list)
    while len(per_worker) < 4 or min(len(rewards) for rewards in per_worker.values()) < steps:
        for step in manager.step():
            info = step.current_all_brain_info["3DBallLearning"]
            worker = str(info.agents[0]).split("-")[0]
            per_worker[worker].append(list(info.rewards))
    return {worker: rewards[:steps] for worker, rewards in per_worker.items()}


def ball_factory(seed: int, base_port: int) -> Any:
    return lambda worker_id: UnityEnvironment(
        BALL, worker_id=worker_id, base_port=base_port, seed=seed + worker_id
    )


def assert_direct_connections(manager: RayEnvManager) -> None:
    """Every worker is stepped on a direct connection, to loopback on the manager's node and to
    the node's address elsewhere (the second node here)."""
    here = ray.get_runtime_context().get_node_id()
    node_ips = {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes()}
    hosts = []
    for worker in manager.env_workers:
        assert worker.conn is not None and worker.started is not None and worker.started.channel is not None
        node_id = worker.started.node_id
        hosts.append(worker.started.channel.host)
        assert hosts[-1] == ("127.0.0.1" if node_id == here else node_ips[node_id])
    assert any(host not in ("127.0.0.1", node_ips.get(here)) for host in hosts), hosts


# ------------------------------------------------------------------------------------------ tests


def test_same_episodes_as_subprocess_manager_across_two_nodes(ray_cluster: RayCluster) -> None:
    subprocess_manager = SubprocessEnvManager(ball_factory(7, find_free_port_range(4)), 4)
    try:
        expected = rewards_per_worker(subprocess_manager, 40)
    finally:
        subprocess_manager.close()
    ray_manager = RayEnvManager(ball_factory(7, find_free_port_range(4)), 4, address=ray_cluster.address)
    try:
        names = node_resource_names()
        placed = [names[node_id] for node_id in ray_manager.worker_nodes if node_id is not None]
        assert sorted(placed) == ["head_node", "head_node", "second_node", "second_node"]
        assert_direct_connections(ray_manager)
        actual = rewards_per_worker(ray_manager, 40)
        build_pids = [worker.started.build_pid for worker in ray_manager.env_workers if worker.started]
    finally:
        ray_manager.close()
    assert actual == expected
    assert any(reward != 0.1 for rewards in expected.values() for step in rewards for reward in step)
    for pid in build_pids:
        assert pid is not None
        assert not process_alive(pid) or os.getsid(pid) != pid, f"build {pid} is still running"


@pytest.mark.parametrize("trainer", ["ppo", "sac"])
def test_learn_on_the_cluster(ray_cluster: RayCluster, tmp_path: Path, trainer: str) -> None:
    config = tmp_path / "config.yaml"
    if trainer == "sac":
        config.write_text(
            shipped_config("BasicLearning", source=SHIPPED_SAC_CONFIG, max_steps=800, summary_freq=400)
        )
    else:
        config.write_text(trainer_config(max_steps=800, summary_freq=400, buffer_size=256))
    base_port = find_free_port_range(4)
    run = LearnProcess(
        tmp_path,
        config,
        f"--env={BASIC}",
        "--train",
        "--run-id=ray",
        "--seed=3",
        "--num-envs=4",
        f"--base-port={base_port}",
        "--env-manager=ray",
        f"--ray-address={ray_cluster.address}",
    )
    output = finish_ok(run, ports=range(base_port, base_port + 4), timeout=240)
    started = [line for line in output.splitlines() if "Ray worker" in line and " started." in line]
    assert len(started) == 4, output[-4000:]
    assert len({line.split("(node ")[1].split(",")[0] for line in started}) == 2, started
    assert (tmp_path / "models" / "ray-0" / "BasicLearning.nn").exists()
    assert list((tmp_path / "summaries").glob("ray_BasicLearning/events.out.tfevents.*"))


@pytest.mark.timeout(540)  # two runs of up to 240 s, one after the other
@pytest.mark.parametrize("num_envs", [1, 4])
def test_deterministic_run_same_as_subprocess_manager(
    ray_cluster: RayCluster, tmp_path: Path, num_envs: int
) -> None:
    """``--deterministic`` with one and with four workers: the run on the two-node cluster (under
    CPU load) writes the same summaries, every scalar at every step, and the same checkpoints and
    exported models as the run with worker processes on this machine."""
    config = trainer_config(max_steps=600, summary_freq=150, buffer_size=256)
    base_port = find_free_port_range(8)
    common = [
        "--train",
        "--run-id=same",
        "--seed=5",
        f"--num-envs={num_envs}",
        "--deterministic",
        f"--env={BASIC}",
    ]
    runs = {}
    for index, (name, extra) in enumerate(
        (("processes", []), ("ray", ["--env-manager=ray", f"--ray-address={ray_cluster.address}"]))
    ):
        cwd = tmp_path / name
        cwd.mkdir()
        (cwd / "config.yaml").write_text(config)
        port = base_port + 4 * index
        if name == "ray":
            with cpu_load(2):
                run = LearnProcess(cwd, "config.yaml", *common, f"--base-port={port}", *extra)
                assert run.finish(timeout=240) == 0, run.output()[-4000:]
        else:
            run = LearnProcess(cwd, "config.yaml", *common, f"--base-port={port}", *extra)
            assert run.finish(timeout=240) == 0, run.output()[-4000:]
        assert_nothing_left(ports=range(port, port + num_envs), pgid=run.pid)
        runs[name] = (summary_scalars(cwd / "summaries"), model_digests(cwd / "models" / "same-0"))
    processes, on_ray = runs["processes"], runs["ray"]
    reward = processes[0][("same_BasicLearning", "Environment/Cumulative Reward")]
    # A summary every 150 global steps, at the trainer's step (which has counted the whole round
    # of environment steps by then, as in ML-Agents 0.9).
    assert [step // 150 for step, _ in reward] == [1, 2, 3, 4]
    assert on_ray[0] == processes[0]
    assert "BasicLearning.nn" in processes[1] and on_ray[1] == processes[1]


def test_options_check() -> None:
    with pytest.raises(CommandLineError, match="--ray-address needs --env-manager=ray"):
        learn.validate_options(learn.parse_command_line(["c.yaml", "--ray-address=auto"]))
    with pytest.raises(CommandLineError, match="--env-manager must be one of subprocess, ray, not 'dask'"):
        learn.validate_options(learn.parse_command_line(["c.yaml", "--env-manager=dask"]))
    run = learn.validate_options(
        learn.parse_command_line(["c.yaml", "--env-manager=ray", "--ray-address=h:1"])
    )
    assert (run.env_manager, run.ray_address) == ("ray", "h:1")


def test_without_ray_the_flag_fails_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlagents.envs.ray_env_manager as ray_env_manager

    monkeypatch.setattr(ray_env_manager, "ray_is_installed", lambda: False)
    with pytest.raises(CommandLineError) as raised:
        learn.validate_options(learn.parse_command_line(["c.yaml", "--env-manager=ray"]))
    assert str(raised.value) == RAY_MISSING
    assert "\n" not in RAY_MISSING and "pip install" in RAY_MISSING
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    with pytest.raises(Exception, match="needs the optional package ray"):
        RayEnvManager(partial(UnityEnvironment, BASIC), 1)


class ConstantPolicy:
    """Basic: always move right."""

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        return ActionInfo(np.full((len(brain_info.agents), 1), 2.0, dtype=np.float32), None, None, None, None)


def test_killed_build_is_restarted(ray_cluster: RayCluster) -> None:
    factory = partial(UnityEnvironment, BASIC, base_port=find_free_port_range(2))
    manager = RayEnvManager(factory, 2, address=ray_cluster.address, restart_policy=RestartPolicy())
    old_pids: list[int | None] = []
    try:
        manager.set_policy("BasicLearning", ConstantPolicy())  # type: ignore[arg-type]
        manager.reset()
        for _ in range(5):
            manager.step()
        lost = manager.env_workers[1]
        assert lost.started is not None and lost.started.build_pid is not None
        old_pids = [worker.started.build_pid for worker in manager.env_workers if worker.started]
        os.killpg(lost.started.build_pid, signal.SIGKILL)
        interrupted = []
        while manager.restart_count == 0:
            manager.step()
        interrupted = manager.take_interrupted_steps()
        assert len(interrupted) == 1
        last, ended, _ = interrupted[0]
        assert last is not None and ended["BasicLearning"].local_done == [True]
        assert ended["BasicLearning"].max_reached == [True]
        assert manager.env_workers[1] is not lost and manager.restart_count == 1
        stepped: set[str] = set()
        while len(stepped) < 2:  # both workers step on
            for step in manager.step():
                stepped.add(str(step.current_all_brain_info["BasicLearning"].agents[0]).split("-")[0])
        new_pid = manager.env_workers[1].started.build_pid  # type: ignore[union-attr]
        assert new_pid not in old_pids
        old_pids.append(new_pid)
    finally:
        manager.close()
    assert not any(process_alive(pid) and os.getsid(pid) == pid for pid in old_pids if pid is not None)
