"""Stacked contributions: one accumulation statement's deferred contributions across a loop's steps.

Where the compiler knows that a loop of the backward sweep only ever adds to
a gradient ``dW`` (it never reads it inside the loop), it replaces each step's
``dW = accumulate(dW, Thunk(matmul_da, g, None, W, x))`` by
``dW_stack.add(g, None, W, x)`` on a :class:`Stack` made before the loop,
and adds ``dW_stack.total()`` to ``dW`` after it (adsrc/optimize/stacks.py).
A step then costs one list append instead of a Thunk, a call of
``accumulate`` and a look at the kind of what it holds; the Stack knows its
rule from the start.

The total is computed as :class:`AccThunk` computes its pending thunks of one
rule: a rule with a batched ``fuse`` form computes all of them as one
operation (the outer products ``g_i x_iᵀ`` of ``W @ x_i`` as one GEMM, ``Gᵀ X``
with the ``g_i`` and ``x_i`` stacked as rows); one with ``add_into`` adds each
into one buffer; any other is computed call by call and summed. The bounds of
``config.max_pending`` and ``config.max_pending_bytes`` hold as for an
AccThunk (read when the Stack is made, before its loop): past either, the
Stack computes what it holds into its buffer.

:class:`OuterStack` is the typed form of a Stack for the commonest loop
contribution, the outer product ``g xᵀ`` of ``W @ x`` with vectors. A
specialized lazy adjoint uses it where the kinds prove its factors float64
vectors of fixed lengths (optimize/stacks.py ``outer_pushes``): a step appends
its two factors, and the GEMM ``Gᵀ X`` adds a batch into the buffer, with no
look at the calls.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..config import config
from .thunks import _SCALARS, AccThunk, _explain, _nbytes
from .zero import Deferred, zero

__all__ = ["OuterStack", "Stack"]

_NO_KEYWORDS: dict = {}  # shared by every call pushed; nothing writes into a call's keywords


class Stack(Deferred):
    """The pending calls of one vjp, one per loop step, and the sum of those already computed.

    ``origin`` is the original ``file:line`` of the statement, named if a
    call fails when computed.

    >>> import numpy as np, adsrc
    >>> from adsrc.values.stacks import Stack
    >>> stack = Stack(np.multiply, 'example.py:3')
    >>> for x in (np.ones(2), np.arange(2.0)):
    ...     stack.add(x, 2.0)
    >>> stack
    Stack(multiply x2 from example.py:3)
    >>> stack.total().tolist()
    [2.0, 4.0]
    """

    __slots__ = ("vjp", "origin", "calls", "pending_bytes", "sum", "number", "small", "max_pending", "max_bytes")

    def __init__(self, vjp: Callable, origin: str | None = None) -> None:
        self.vjp = vjp
        self.origin = origin
        self.calls: list[tuple[tuple, dict]] = []
        self.pending_bytes = 0
        self.sum = AccThunk()
        self.number: Any = None  # the sum of the contributions that were Python or NumPy floats
        # The settings, read once per loop rather than at every step.
        self.small, self.max_pending, self.max_bytes = config.small_size, config.max_pending, config.max_pending_bytes

    def add(self, *args: Any, **kwargs: Any) -> None:
        """Hold the call ``vjp(*args, **kwargs)``; a zero cotangent (``args[0]``) contributes nothing, and
        one of at most ``config.small_size`` elements is computed at once, as :func:`accumulate` does."""
        g = args[0]
        if type(g) is np.ndarray and g.size > self.small:
            self.pending_bytes += g.nbytes
        elif g is zero:
            return
        elif type(g) in _SCALARS or type(g) is np.ndarray:
            self._add_now(args, kwargs)
            return
        else:
            self.pending_bytes += _nbytes(g)
        calls = self.calls
        calls.append((args, kwargs))
        if len(calls) > self.max_pending or self.pending_bytes > self.max_bytes:
            self.compact()

    def push(self, *args: Any) -> None:
        """:meth:`add` for a call whose cotangent ``args[0]`` is known to be a NumPy array (a specialized
        adjoint's kinds prove it, optimize/stacks.py): no look at its type, no keywords. The same bounds
        hold (``config.small_size``, ``max_pending``, ``max_pending_bytes``)."""
        g = args[0]
        if g.size <= self.small:
            self._add_now(args, _NO_KEYWORDS)
            return
        calls = self.calls
        calls.append((args, _NO_KEYWORDS))
        self.pending_bytes += g.nbytes
        if len(calls) > self.max_pending or self.pending_bytes > self.max_bytes:
            self.compact()

    def _add_now(self, args: tuple, kwargs: dict) -> None:
        try:
            value = self.vjp(*args, **kwargs)
        except Exception as error:
            _explain(error, [self])
            raise
        kind = type(value)
        if kind is float or kind is np.float64:
            number = self.number
            self.number = value if number is None else number + value
        else:
            self.sum.add(value)

    def compact(self) -> None:
        """Compute the pending calls into the sum."""
        calls, self.calls, self.pending_bytes = self.calls, [], 0
        if calls:
            self.sum.add_calls(self.vjp, calls, [self])

    def total(self) -> Any:
        """The sum of every call added (``zero`` if none was)."""
        self.compact()
        total = self.sum.materialize()
        if self.number is None:
            return total
        return self.number if total is zero else total + self.number

    def __len__(self) -> int:
        return len(self.calls)

    def __repr__(self) -> str:
        kind = getattr(self.vjp, "__name__", repr(self.vjp))
        where = f" from {self.origin}" if self.origin else ""
        return f"Stack({kind} x{len(self.calls)}{where})"


class OuterStack(Deferred):
    """The outer products ``g xᵀ`` of one loop's steps, summed as GEMMs of their stacked factors.

    Each :meth:`push` holds a cotangent ``g`` and the vectors ``x`` it multiplies
    (one or more: ``W @ x + V @ y`` gives ``g xᵀ`` to ``dW`` and ``g yᵀ`` to
    ``dV``); each factor is a float64 vector whose length is the same at every
    push, as the kinds of the specialized adjoint prove. Past
    ``config.max_pending`` pushes, or ``config.max_pending_bytes`` of held
    factors, the batch is added into a buffer the stack owns as one GEMM
    ``Gᵀ [X Y ...]``, with the cotangents stacked as the rows of ``G`` and
    each push's vectors side by side as a row of the other factor; the bounds
    are those of :class:`Stack` (read when the stack is made). ``total(k)``
    is the sum for the ``k``-th vector.

    >>> import numpy as np
    >>> from adsrc.values.stacks import OuterStack
    >>> stack = OuterStack('example.py:3')
    >>> for k in range(3):
    ...     stack.push(np.array([1.0, 2.0]), np.array([k, 1.0]))
    >>> stack
    OuterStack(3 pending from example.py:3)
    >>> stack.total().tolist()
    [[3.0, 3.0], [6.0, 6.0]]
    """

    __slots__ = ("origin", "lefts", "rights", "limit", "max_pending", "max_bytes", "sum", "widths")

    def __init__(self, origin: str | None = None) -> None:
        self.origin = origin
        self.lefts: list[np.ndarray] = []  # the cotangent g of each push
        self.rights: list[np.ndarray] = []  # the vectors of each push, one push after another
        self.max_pending, self.max_bytes = config.max_pending, config.max_pending_bytes
        self.limit = 0  # pushes held before a batch is computed; set at the first push, from the factors' size
        self.sum: np.ndarray | None = None  # the products with every vector, side by side
        self.widths: list[int] = []  # the vectors' lengths

    def push(self, g: np.ndarray, *vectors: np.ndarray) -> None:
        """Hold the contributions ``np.outer(g, x)`` for each ``x`` of ``vectors``."""
        lefts = self.lefts
        lefts.append(g)
        self.rights.extend(vectors)
        if len(lefts) > self.limit:
            self.compact()

    def compact(self) -> None:
        """Add the held products into the buffer (after the first push: only set the bound)."""
        lefts, rights = self.lefts, self.rights
        if not lefts:
            return
        if self.limit == 0:
            vectors = rights[: len(rights) // len(lefts)]
            self.widths = [len(x) for x in vectors]
            row_bytes = lefts[0].nbytes + sum(x.nbytes for x in vectors)
            self.limit = max(1, min(self.max_pending, self.max_bytes // max(row_bytes, 1)))
            if len(lefts) <= self.limit:
                return
        try:
            product = _rows(lefts).T.dot(_rows(rights, len(lefts)))  # the method: no dispatch, as @ has
        except Exception as error:
            _explain(error, [self])
            raise
        self.lefts, self.rights = [], []
        if self.sum is None:
            self.sum = product  # a new array: the stack owns it
        else:
            np.add(self.sum, product, out=self.sum)

    def total(self, k: int = 0) -> Any:
        """The sum of the products with the ``k``-th vector of every push (``zero`` if none was pushed):
        an array of its own."""
        self.compact()
        if self.sum is None:
            return zero
        if len(self.widths) == 1:
            return self.sum
        start = sum(self.widths[:k])
        return self.sum[:, start: start + self.widths[k]].copy()

    def __len__(self) -> int:
        return len(self.lefts)

    def __repr__(self) -> str:
        where = f" from {self.origin}" if self.origin else ""
        return f"OuterStack({len(self.lefts)} pending{where})"


def _rows(vectors: list[np.ndarray], count: int | None = None) -> np.ndarray:
    """Float64 ``vectors`` in ``count`` rows (one each by default): their bytes joined where each is
    contiguous, one copy with no look at each element's type and shape; else concatenated."""
    count = len(vectors) if count is None else count
    try:
        return np.frombuffer(b"".join(vectors), dtype=np.float64).reshape(count, -1)
    except TypeError:  # a vector that is not contiguous
        return np.concatenate(vectors).reshape(count, -1)
