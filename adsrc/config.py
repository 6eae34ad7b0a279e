"""Run-time configuration of adsrc.

``config.eager_unthunk`` chooses between lazy accumulation (the default) and
eager unthunking, where every gradient contribution is materialized at the
statement that produces it. Eager mode is the debugging mode and the baseline
the lazy mode is measured against; both give the same gradients.

The switch has three layers, innermost first:

1. ``eager=`` passed to ``grad``/``value_and_grad``/``vjp`` for one function;
2. ``with adsrc.eager_unthunk(flag):`` for a block, context-local (contextvars),
   so threads and asyncio tasks do not see each other's setting;
3. ``config.eager_unthunk = flag`` for the whole process, initialised from the
   environment variable ``ADSRC_EAGER_UNTHUNK`` (``1``/``true``/``yes``) at import.

The setting is read each time a gradient function is called, not when it is
created.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Iterator

_override: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "adsrc_eager_unthunk", default=None
)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


class Config:
    """Process-wide settings; ``eager_unthunk`` is also context-local (see module doc).

    Attributes:
        eager_unthunk: materialize every contribution at once (debugging mode).
        max_pending: an AccThunk holding more pending contributions than this
            compacts them into its buffer, which bounds memory in long loops.
        max_pending_bytes: the same bound, counted in bytes of pending arrays.
        small_size: contributions with at most this many elements are added at
            once instead of being deferred: laziness cannot pay for them.
        specialize: ``grad`` and ``value_and_grad`` run the adjoint specialized
            for the kinds of the call's arguments (types, dtypes, shapes) where
            it differs from the generic one; False runs the generic adjoint.

    >>> import adsrc
    >>> adsrc.config.eager_unthunk  # lazy accumulation unless ADSRC_EAGER_UNTHUNK is set
    False
    >>> with adsrc.eager_unthunk():
    ...     adsrc.config.eager_unthunk
    True
    """

    def __init__(self) -> None:
        self._eager_default = _env_flag("ADSRC_EAGER_UNTHUNK")
        self.max_pending = 32
        self.max_pending_bytes = 64 * 2**20
        self.small_size = 1
        self.specialize = True

    @property
    def eager_unthunk(self) -> bool:
        local = _override.get()
        return self._eager_default if local is None else local

    @eager_unthunk.setter
    def eager_unthunk(self, flag: bool) -> None:
        self._eager_default = bool(flag)

    def __repr__(self) -> str:
        return (
            f"Config(eager_unthunk={self.eager_unthunk}, max_pending={self.max_pending}, "
            f"max_pending_bytes={self.max_pending_bytes}, small_size={self.small_size}, "
            f"specialize={self.specialize})"
        )


config = Config()


@contextlib.contextmanager
def eager_unthunk(flag: bool = True) -> Iterator[None]:
    """Set eager unthunking for the enclosed block in this context only (threads and tasks keep their own).

    Gradient functions read the setting when they are called, so one made
    outside the block runs eagerly inside it; ``eager=`` given to ``grad``
    wins over it.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(np.sin(x) * x)
    >>> df = adsrc.grad(f)
    >>> with adsrc.eager_unthunk():
    ...     eager = df(np.array([0.5, 1.0]))
    >>> bool(np.allclose(eager, df(np.array([0.5, 1.0]))))
    True
    """
    token = _override.set(bool(flag))
    try:
        yield
    finally:
        _override.reset(token)


def resolve_eager(eager: bool | None) -> bool:
    """The mode a gradient call runs in: an explicit ``eager=`` wins, then the context."""
    return config.eager_unthunk if eager is None else bool(eager)
