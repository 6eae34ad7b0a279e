"""The systems measured on every workload: primal, hand, adsrc lazy and eager.

A system turns (workload, args) into a ``Prepared``: a zero-argument call to
time, and optionally a ``transform`` measurement (compile time: a first call
on a never-seen function object minus a warm call). A system that cannot run
raises ``Unavailable`` with a short reason, which the runner prints as ``n/a``
plus a footnote. frameworks.py adds autograd, jax and torch in the same shape.
"""
from __future__ import annotations

import statistics
import time
import types
from dataclasses import dataclass
from typing import Callable, Optional

from . import hand
from .checks import directional_fd_ok


class Unavailable(Exception):
    """This system cannot run this workload; the message is the footnote."""


@dataclass
class Prepared:
    call: Callable[[], object]            # one gradient (or primal) evaluation
    transform: Optional[Callable[[float], float]] = None  # warm s -> transform s
    traced: bool = True                   # tracemalloc sees its allocations
    grads: bool = True                    # returns a tuple of gradients
    self_check: Optional[Callable[[tuple], bool]] = None  # extra check of the answer


def fresh_function(f, np_module=None):
    """A new function object with f's code, so per-function caches miss.

    The code object gets one unused extra constant: code objects compare by
    value, and a cache keyed on ``f.__code__`` would otherwise still hit.
    ``np_module`` replaces the global ``np``, which lets frameworks.py run the
    same workload code on autograd.numpy, jax.numpy or a torch shim.
    """
    code = f.__code__.replace(co_consts=f.__code__.co_consts + (object(),))
    glb = f.__globals__ if np_module is None else {**f.__globals__, "np": np_module}
    return types.FunctionType(code, glb, f.__name__, f.__defaults__, f.__closure__)


def primal(wl, args):
    return Prepared(call=lambda: wl.f(*args), grads=False)


def hand_grad(wl, args):
    """The reference for 'ok'; itself checked by a finite difference on the spot."""
    g = hand.HAND[wl.name]
    return Prepared(call=lambda: g(*args),
                    self_check=lambda grads: directional_fd_ok(wl.f, args, wl.wrt, grads))


def _adsrc(eager):
    def prepare(wl, args):
        try:
            import adsrc
            grad = adsrc.grad
        except Exception as e:  # mid-edit package, missing API, ...
            raise Unavailable(f"adsrc not usable: {type(e).__name__}: {e}") from None
        g = grad(wl.f, wrt=wl.wrt, eager=eager)
        return Prepared(call=lambda: g(*args),
                        transform=lambda warm_s: _adsrc_transform(grad, wl, eager))

    return prepare


def _adsrc_transform(grad, wl, eager):
    """Transform seconds, measured on the workload's quick-size inputs.

    The source transformation never sees array sizes or trip counts, so small
    inputs give the same transform time; on the full accum100k (seconds per
    call) the call's own noise would swamp a few milliseconds of compiling.
    """
    small = wl.make_args(True)
    g = grad(wl.f, wrt=wl.wrt, eager=eager)
    warm = []
    for _ in range(5):
        t0 = time.perf_counter()
        g(*small)
        warm.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    grad(fresh_function(wl.f), wrt=wl.wrt, eager=eager)(*small)
    return max(0.0, time.perf_counter() - t0 - statistics.median(warm))


CORE = {
    "primal": primal,
    "hand": hand_grad,
    "adsrc-lazy": _adsrc(eager=False),
    "adsrc-eager": _adsrc(eager=True),
}
