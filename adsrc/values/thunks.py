"""Lazy gradient contributions: Thunk and AccThunk, and where they materialize.

A rule's contribution to an input's gradient is a :class:`Thunk`: the rule
function and its arguments, held as data rather than as a closure, so that it
is cheap to build, can be inspected in a debugger, and can be fused with its
siblings later. A variable that receives several contributions holds one flat
:class:`AccThunk`. Accumulating appends to its list; merging two concatenates
them; it never holds another AccThunk, so its depth is 1 however many
contributions arrive, and materializing it never recurses.

Materializing an AccThunk is where laziness pays:

* contributions made by the same rule whose rule declares a batched ``fuse``
  form are computed as one operation (512 outer products become one GEMM);
* a rule that declares ``add_into`` adds straight into the accumulator's buffer
  (a row scattered into a matrix costs a row, not a matrix);
* every other contribution is added in place into one buffer that the
  accumulator allocated itself, never into an array that a user passed or a
  rule returned, since those may alias the user's data;
* past ``config.max_pending`` contributions or ``config.max_pending_bytes``
  pending bytes, the accumulator compacts what it holds into its buffer, which
  bounds memory in long loops.

Fusion may change the order in which contributions are summed, so lazy and
eager gradients agree to rounding (allclose), not always bit for bit.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..config import config
from .arrays import is_foreign, is_mutable, owned_copy
from .containers import add_tangents
from .zero import Deferred, ZeroTangent, zero

__all__ = ["ZeroTangent", "zero", "Thunk", "AccThunk", "unthunk", "accumulate", "depth"]


class Thunk(functools.partial, Deferred):
    """A deferred contribution ``fn(*args, **kwargs)``.

    By convention ``args[0]`` is the incoming cotangent; a thunk whose
    cotangent is ``zero`` contributes nothing and is dropped on accumulation.
    ``origin`` is the original ``file:line`` that produced it, for errors.
    It is a ``functools.partial``, built and called in C: one is made per
    deferred contribution, in the backward sweep's inner loops.

    >>> import numpy as np, adsrc
    >>> contribution = adsrc.Thunk(np.multiply, np.array([1.0, 2.0]), 3.0)
    >>> contribution
    Thunk(multiply(float64[2], float))
    >>> adsrc.unthunk(contribution).tolist()
    [3.0, 6.0]
    """

    __slots__ = ("origin",)

    @property
    def fn(self) -> Callable[..., Any]:
        return self.func

    @property
    def kwargs(self) -> dict | None:
        return self.keywords or None

    def materialize(self) -> Any:
        try:
            return self()
        except Exception as error:
            _explain(error, [self])
            raise

    @property
    def kind(self) -> str:
        return getattr(self.func, "__name__", repr(self.func))

    def __repr__(self) -> str:
        shapes = ", ".join(_describe(a) for a in self.args)
        where = f" from {self.origin}" if getattr(self, "origin", None) else ""
        return f"Thunk({self.kind}({shapes}){where})"


def _describe(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    if is_foreign(value):
        return f"{type(value).__module__.split('.')[0]} {value.dtype}{list(value.shape)}"
    return type(value).__name__


_SCALARS = frozenset({float, int, np.float64, np.float32, np.float16, np.longdouble})
_CONTAINER_BASES = (list, tuple, dict)


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    size = getattr(value, "nbytes", 8) if is_foreign(value) else 8
    return int(size) if size == size else 8  # a Dask array of unknown shape has nan bytes


class AccThunk(Deferred):
    """A flat list of pending contributions to one variable, plus an owned buffer.

    ``pending`` holds Thunks and already materialized values; ``buffer`` holds
    the sum of everything compacted so far (an array this accumulator
    allocated itself, or a scalar). It never contains another AccThunk.

    >>> import numpy as np, adsrc
    >>> total = adsrc.AccThunk()
    >>> total.add(np.ones(2))
    >>> total.add(adsrc.Thunk(np.multiply, np.ones(2), 2.0))
    >>> total.materialize().tolist()
    [3.0, 3.0]
    """

    __slots__ = ("pending", "buffer", "pending_bytes")

    def __init__(self) -> None:
        self.pending: list[Any] = []
        self.buffer: Any = None
        self.pending_bytes = 0

    def add(self, contribution: Any) -> None:
        """Append one contribution, splicing another AccThunk's items in flat."""
        if type(contribution) is AccThunk:
            for item in contribution.pending:
                self.add(item)
            if contribution.buffer is not None:
                self.add(contribution.buffer)
            return
        if contribution is zero:
            return
        if type(contribution) is Thunk:
            if contribution.args and contribution.args[0] is zero:
                return
            self.pending_bytes += _nbytes(contribution.args[0]) if contribution.args else 8
        else:
            self.pending_bytes += _nbytes(contribution)
        self.pending.append(contribution)
        if len(self.pending) > config.max_pending or self.pending_bytes > config.max_pending_bytes:
            self.compact()

    def compact(self) -> None:
        """Materialize everything pending into the owned buffer."""
        pending, self.pending, self.pending_bytes = self.pending, [], 0
        groups: dict[Callable, list[Thunk]] = {}
        for item in pending:
            if type(item) is Thunk and (
                getattr(item.fn, "fuse", None) is not None
                or getattr(item.fn, "add_into", None) is not None
            ):
                groups.setdefault(item.fn, []).append(item)
            elif type(item) is Thunk:
                self._add_value(item.materialize())
            else:
                self._add_value(item)
        for fn, thunks in groups.items():
            self.add_calls(fn, [(t.args, t.keywords) for t in thunks], thunks)

    def add_calls(self, fn: Callable, calls: list[tuple[tuple, dict]], where: list) -> None:
        """Add ``fn(*args, **kwargs)`` for each of ``calls`` into the buffer: as one batched
        operation if ``fn`` has a ``fuse`` form, in place if it has ``add_into``, else one by one.
        ``where`` holds what carries the calls' origins (Thunks, or a Stack), named if one fails."""
        fuse = getattr(fn, "fuse", None)
        if fuse is not None and len(calls) > 1:
            fused = _run(where, lambda: fuse(calls))
            if fused is not None:
                self._add_value(fused)
                return
        add_into = getattr(fn, "add_into", None)
        if add_into is not None and len(calls) > 1:
            (args, kwargs), calls = calls[0], calls[1:]
            self._add_value(_run(where, lambda: fn(*args, **kwargs)))
            if isinstance(self.buffer, np.ndarray) and self.buffer.dtype.kind != "c" and any(
                    np.iscomplexobj(args[0]) for args, _ in calls):
                self.buffer = self.buffer.astype(np.result_type(self.buffer, 1j))
            if isinstance(self.buffer, np.ndarray):
                for args, kwargs in calls:
                    _run(where, lambda: add_into(self.buffer, *args, **kwargs))
                return
        for args, kwargs in calls:
            self._add_value(_run(where, lambda: fn(*args, **kwargs)))

    def _add_value(self, value: Any) -> None:
        if value is zero:
            return
        buffer = self.buffer
        if isinstance(value, _CONTAINER_BASES) or isinstance(buffer, _CONTAINER_BASES):
            self.buffer = value if buffer is None else add_tangents(buffer, value)
            return
        if buffer is None:
            # Own the buffer: a rule's result may alias the user's data (a Dask array is immutable: kept).
            self.buffer = owned_copy(value) if isinstance(value, np.ndarray) or is_foreign(value) else value
        elif isinstance(buffer, np.ndarray) and buffer.shape == np.shape(value) and not is_foreign(value):
            dtype = np.result_type(buffer, value)
            if dtype != buffer.dtype:
                self.buffer = buffer = buffer.astype(dtype)
            np.add(buffer, value, out=buffer)
        elif type(value) is type(buffer) and is_mutable(buffer) and buffer.shape == value.shape \
                and np.result_type(buffer.dtype, value.dtype) == buffer.dtype:
            buffer += value  # an array of another library that adsrc owns and can write into (CuPy)
        else:
            self.buffer = buffer + value  # out of place: a Dask array is immutable; mixed or widening types

    def materialize(self) -> Any:
        if self.pending:
            self.compact()
        return zero if self.buffer is None else self.buffer

    def __len__(self) -> int:
        return len(self.pending)

    def __repr__(self) -> str:
        kinds: dict[str, int] = {}
        for item in self.pending:
            name = item.kind if type(item) is Thunk else "value"
            kinds[name] = kinds.get(name, 0) + 1
        parts = ", ".join(f"{k} x{n}" for k, n in kinds.items())
        pending = f"{len(self.pending)} pending: {parts}" if parts else "nothing pending"
        held = "" if self.buffer is None else f", buffer {_describe(self.buffer)}"
        return f"AccThunk({pending}{held})"


