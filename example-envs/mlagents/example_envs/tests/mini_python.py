"""A minimal Python side of the wire for the SDK tests (not a test module): a gRPC server
with the generated servicer whose every call the test answers by hand."""

from __future__ import annotations

import queue
from concurrent import futures

import grpc

from mlagents.envs.communicator_objects import (
    EnvironmentParametersProto,
    Header,
    UnityInput,
    UnityMessage,
    UnityRLInitializationInput,
    UnityRLInput,
)
from mlagents.envs.communicator_objects import unity_to_external_pb2_grpc as service

TIMEOUT = 30.0

CLOSE = UnityMessage(header=Header(status=400))


class MiniPython(service.UnityToExternalServicer):
    """The Python side reduced to its core: each call of the build is queued, and the test
    answers it with :meth:`reply` (the answer to call n is the next input, as in mlagents)."""

    def __init__(self) -> None:
        self.calls: queue.Queue[UnityMessage] = queue.Queue()
        self.replies: queue.Queue[UnityMessage] = queue.Queue()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        service.add_UnityToExternalServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    def Exchange(self, request, context):
        self.calls.put(request)
        return self.replies.get()

    def start(self) -> MiniPython:
        self.server.start()
        return self

    def next_call(self, timeout: float = TIMEOUT) -> UnityMessage:
        return self.calls.get(timeout=timeout)

    def reply(self, message: UnityMessage) -> None:
        self.replies.put(message)

    def handshake(self, seed: int = 0) -> UnityMessage:
        """Calls #1 and #2; returns call #1 (the initialization output)."""
        init = self.next_call()
        self.reply(
            UnityMessage(
                header=Header(status=200),
                unity_input=UnityInput(rl_initialization_input=UnityRLInitializationInput(seed=seed)),
            )
        )
        second = self.next_call()
        assert second.header.status == 200 and not second.HasField("unity_output")
        return init

    def exchange(self, rl_input: UnityRLInput) -> UnityMessage:
        self.reply(UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=rl_input)))
        return self.next_call()

    def reset(self, parameters: dict[str, float] | None = None, train: bool = True) -> UnityMessage:
        return self.exchange(
            UnityRLInput(
                command=1,
                is_training=train,
                environment_parameters=EnvironmentParametersProto(float_parameters=parameters or {}),
            )
        )

    def step(self, brain: str, actions: list[list[float]]) -> UnityMessage:
        rl_input = UnityRLInput()
        for row in actions:
            rl_input.agent_actions[brain].value.add(vector_actions=row)
        return self.exchange(rl_input)

    def close(self) -> None:
        # Release a call still waiting for an answer, then stop at once.
        self.replies.put(UnityMessage(header=Header(status=400)))
        self.server.stop(0)
