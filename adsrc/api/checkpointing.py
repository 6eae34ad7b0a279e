"""Checkpointing: trade time for memory in the adjoint, by recomputing instead of storing.

* ``checkpoint(f)``: a function that computes ``f``; when a differentiated
  function calls it, the adjoint keeps only its arguments and runs ``f``'s
  adjoint again in the backward sweep, instead of keeping ``f``'s tape
  between the sweeps.
* ``checkpoint_loop(step, state, n, constants=None, every=None)``: the loop
  ``state = step(state, *constants)`` run ``n`` times, whose adjoint keeps one
  state every ``every`` steps (``ceil(sqrt(n))`` by default) and recomputes
  each segment in the backward sweep: ``O(n / every + every)`` states in
  memory instead of ``n`` tapes, for one more run of the loop.

Both are recognized by the compiler in any differentiated function (lazy or
eager, forward mode, second order; docs/checkpointing.md says what each
mode does), and behave as plain Python when nothing is differentiated.
"""
from __future__ import annotations

from typing import Any, Callable

from ..rules.checkpoint import Checkpointed, checkpoint_loop

__all__ = ["checkpoint", "checkpoint_loop", "Checkpointed"]


def checkpoint(func: Callable[..., Any]) -> Checkpointed:
    """``func``, differentiated by recomputation when a differentiated function calls it.

    Called normally, the result is ``func``. Called from a function that adsrc
    differentiates, the forward sweep runs plain ``func`` and keeps only its
    arguments and result; the backward sweep runs ``func``'s adjoint on those
    arguments again and then its pullback. Memory: none of ``func``'s
    intermediate values live between the sweeps. Time: ``func`` runs once
    more. ``func`` must compute the same value when run again (a function of
    its arguments); if the recomputation gives another value, the backward
    sweep raises ``RefusedWhenRun`` rather than return a wrong gradient.
    Usable as a decorator.

    >>> import numpy as np, adsrc
    >>> @adsrc.checkpoint
    ... def block(x, w):
    ...     return np.tanh(w @ x)
    >>> def loss(x, w):
    ...     for _ in range(4):
    ...         x = block(x, w)
    ...     return np.sum(x)
    >>> dw = adsrc.grad(loss, wrt=1)(np.ones(3), np.eye(3) * 0.5)
    """
    return Checkpointed(func)
