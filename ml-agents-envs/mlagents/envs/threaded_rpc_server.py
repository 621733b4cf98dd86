"""The ``UnityToExternal`` service on ``grpc.server``: handlers on pool threads hand each call over.

The fallback of :mod:`mlagents.envs.core_rpc_server` for a grpcio without the core server calls
that module uses. A handler thread receives the environment's call, hands its request to the
waiting thread and blocks until that thread hands back the answer.
"""

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from typing import Any, NamedTuple, ParamSpec, TypeVar

import grpc

from mlagents.envs.communicator_objects import (
    UnityInput,
    UnityMessage,
    add_UnityToExternalServicer_to_server,
)

P = ParamSpec("P")
T = TypeVar("T")

# How often a waiting handler thread looks for close or a vanished client (seconds).
HANDLER_POLL_INTERVAL = 0.25


class DaemonThreadPool(futures.Executor):
    """A fixed-size thread pool for the gRPC server whose threads never delay interpreter exit.

    ``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, before
    ``atexit`` handlers run; a handler thread waiting for Python's next reply would then block the
    exit forever, and the ``atexit`` handler that closes the environment (and releases that
    thread) would never run.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self._max_workers = max_workers
        self._name = name
        self._work: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> futures.Future[T]:
        future: futures.Future[T] = futures.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._work.put(_WorkItem(future, fn, args, kwargs))
            if self._idle > 0:
                self._idle -= 1
            elif len(self._threads) < self._max_workers:
                thread = threading.Thread(
                    target=self._run, name=f"{self._name}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # handed to whoever waits on the future
                    future.set_exception(error)
                else:
                    future.set_result(result)
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        for _ in threads:
            self._work.put(None)
        if wait:
            for thread in threads:
                thread.join()


class _WorkItem(NamedTuple):
    """A call for the pool: ``future`` receives ``fn(*args, **kwargs)``."""

    future: "futures.Future[Any]"
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class UnityToExternalServicerImplementation:
    """Hands each incoming call to the waiting thread and returns that thread's reply.

    The service ``UnityToExternal`` with its one method ``Exchange`` (registered with
    ``add_UnityToExternalServicer_to_server``, which needs nothing else of the object).

    ``incoming`` receives the environment's messages; ``replies`` receives Python's answers.
    """

    def __init__(self) -> None:
        self.incoming: queue.Queue[UnityMessage] = queue.Queue()
        self.replies: queue.Queue[UnityMessage] = queue.Queue()
        self.closed = threading.Event()
        self.goodbye = UnityMessage()

    def Exchange(self, request: UnityMessage, context: grpc.ServicerContext) -> UnityMessage:
        self.incoming.put(request)
        while True:
            try:
                return self.replies.get(timeout=HANDLER_POLL_INTERVAL)
            except queue.Empty:
                # Never park a server thread forever: leave when Python closed or the client vanished.
                if self.closed.is_set() or not context.is_active():
                    return self.goodbye


class ThreadedExchangeServer:
    """Listens on ``address``; same interface as ``CoreExchangeServer``.

    :raises OSError: the address cannot be bound.
    """

    def __init__(self, address: str, options: Sequence[tuple[str, Any]], name: str) -> None:
        self._thread_pool = DaemonThreadPool(max_workers=10, name=name)
        self.unity_to_external = UnityToExternalServicerImplementation()
        self._pending = False
        self._server = grpc.server(self._thread_pool, options=list(options))
        try:
            add_UnityToExternalServicer_to_server(self.unity_to_external, self._server)
            if self._server.add_insecure_port(address) == 0:
                raise OSError(f"cannot bind {address}")
            self._server.start()
        except BaseException:
            self._server.stop(None)
            self._thread_pool.shutdown(wait=False)
            raise
        self._closed = False

    @property
    def has_pending_call(self) -> bool:
        return self._pending

    def next_call(self, timeout: float) -> UnityMessage | None:
        try:
            message = self.unity_to_external.incoming.get(timeout=timeout)
        except queue.Empty:
            return None
        self._pending = True
        return message

    def answer(self, message: UnityMessage) -> None:
        self.unity_to_external.replies.put(message)
        self._pending = False

    def answer_input(self, inputs: UnityInput) -> None:
        message = UnityMessage()
        message.header.status = 200
        message.unity_input.CopyFrom(inputs)
        self.answer(message)

    def close(self, goodbye: UnityMessage, grace: float) -> None:
        if self._closed:
            return
        self._closed = True
        self.unity_to_external.goodbye = goodbye
        self.unity_to_external.replies.put(goodbye)
        self._pending = False
        self.unity_to_external.closed.set()
        # A short grace lets the goodbye reach the environment before connections are cut.
        self._server.stop(grace=grace).wait()
        # Handlers return within HANDLER_POLL_INTERVAL once ``closed`` is set.
        self._thread_pool.shutdown(wait=False)
