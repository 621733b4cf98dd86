"""The direct connection between RayEnvManager and its actors, and the compact form in which the
actors send observations when they are called as Ray methods (no Ray needed)."""

import os
import pickle
import socket
import threading
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo
from mlagents.envs.communicator_objects import CustomObservation
from mlagents.envs.ray_env_worker import (
    LOOPBACK,
    ChannelAddress,
    ChannelListener,
    channel_host,
    connect_channel,
    pack_all_brain_info,
    unpack_all_brain_info,
)
from mlagents.envs.tests.processes import port_is_free


def brain_info(n: int, cameras: int) -> BrainInfo:
    rng = np.random.default_rng(n)
    return BrainInfo(
        visual_observation=[[rng.random((4, 5, 3)) for _ in range(n)] for _ in range(cameras)],
        vector_observation=rng.random((n, 6)),
        text_observations=[f"text {i}" for i in range(n)],
        memory=np.zeros((0, 0)),
        reward=[float(x) for x in rng.normal(size=n)],
        agents=[f"$1-{i}" for i in range(n)],
        local_done=[bool(i % 2) for i in range(n)],
        vector_action=rng.random((n, 2)),
        text_action=[["a"] for _ in range(n)],
        max_reached=[i == 0 for i in range(n)],
        action_mask=np.ones((n, 3)),
        custom_observations=[CustomObservation() for _ in range(n)],
    )


def assert_same(actual: BrainInfo, expected: BrainInfo) -> None:
    for name, value in vars(expected).items():
        got = getattr(actual, name)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and got.shape == value.shape, name
            np.testing.assert_array_equal(got, value)
            assert got.flags.writeable, name
        elif name == "visual_observations":
            assert [len(camera) for camera in got] == [len(camera) for camera in value]
            for got_camera, camera in zip(got, value):
                for got_image, image in zip(got_camera, camera):
                    np.testing.assert_array_equal(got_image, image)
        else:
            assert got == value, name
            assert [type(item) for item in got] == [type(item) for item in value], name


def test_round_trip_keeps_every_field_and_type() -> None:
    infos = {"A": brain_info(3, cameras=2), "B": brain_info(0, cameras=1), "C": brain_info(2, cameras=0)}
    packed = pickle.loads(pickle.dumps(pack_all_brain_info(infos), protocol=5))
    unpacked = unpack_all_brain_info(packed)
    assert list(unpacked) == ["A", "B", "C"]
    for name, info in infos.items():
        assert_same(unpacked[name], info)


def test_per_agent_lists_travel_as_arrays() -> None:
    packed = pack_all_brain_info({"A": brain_info(5, cameras=1)})["A"]
    assert packed.rewards is not None and packed.rewards.dtype == np.float64
    assert packed.local_done is not None and packed.local_done.dtype == bool
    assert packed.agents is not None and packed.agents.shape == (5,)
    assert packed.visual_observations[0].shape == (5, 4, 5, 3)


def test_channel_host_is_loopback_on_the_managers_node_only() -> None:
    assert channel_host("node-a", "node-a", "10.1.2.3") == LOOPBACK
    assert channel_host("node-b", "node-a", "10.1.2.3") == "10.1.2.3"
    assert channel_host("node-b", None, "10.1.2.3") == "10.1.2.3"


def test_listener_accepts_only_the_holder_of_its_key() -> None:
    listener = ChannelListener(LOOPBACK)
    accepted: list[Connection | None] = []
    done = threading.Event()

    def accept() -> None:
        accepted.append(listener.accept(timeout=60.0))  # only a bound: the connections are the events
        done.set()

    thread = threading.Thread(target=accept)
    thread.start()
    client: Connection | None = None
    try:
        address = listener.address
        assert address.host == LOOPBACK and len(address.authkey) == 32
        with pytest.raises(AuthenticationError):
            connect_channel(address._replace(authkey=os.urandom(32)), timeout=10.0)
        assert not done.is_set()  # the refused peer did not end the wait
        client = connect_channel(address, timeout=10.0)
        assert done.wait(30.0)
        server = accepted[0]
        assert server is not None
        client.send(("step", [1, 2]))
        assert server.recv() == ("step", [1, 2])
        server.send("answer")
        assert client.recv() == "answer"
        server.close()
        assert client.poll(10.0)
        with pytest.raises(EOFError):  # the other end's close is seen as end of file
            client.recv()
    finally:
        thread.join(30.0)
        listener.close()
        if client is not None:
            client.close()
    assert port_is_free(address.port)


def test_listener_gives_up_when_nobody_connects() -> None:
    listener = ChannelListener(LOOPBACK)
    try:
        assert listener.accept(timeout=0.05) is None
    finally:
        listener.close()


def test_connecting_to_a_closed_port_fails_at_once() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind((LOOPBACK, 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionRefusedError):
        connect_channel(ChannelAddress(LOOPBACK, port, b"k" * 32), timeout=10.0)
