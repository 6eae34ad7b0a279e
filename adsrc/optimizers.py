"""Gradient-descent optimizers over pytrees: momentum SGD, RMSProp and Adam.

Two forms share one implementation of each update rule:

* loops, called as autograd's ``misc.optimizers`` are:
  ``adam(grad, x0, callback=None, num_iters=100, ...)`` calls ``grad(x, i)``
  with the current parameters (a tree of ``x0``'s structure) and the
  iteration number, then ``callback(x, i, g)`` if given, then takes a step,
  ``num_iters`` times, and returns the final parameters in ``x0``'s
  structure. The parameters are kept as one float64 vector between steps
  (``ravel_pytree``); ``grad`` and ``callback`` see them with ``x0``'s
  leaf shapes and dtypes.
* stateful optimizers, for a loop of your own: ``opt = Adam(step_size=0.01)``,
  ``state = opt.init(params)``, then each step
  ``updates, state = opt.update(grads, state)`` and
  ``params = apply_updates(params, updates)``. The state holds float64
  vectors.

Each optimizer's ``step(g, state)`` is its update rule, on the float64
vector ``g`` of the gradient's leaves; both forms call it. ``x0`` and the
trees given are never modified.

>>> import numpy as np, adsrc
>>> def loss(p):
...     return np.sum((p["w"] - 2.0) ** 2) + (p["b"] + 1.0) ** 2
>>> gradient = adsrc.grad(loss)
>>> out = adsrc.optimizers.adam(lambda p, i: gradient(p), {"w": np.zeros(3), "b": 0.0}, step_size=0.1,
...                             num_iters=300)
>>> np.round(out["w"], 3), round(out["b"], 3)
(array([2., 2., 2.]), -1.0)
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .api.ravel import Unravel, ravel_pytree
from .api.trees import tree_leaves, tree_map
from .errors import InvalidArgument

__all__ = ["SGD", "RMSProp", "Adam", "Optimizer", "apply_updates", "sgd", "rmsprop", "adam"]


class OptimizerState(NamedTuple):
    """An optimizer's state: the step count, its float64 vectors (named by the optimizer), and the layout of
    the parameters' leaves in those vectors."""

    count: int
    vectors: dict
    unravel: Unravel


class Optimizer:
    """The stateful form shared by :class:`SGD`, :class:`RMSProp` and :class:`Adam`.

    ``init(params)`` returns the state for parameters of ``params``' structure;
    ``update(grads, state, params=None)`` returns ``(updates, new_state)``, the
    updates a tree of the parameters' structure to add to them
    (:func:`apply_updates`). ``params`` is accepted for optimizers whose rule
    reads the parameters; these three do not.
    """

    def _vectors(self, size: int) -> dict:  # the state vectors of a new run
        raise NotImplementedError

    def step(self, g: np.ndarray, count: int, vectors: dict) -> tuple[np.ndarray, dict]:
        """The update rule: ``(delta, new_vectors)`` for the gradient vector ``g`` at step ``count`` (0, 1, ...)."""
        raise NotImplementedError

    def init(self, params: Any) -> OptimizerState:
        """The state before the first step, for parameters of ``params``' structure."""
        _, unravel = _ravel_real(params)
        return OptimizerState(0, self._vectors(unravel.size), unravel)

    def update(self, grads: Any, state: OptimizerState, params: Any = None) -> tuple[Any, OptimizerState]:
        """``(updates, new_state)`` for the gradient ``grads`` (a tree of the parameters' structure)."""
        g = state.unravel.ravel_like(grads, np.float64)
        delta, vectors = self.step(g, state.count, state.vectors)
        return state.unravel(delta), OptimizerState(state.count + 1, vectors, state.unravel)

    def run(self, grad: Callable[[Any, int], Any], x0: Any, callback: Callable | None, num_iters: int) -> Any:
        """The loop of the autograd-style functions: ``num_iters`` steps from ``x0``."""
        if isinstance(num_iters, bool) or not isinstance(num_iters, (int, np.integer)) or num_iters < 0:
            raise InvalidArgument(f"num_iters must be a non-negative integer, not {num_iters!r}")
        flat, unravel = _ravel_real(x0)
        x = flat.astype(np.float64)
        vectors = self._vectors(unravel.size)
        for i in range(num_iters):
            params = unravel(x)
            g = grad(params, i)
            if callback is not None:
                callback(params, i, g)
            delta, vectors = self.step(unravel.ravel_like(g, np.float64), i, vectors)
            x = x + delta
        return unravel(x)


