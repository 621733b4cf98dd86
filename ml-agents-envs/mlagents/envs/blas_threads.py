"""One BLAS thread for numpy in this process: :func:`use_single_blas_thread`.

The networks that run in numpy here (the trainer's fast action path, a build's ``.nn`` runtime) are
small: a product of a few dozen rows by a few hundred columns. numpy's BLAS splits a product over all
cores once it passes a size threshold, and next to the environment processes those threads wait for
each other: on a busy 2-core machine one small product then takes hundreds of milliseconds instead
of a few. A single thread is never slower at these sizes.
"""

from __future__ import annotations

import logging

from threadpoolctl import threadpool_limits

__all__ = ["use_single_blas_thread"]

LOGGER = logging.getLogger("mlagents.envs")

_done = False


def use_single_blas_thread() -> None:
    """Limit numpy's BLAS to one thread for the rest of this process (idempotent, cheap to repeat)."""
    global _done
    if _done:
        return
    _done = True
    # Not used as a context manager: the limit stays for the life of the process.
    threadpool_limits(limits=1, user_api="blas")
    LOGGER.debug("numpy's BLAS runs on one thread in this process.")