def _explain(error: Exception, thunks: list) -> None:
    """Add the original lines of failing contributions (Thunks, or Stacks) to an exception, once."""
    origins = sorted({t.origin for t in thunks if getattr(t, "origin", None)})
    if origins and not getattr(error, "_adsrc_explained", False):
        error._adsrc_explained = True
        error.add_note(
            f"while materializing the gradient contribution from {', '.join(origins)}; "
            f"set adsrc.config.eager_unthunk = True (or ADSRC_EAGER_UNTHUNK=1) to raise "
            f"at the accumulation statement itself"
        )


def _run(thunks: list, compute: Callable[[], Any]) -> Any:
    """Run a batched materialization, naming the original lines if it fails."""
    try:
        return compute()
    except Exception as error:
        _explain(error, thunks)
        raise


def unthunk(value: Any) -> Any:
    """Materialize a Thunk or AccThunk; other values are returned as they are.

    >>> import numpy as np, adsrc
    >>> float(adsrc.unthunk(adsrc.Thunk(np.add, 1.0, 2.0))), adsrc.unthunk(4.0)
    (3.0, 4.0)
    """
    kind = type(value)
    if kind is AccThunk:
        return value.materialize()
    if kind is Thunk:
        return value.materialize()
    return value


def accumulate(total: Any, contribution: Any, origin: str | None = None) -> Any:
    """Add a contribution to a running gradient, lazily.

    A first contribution is returned bare (no holder); a contribution whose
    cotangent is a scalar is computed and added at once, since deferring it
    cannot pay; otherwise the result is one flat AccThunk. ``origin`` is the
    original ``file:line`` of the statement, recorded on the Thunk for errors.

    >>> import numpy as np, adsrc
    >>> total = adsrc.accumulate(adsrc.zero, adsrc.Thunk(np.multiply, np.array([1.0, 2.0]), 3.0))
    >>> total = adsrc.accumulate(total, adsrc.Thunk(np.multiply, np.array([1.0, 1.0]), 2.0))
    >>> type(total).__name__, adsrc.unthunk(total).tolist()
    ('AccThunk', [5.0, 8.0])
    """
    kind = type(contribution)
    if kind is Thunk:
        args = contribution.args
        g = args[0]
        if g is zero:
            return total
        contribution.origin = origin
        kind_g = type(g)
        if kind_g in _SCALARS or (kind_g is np.ndarray and g.size <= config.small_size):
            contribution = contribution.materialize()
            kind = type(contribution)
        elif total is zero:
            return contribution
        elif type(total) is AccThunk:
            total.add(contribution)
            return total
    elif contribution is zero:
        return total
    if total is zero:
        return contribution
    kind_total = type(total)
    if kind_total is AccThunk:
        total.add(contribution)
        return total
    if isinstance(contribution, _CONTAINER_BASES) or isinstance(total, _CONTAINER_BASES):
        return add_tangents(total, contribution)
    if kind is not Thunk and kind is not AccThunk and kind_total is not Thunk:
        return total + contribution  # two values: a new sum, never written in place
    acc = AccThunk()
    acc.add(total)
    acc.add(contribution)
    return acc


def depth(value: Any) -> int:
    """How deeply thunks nest in ``value``: 0 for a plain value, 1 for a Thunk of
    plain values or a flat AccThunk of such Thunks; an AccThunk adds no level.

    Iterative, so that it can itself measure a pathological nesting.
    """
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        kind = type(item)
        if kind is AccThunk:
            stack.extend((p, level) for p in item.pending)
        elif kind is Thunk:
            stack.extend((a, level + 1) for a in item.args)
            deepest = max(deepest, level + 1)
    return deepest