def _ravel_real(params: Any) -> tuple[np.ndarray, Unravel]:
    if any(np.iscomplexobj(leaf) for leaf in tree_leaves(params)):
        raise InvalidArgument("adsrc.optimizers take real parameters; these have a complex leaf (optimize its real "
                              "and imaginary parts as two real arrays)")
    return ravel_pytree(params)


class SGD(Optimizer):
    """Gradient descent with momentum: ``v = mass * v - (1 - mass) * g``, then ``x = x + step_size * v``.

    ``v`` starts at zero; ``mass=0`` is plain gradient descent, ``x - step_size * g``.

    >>> import numpy as np
    >>> from adsrc.optimizers import SGD, apply_updates
    >>> opt = SGD(step_size=0.5, mass=0.0)
    >>> params = {"w": np.array([1.0, -2.0])}
    >>> state = opt.init(params)
    >>> updates, state = opt.update({"w": 2 * params["w"]}, state)
    >>> apply_updates(params, updates)
    {'w': array([0., 0.])}
    """

    def __init__(self, step_size: float = 0.1, mass: float = 0.9):
        self.step_size, self.mass = step_size, mass

    def _vectors(self, size: int) -> dict:
        return {"velocity": np.zeros(size)}

    def step(self, g: np.ndarray, count: int, vectors: dict) -> tuple[np.ndarray, dict]:
        velocity = self.mass * vectors["velocity"] - (1.0 - self.mass) * g
        return self.step_size * velocity, {"velocity": velocity}


class RMSProp(Optimizer):
    """RMSProp (Tieleman and Hinton, 2012): steps divided by a running root mean square of the gradient.

    ``r = gamma * r + (1 - gamma) * g**2``, then ``x = x - step_size * g / (sqrt(r) + eps)``;
    ``r`` starts at one (as in autograd), so that the first steps are not ``step_size / (1 - gamma)`` long.

    >>> import numpy as np
    >>> from adsrc.optimizers import RMSProp
    >>> opt = RMSProp(step_size=0.1)
    >>> updates, state = opt.update([np.array([3.0])], opt.init([np.array([1.0])]))
    >>> np.round(updates[0], 6)
    array([-0.223607])
    """

    def __init__(self, step_size: float = 0.1, gamma: float = 0.9, eps: float = 1e-8):
        self.step_size, self.gamma, self.eps = step_size, gamma, eps

    def _vectors(self, size: int) -> dict:
        return {"mean_square": np.ones(size)}

    def step(self, g: np.ndarray, count: int, vectors: dict) -> tuple[np.ndarray, dict]:
        mean_square = self.gamma * vectors["mean_square"] + (1.0 - self.gamma) * g ** 2
        return -self.step_size * g / (np.sqrt(mean_square) + self.eps), {"mean_square": mean_square}


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015): steps scaled by bias-corrected running moments of the gradient.

    At step ``t = 1, 2, ...``: ``m = b1 * m + (1 - b1) * g``, ``v = b2 * v + (1 - b2) * g**2``
    (both start at zero), ``m_hat = m / (1 - b1**t)``, ``v_hat = v / (1 - b2**t)``, then
    ``x = x - step_size * m_hat / (sqrt(v_hat) + eps)``. The first step is about ``step_size``
    long in each coordinate, whatever the gradient's scale.

    >>> import numpy as np
    >>> from adsrc.optimizers import Adam
    >>> opt = Adam(step_size=0.1)
    >>> updates, state = opt.update((np.array([40.0, -0.5]),), opt.init((np.zeros(2),)))
    >>> np.round(updates[0], 6)
    array([-0.1,  0.1])
    """

    def __init__(self, step_size: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.step_size, self.b1, self.b2, self.eps = step_size, b1, b2, eps

    def _vectors(self, size: int) -> dict:
        return {"m": np.zeros(size), "v": np.zeros(size)}

    def step(self, g: np.ndarray, count: int, vectors: dict) -> tuple[np.ndarray, dict]:
        m = self.b1 * vectors["m"] + (1.0 - self.b1) * g
        v = self.b2 * vectors["v"] + (1.0 - self.b2) * g ** 2
        m_hat = m / (1.0 - self.b1 ** (count + 1))
        v_hat = v / (1.0 - self.b2 ** (count + 1))
        return -self.step_size * m_hat / (np.sqrt(v_hat) + self.eps), {"m": m, "v": v}


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates``, leaf by leaf (a new tree; ``params`` is not modified).

    >>> from adsrc.optimizers import apply_updates
    >>> apply_updates({"a": 1.0, "b": (2.0,)}, {"a": 0.5, "b": (-1.0,)})
    {'a': 1.5, 'b': (1.0,)}
    """
    return tree_map(lambda p, u: p + u, params, updates)


def sgd(grad: Callable[[Any, int], Any], x0: Any, callback: Callable | None = None, num_iters: int = 200,
        step_size: float = 0.1, mass: float = 0.9) -> Any:
    """Gradient descent with momentum from ``x0`` (:class:`SGD`'s rule), ``num_iters`` steps.

    ``grad(x, i)`` returns the gradient at ``x`` (a tree of ``x0``'s structure)
    in iteration ``i``; ``callback(x, i, g)`` is called after each gradient.

    >>> import numpy as np, adsrc
    >>> from adsrc.optimizers import sgd
    >>> def loss(x):
    ...     return np.sum((x - 3.0) ** 2)
    >>> gradient = adsrc.grad(loss)
    >>> np.round(sgd(lambda x, i: gradient(x), np.zeros(2), num_iters=300), 4)
    array([3., 3.])
    """
    return SGD(step_size, mass).run(grad, x0, callback, num_iters)


def rmsprop(grad: Callable[[Any, int], Any], x0: Any, callback: Callable | None = None, num_iters: int = 100,
            step_size: float = 0.1, gamma: float = 0.9, eps: float = 1e-8) -> Any:
    """RMSProp from ``x0`` (:class:`RMSProp`'s rule), ``num_iters`` steps; called as :func:`sgd`.

    >>> import numpy as np, adsrc
    >>> from adsrc.optimizers import rmsprop
    >>> def loss(p):
    ...     return (p["a"] - 1.0) ** 2 + np.sum(p["b"] ** 2)
    >>> gradient = adsrc.grad(loss)
    >>> out = rmsprop(lambda p, i: gradient(p), {"a": 0.0, "b": np.ones(2)}, step_size=0.01, num_iters=500)
    >>> round(out["a"], 2), bool(np.all(np.abs(out["b"]) < 0.01))
    (1.0, True)
    """
    return RMSProp(step_size, gamma, eps).run(grad, x0, callback, num_iters)


def adam(grad: Callable[[Any, int], Any], x0: Any, callback: Callable | None = None, num_iters: int = 100,
         step_size: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """Adam from ``x0`` (:class:`Adam`'s rule, with bias correction), ``num_iters`` steps; called as :func:`sgd`.

    >>> import numpy as np, adsrc
    >>> from adsrc.optimizers import adam
    >>> def loss(w):
    ...     return np.sum((w - np.array([1.0, -2.0])) ** 2)
    >>> gradient = adsrc.grad(loss)
    >>> np.round(adam(lambda w, i: gradient(w), np.zeros(2), step_size=0.05, num_iters=500), 2)
    array([ 1., -2.])
    """
    return Adam(step_size, b1, b2, eps).run(grad, x0, callback, num_iters)
