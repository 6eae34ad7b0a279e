"""Batching rules: how ``adsrc.vmap`` rewrites one primitive call to run on a whole batch.

A batched value carries the batch on its first axis; an unbatched one is the
same for every example. What the transform knows of a value is an
:class:`Info`: whether it is batched, and its rank per example (``None`` when
it cannot tell). Containers (tuples, lists, dicts) are described by a tuple,
list or dict of infos.

A rule is a function ``rule(name, args, kwargs, size)``: ``name`` is how the
program spells the primitive (``np.sum``), ``args`` and ``kwargs`` are
:class:`Val` (source text and info), ``size`` names the batch size. It returns
the batched call as a :class:`Val`, or ``None`` when this call is outside
what it covers; the transform then loops over the batch for that call (its
documented fallback), so a rule never has to guess. Every rule also serves a
call with no batched argument: it then tells the result's rank, and the call
is left as written.

Most rules follow from broadcasting: every ufunc is elementwise, so its
batched arguments get size-one axes after the batch axis to reach a common
rank (:func:`elementwise`). Reductions shift their axes past the batch axis
(a negative axis already counts from the end); the rest (matmul, dot,
transpose, reshape, concatenate, stack, einsum, linear-algebra stacks) are
declared one by one in :data:`RULES`.

>>> x = Val("x", Info(True, 1))
>>> elementwise("np.add", [x, Val("1.0", Info(False, 0))], {}, "n").code
'np.add(x, 1.0)'
>>> reduction("np.sum", [x], {"axis": Val("0", Info(False, 0))}, "n").code
'np.sum(x, axis=1)'
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..errors import RefusedWhenRun
from .registry import register_nondifferentiable

__all__ = ["Info", "Val", "Seq", "Display", "EXAMPLES_CHECK", "examples_are_arrays", "RULES", "rule_for", "aligned", "elementwise", "reduction", "literal", "join", "Mismatch", "NOT_LITERAL"]


@dataclass(frozen=True)
class Info:
    """What the transform knows of an array-like value: batched or not, and its rank per example."""
    batched: bool
    rank: Optional[int]

    def __post_init__(self) -> None:
        if self.rank is not None and self.rank < 0:  # a rule's mistake, caught before any code is made
            raise ValueError(f"a batching rule gave a negative rank ({self.rank})")


@dataclass(frozen=True)
class Val:
    """A value in the batched program: the source text that computes it, and its :class:`Info` (or a
    tuple, list or dict of infos for a container)."""
    code: str
    info: Any


@dataclass(frozen=True)
class Seq:
    """What is known of a list of unknown length whose items are all alike (a comprehension's): ``item``."""
    item: Any


@dataclass(frozen=True)
class Display(Val):
    """A list or tuple display (``[a, b]``): its members' values too, for rules that take a sequence."""
    parts: tuple = ()


Rule = Callable[[str, list, dict, str], Optional[Val]]
NOT_LITERAL = object()


def literal(val: Val) -> Any:
    """The Python value of a literal argument (``1``, ``(0, 2)``, ``None``), else NOT_LITERAL."""
    try:
        return ast.literal_eval(val.code)
    except (ValueError, SyntaxError, TypeError):
        return NOT_LITERAL


def is_batched(info: Any) -> bool:
    """Whether a value, or any value inside a container, is batched."""
    if isinstance(info, Info):
        return info.batched
    if isinstance(info, Seq):
        return is_batched(info.item)
    items = info.values() if isinstance(info, dict) else info
    return any(is_batched(i) for i in items)


def join(a: Any, b: Any) -> Any:
    """What is known of a value that is ``a`` on one path and ``b`` on another."""
    if isinstance(a, Info) and isinstance(b, Info):
        return Info(a.batched or b.batched, a.rank if a.rank == b.rank else None)
    if type(a) is type(b) and isinstance(a, (tuple, list)) and len(a) == len(b):
        return type(a)(join(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return {k: join(a[k], b[k]) for k in a}
    if isinstance(a, Seq) and isinstance(b, Seq):
        return Seq(join(a.item, b.item))
    if is_batched(a) or is_batched(b):  # a container on one path, something else on the other
        raise Mismatch(f"{a!r} and {b!r}")
    return Info(False, None)  # left as written wherever it is used: nothing batched depends on it


class Mismatch(ValueError):
    """Two paths give a name batched values of different kinds (a tuple and an array, tuples of different
    lengths): the transform refuses the function, naming the line."""


def call(name: str, args: list[str], kwargs: dict[str, str]) -> str:
    return f"{name}({', '.join(args + [f'{k}={v}' for k, v in kwargs.items()])})"


def _original(name: str, args: list[Val], kwargs: dict[str, Val]) -> str:
    return call(name, [a.code for a in args], {k: v.code for k, v in kwargs.items()})


def _arrays(vals: list[Val]) -> Optional[list[Info]]:
    """The infos of plain (not container) arguments, or None."""
    infos = [v.info for v in vals]
    return infos if all(isinstance(i, Info) for i in infos) else None


def expand(val: Val, rank: int) -> str:
    """A batched value of a lower rank given size-one axes after the batch axis, to ``rank``."""
    extra = rank - val.info.rank
    return val.code if extra <= 0 else f"{val.code}[:, {', '.join(['None'] * extra)}]"


def broadcast(val: Val, size: str) -> str:
    """An unbatched value repeated for every example (a copy: it is written to nothing but owned)."""
    return f"np.stack([{val.code}] * {size})"


def aligned(args: list[Val]) -> Optional[tuple[list[str], Info]]:
    """Elementwise arguments made to broadcast per example: batched ones of lower ranks get size-one axes
    after the batch axis; unbatched ones broadcast from the right as they did. None when a rank is
    unknown (or an argument is a container) and some argument is batched."""
    infos = _arrays(args)
    if infos is None:
        return None
    batched = any(i.batched for i in infos)
    if any(i.rank is None for i in infos):
        if not batched:
            return [a.code for a in args], Info(False, None)
        alone = [i for i in infos if i.batched]
        if len(alone) == 1 and all(i.batched or i.rank == 0 for i in infos):  # one batched value and numbers:
            return [a.code for a in args], alone[0]  # nothing to align, whatever its rank
        return None
    rank = max((i.rank for i in infos), default=0)
    return [expand(a, rank) if a.info.batched else a.code for a in args], Info(batched, rank)


def elementwise(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """Any ufunc, and functions that broadcast their arguments like one (np.where, np.clip)."""
    if set(kwargs) - {"dtype", "casting"} or any(is_batched(v.info) for v in kwargs.values()):
        return None
    done = aligned(args)
    if done is None:
        return None
    codes, info = done
    return Val(call(name, codes, {k: v.code for k, v in kwargs.items()}), info)


def _bind(args: list[Val], kwargs: dict[str, Val], names: tuple[str, ...]) -> Optional[dict[str, Val]]:
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound or k not in names:
            return None
        bound[k] = v
    return bound


def _shift(axis: int) -> int:
    return axis + 1 if axis >= 0 else axis


def _axes(bound: dict[str, Val], rank: int, key: str = "axis") -> Any:
    """The reduced axes as a normalized tuple of per-example axes, or NOT_LITERAL."""
    axis = literal(bound[key]) if key in bound else None
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int) and not isinstance(axis, bool):
        axis = (axis,)
    if not isinstance(axis, tuple) or not all(isinstance(a, int) and -rank <= a < rank for a in axis):
        return NOT_LITERAL
    return tuple(a % rank for a in axis)


def _reduction(names: tuple[str, ...], flat_none: bool = False) -> Rule:
    """A reduction over ``axis`` (an int, a tuple or None) with ``keepdims``; ``flat_none``: one that
    flattens for axis=None (argmax), so that only rank one allows it."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        bound = _bind(args, kwargs, names)
        if bound is None or not isinstance(bound[names[0]].info, Info) \
                or any(is_batched(v.info) for k, v in bound.items() if k != names[0]):
            return None
        x = bound[names[0]]
        keep = literal(bound["keepdims"]) if "keepdims" in bound else False
        whole = "axis" not in bound or literal(bound["axis"]) is None
        if x.info.rank is None and x.info.batched and whole and keep is False:
            # every axis of an example, whatever their number: the example flattened first
            out = {k: v.code for k, v in bound.items() if k not in (names[0], "axis")}
            return Val(call(name, [f"np.reshape({x.code}, ({size}, -1))"], {"axis": "1", **out}), Info(True, 0))
        if x.info.rank is None or keep not in (True, False):
            return None if x.info.batched else Val(_original(name, args, kwargs), Info(False, None))
        axes = _axes(bound, x.info.rank)
        if axes is NOT_LITERAL or (flat_none and literal(bound.get("axis", Val("None", None))) is None
                                   and x.info.rank != 1):
            return None if x.info.batched else Val(_original(name, args, kwargs), Info(False, None))
        rank = x.info.rank if keep else x.info.rank - len(axes)
        if not x.info.batched:
            return Val(_original(name, args, kwargs), Info(False, rank))
        shifted = tuple(a + 1 for a in axes)
        out = {k: v.code for k, v in bound.items() if k not in (names[0], "axis")}
        out = {"axis": repr(shifted[0] if len(shifted) == 1 else shifted), **out}
        return Val(call(name, [x.code], out), Info(True, rank))
    return rule


reduction = _reduction(("a", "axis", "dtype", "out", "keepdims"))
_STATISTIC = _reduction(("a", "axis", "dtype", "out", "ddof", "keepdims"))
_EXTREMUM = _reduction(("a", "axis", "out", "keepdims"))
_ARG = _reduction(("a", "axis", "out", "keepdims"), flat_none=True)
_MEDIAN = _reduction(("a", "axis", "out", "overwrite_input", "keepdims"))
_LOGSUMEXP = _reduction(("a", "axis", "b", "keepdims"))


def _like(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """A function whose result has its first argument's shape (zeros_like, copy, asarray, ...)."""
    if not args or not isinstance(args[0].info, Info) or any(is_batched(a.info) for a in args[1:]) \
            or any(is_batched(v.info) for v in kwargs.values()) or set(kwargs) - {"dtype", "order"}:
        return None  # shape= or subok= would change what comes back
    return Val(_original(name, args, kwargs), args[0].info)


def _array(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """np.array / np.asarray: a literal's rank, an array's info, a display of unbatched values of one rank
    one more axis; a display holding batched values is left to the loop."""
    if not args or len(args) > 2 or set(kwargs) - {"dtype", "copy"} or any(is_batched(v.info) for v in kwargs.values()):
        return None  # ndmin= would change the rank
    first = args[0]
    if isinstance(first.info, Info):
        return Val(_original(name, args, kwargs), first.info)
    value = literal(first)
    if value is not NOT_LITERAL:
        try:
            return Val(_original(name, args, kwargs), Info(False, np.ndim(value)))
        except ValueError:  # ragged
            return None
    if (isinstance(first, Display) or isinstance(first.info, Seq)) and is_batched(first.info) and len(args) == 1 \
            and not kwargs:
        return _joined(True)("np.stack", [first], {}, size)  # a list of batched values: stacked per example
    if isinstance(first.info, Seq):
        return None if is_batched(first.info) else Val(_original(name, args, kwargs), Info(False, None))
    if is_batched(first.info) or isinstance(first.info, dict):
        return None
    ranks = {m.rank if isinstance(m, Info) else None for m in first.info}
    rank = ranks.pop() + 1 if len(ranks) == 1 and None not in ranks else None
    return Val(_original(name, args, kwargs), Info(False, rank))


def _matmul_rank(a: int, b: int) -> int:
    """The rank of ``x @ y`` for operands of ranks ``a`` and ``b`` (both at least one): a vector operand
    loses its axis, two vectors give a number."""
    if a == 1 and b == 1:
        return 0
    return max(a, b) - (a == 1) - (b == 1)


def _matmul(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """``a @ b`` per example. NumPy's matmul broadcasts stacks, so a batched operand of rank two or more
    meets an unbatched one as it is; a batched vector is made a stack of row or column vectors."""
    if len(args) != 2 or kwargs or _arrays(args) is None:
        return None
    a, b = args
    ra, rb = a.info.rank, b.info.rank
    if ra is None or rb is None or min(ra, rb) < 1 or (name != "@" and name.endswith("dot") and max(ra, rb) > 2):
        return None if a.info.batched or b.info.batched else Val(_original(name, args, kwargs), Info(False, None))
    rank = _matmul_rank(ra, rb)
    if not (a.info.batched or b.info.batched):
        return Val(f"{a.code} @ {b.code}" if name == "@" else _original(name, args, kwargs), Info(False, rank))
    if a.info.batched and not b.info.batched:
        code = f"{a.code} @ {b.code}" if ra >= 2 or rb <= 2 else None
    elif b.info.batched and not a.info.batched:
        if rb >= 2:
            code = f"{a.code} @ {b.code}"
        elif ra == 1:
            code = f"{b.code} @ {a.code}"
        elif ra == 2:
            code = f"{b.code} @ {a.code}.T"
        else:
            code = None
    elif ra == rb and ra >= 2:
        code = f"{a.code} @ {b.code}"
    elif ra >= 2 and rb == 1:
        code = f"({a.code} @ {b.code}[..., None])[..., 0]"
    elif ra == 1 and rb >= 2:
        code = f"({a.code}[..., None, :] @ {b.code})[..., 0, :]"
    elif ra == rb == 1:
        code = f"({a.code}[:, None, :] @ {b.code}[:, :, None])[:, 0, 0]"
    else:
        code = None
    return None if code is None else Val(code, Info(True, rank))


def _transpose(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    bound = _bind(args, kwargs, ("a", "axes"))
    if bound is None or _arrays([bound["a"]]) is None or bound["a"].info.rank is None:
        return None
    x = bound["a"]
    rank = x.info.rank
    axes = literal(bound["axes"]) if "axes" in bound else None
    if axes is None:
        axes = tuple(reversed(range(rank)))
    if not isinstance(axes, (tuple, list)) or sorted(a % max(rank, 1) for a in axes) != list(range(rank)):
        return None if x.info.batched else Val(_original(name, args, kwargs), Info(False, rank))
    if not x.info.batched:
        return Val(_original(name, args, kwargs), Info(False, rank))
    if rank <= 1:
        return Val(x.code, x.info)
    order = (0,) + tuple(a % rank + 1 for a in axes)
    if rank == 2 and order == (0, 2, 1):
        return Val(f"np.swapaxes({x.code}, -1, -2)", x.info)
    return Val(f"np.transpose({x.code}, {order!r})", x.info)


def _reshape(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    bound = _bind(args, kwargs, ("a", "newshape", "order"))
    if bound is None or "newshape" not in bound or _arrays([bound["a"]]) is None:
        return None
    x, shape = bound["a"], literal(bound["newshape"])
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, tuple) or not all(isinstance(s, int) for s in shape) or "order" in bound:
        return None if x.info.batched else Val(_original(name, args, kwargs), Info(False, None))
    if not x.info.batched:
        return Val(_original(name, args, kwargs), Info(False, len(shape)))
    return Val(f"np.reshape({x.code}, ({size}, {', '.join(map(str, shape))}))", Info(True, len(shape)))


def _ravel(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    if len(args) != 1 or kwargs or _arrays(args) is None:
        return None
    if not args[0].info.batched:
        return Val(_original(name, args, kwargs), Info(False, 1))
    return Val(f"np.reshape({args[0].code}, ({size}, -1))", Info(True, 1))


def _expand_dims(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    bound = _bind(args, kwargs, ("a", "axis"))
    if bound is None or "axis" not in bound or _arrays([bound["a"]]) is None:
        return None
    x, axis = bound["a"], literal(bound["axis"])
    if not isinstance(axis, int) or x.info.rank is None:
        return None if x.info.batched else Val(_original(name, args, kwargs), Info(False, None))
    if not x.info.batched:
        return Val(_original(name, args, kwargs), Info(False, x.info.rank + 1))
    return Val(f"np.expand_dims({x.code}, {_shift(axis)})", Info(True, x.info.rank + 1))


def _swapaxes(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    bound = _bind(args, kwargs, ("a", "axis1", "axis2"))
    if bound is None or len(bound) != 3 or _arrays([bound["a"]]) is None:
        return None
    x, one, two = bound["a"], literal(bound["axis1"]), literal(bound["axis2"])
    if not (isinstance(one, int) and isinstance(two, int)):
        return None if x.info.batched else Val(_original(name, args, kwargs), x.info)
    if not x.info.batched:
        return Val(_original(name, args, kwargs), x.info)
    return Val(f"{name}({x.code}, {_shift(one)}, {_shift(two)})", x.info)


def _joined(stacking: bool) -> Rule:
    """np.concatenate and np.stack of a list or tuple display: unbatched members are repeated for every
    example, and the axis moves past the batch axis."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        bound = _bind(args, kwargs, ("arrays", "axis"))
        if bound is None:
            return None
        axis = literal(bound["axis"]) if "axis" in bound else 0
        seq = bound["arrays"].info
        if isinstance(seq, Seq) and isinstance(seq.item, Info):  # a comprehension's items, all alike
            rank = None if seq.item.rank is None else seq.item.rank + stacking
            if not seq.item.batched:
                return Val(_original(name, args, kwargs), Info(False, rank))
            if seq.item.rank is None or not isinstance(axis, int):
                return None
            return Val(f"{name}({bound['arrays'].code}, axis={_shift(axis)})", Info(True, rank))
        if not isinstance(seq, (list, tuple)):
            return None
        members = seq
        if not members or not all(isinstance(m, Info) for m in members):
            return None
        ranks = {m.rank for m in members if m.rank is not None}  # NumPy refuses members of different ranks
        rank = ranks.pop() if len(ranks) == 1 else None
        out_rank = None if rank is None else rank + stacking
        if not any(m.batched for m in members):
            return Val(_original(name, args, kwargs), Info(False, out_rank))
        if rank is None or not isinstance(axis, int) or not isinstance(bound["arrays"], Display):
            return None
        parts = [p.code if p.info.batched else broadcast(p, size) for p in bound["arrays"].parts]
        return Val(f"{name}([{', '.join(parts)}], axis={_shift(axis)})", Info(True, out_rank))
    return rule


def _created(rank: Optional[int]) -> Rule:
    """A function that makes an array from no array (np.zeros(shape), np.arange(n), np.eye(n)): unbatched,
    of the rank ``rank``, or for ``None`` of as many axes as its literal shape has."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        if any(is_batched(v.info) for v in [*args, *kwargs.values()]):
            return None
        shape = literal(args[0]) if args else literal(kwargs.get("shape", Val("None", None)))
        known = rank if rank is not None else (1 if isinstance(shape, int) else
                                               len(shape) if isinstance(shape, tuple) else None)
        if rank is not None and not all(isinstance(v.info, Info) and v.info.rank == 0
                                        for v in [*args, *kwargs.values()] if v.code not in ("None", "True", "False")
                                        and not (v.code.startswith(("'", '"')))):
            known = None  # np.linspace(a, b) of arrays a and b has more axes; so may anything given arrays
        return Val(_original(name, args, kwargs), Info(False, known))
    return rule


def _einsum(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """np.einsum with literal subscripts and no ellipsis: a letter of its own for the batch axis, on each
    batched operand and on the result."""
    if not args or kwargs or _arrays(args[1:]) is None:
        return None
    spec = literal(args[0])
    operands = args[1:]
    if not isinstance(spec, str) or "..." in spec or "->" not in spec:
        return None
    inputs, output = spec.replace(" ", "").split("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        return None
    if not any(o.info.batched for o in operands):
        return Val(_original(name, args, kwargs), Info(False, len(output)))
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in spec)
    terms = [letter + t if o.info.batched else t for t, o in zip(terms, operands)]
    batched_spec = repr(f"{','.join(terms)}->{letter}{output}")
    return Val(call(name, [batched_spec] + [o.code for o in operands], {}), Info(True, len(output)))


def _stacked(drop: int) -> Rule:
    """A linear-algebra function that works on stacks of matrices (inv, det): the batch is one more
    stacking axis; ``drop``: the ranks it removes."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        if len(args) != 1 or kwargs or _arrays(args) is None or args[0].info.rank is None \
                or args[0].info.rank < 2:
            return None if args and is_batched(args[0].info) else \
                Val(_original(name, args, kwargs), Info(False, None))
        x = args[0]
        return Val(_original(name, args, kwargs), Info(x.info.batched, x.info.rank - drop))
    return rule


def _len(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """``len`` of an array: its first axis per example, the same for every example; of a list, its length."""
    if len(args) == 1 and not kwargs and isinstance(args[0].info, (Seq, list, tuple, dict)):
        return Val(_original(name, args, kwargs), Info(False, 0))
    if len(args) != 1 or kwargs or not isinstance(args[0].info, Info):
        return None
    if not args[0].info.batched:
        return Val(_original(name, args, kwargs), Info(False, 0))
    return Val(f"np.shape({args[0].code})[1]", Info(False, 0))


def _where(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """np.where(c, a, b) is elementwise; np.where(c) gives indices, which differ from example to example."""
    return elementwise(name, args, kwargs, size) if len(args) == 3 and not kwargs else None


def _outputs(count: int) -> Rule:
    """A ufunc of several outputs (np.divmod, np.modf, np.frexp): elementwise, a tuple of results."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        found = elementwise(name, args, kwargs, size)
        return None if found is None else Val(found.code, tuple([found.info] * count))
    return rule


def _stacked_parts(*drops: int) -> Rule:
    """A linear-algebra function of a stack of matrices that returns several arrays (slogdet, eigh, svd,
    qr): the batch is one more stacking axis; ``drops``: the ranks each result has fewer than the input."""
    def rule(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
        if len(args) != 1 or kwargs or _arrays(args) is None or args[0].info.rank is None \
                or args[0].info.rank < 2:
            return None if args and is_batched(args[0].info) else \
                Val(_original(name, args, kwargs), tuple(Info(False, None) for _ in drops))
        x = args[0]
        return Val(_original(name, args, kwargs), tuple(Info(x.info.batched, x.info.rank - d) for d in drops))
    return rule


def _sum(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """Python's ``sum`` of a list of batched values of one rank (a comprehension, a display): added one by
    one as per example; a start value that is not batched and of no higher rank."""
    bound = _bind(args, kwargs, ("iterable", "start"))
    if bound is None:
        return None
    items = bound["iterable"].info
    members = [items.item] if isinstance(items, Seq) else list(items) if isinstance(items, (list, tuple)) else None
    start = bound.get("start")
    if members is None or not all(isinstance(m, Info) for m in members) or start is not None and (
            not isinstance(start.info, Info) or start.info.batched or start.info.rank is None):
        return None
    batched = [m for m in members if m.batched]
    ranks = {m.rank for m in batched}
    if not batched:
        return Val(_original(name, args, kwargs), Info(False, None))
    if len(ranks) != 1 or None in ranks or any(m.rank is None or m.rank > next(iter(ranks)) for m in members) \
            or start is not None and start.info.rank > next(iter(ranks)):
        return None
    return Val(_original(name, args, kwargs), Info(True, ranks.pop()))


def _sequence_item(val: Val) -> Any:
    """What each item of a sequence a for loop or zip steps over is, or None where it cannot tell (or
    where the items would be examples: an array batched along its first axis)."""
    info = val.info
    if isinstance(info, Seq):
        return info.item
    if isinstance(info, Info):
        return None if info.batched else Info(False, None if info.rank is None else info.rank - 1)
    if isinstance(info, (list, tuple)) and info:
        common = info[0]
        for member in info[1:]:
            try:
                common = join(common, member)
            except Mismatch:
                return None
        return common
    return None


def _zip(name: str, args: list[Val], kwargs: dict[str, Val], size: str) -> Optional[Val]:
    """zip and enumerate of lists of batched values: the same pairs, each a tuple of items."""
    if kwargs or not args:
        return None
    items = [_sequence_item(a) for a in args]
    if any(i is None for i in items):
        return None if any(is_batched(a.info) for a in args) else Val(_original(name, args, kwargs),
                                                                         Info(False, None))
    if name == "enumerate" and len(args) == 1:
        return Val(_original(name, args, kwargs), Seq((Info(False, 0), items[0])))
    if name == "enumerate":
        return None
    return Val(_original(name, args, kwargs), Seq(tuple(items)))


RULES: dict[Any, Rule] = {
    len: _len, sum: _sum, range: _created(1), zip: _zip, enumerate: _zip,
    np.where: _where, np.clip: elementwise,
    np.sum: reduction, np.prod: reduction, np.mean: reduction, np.nansum: reduction, np.nanmean: reduction,
    np.any: _EXTREMUM, np.all: _EXTREMUM, np.max: _EXTREMUM, np.min: _EXTREMUM, np.amax: _EXTREMUM,
    np.amin: _EXTREMUM, np.nanmax: _EXTREMUM, np.nanmin: _EXTREMUM,
    np.std: _STATISTIC, np.var: _STATISTIC, np.argmax: _ARG, np.argmin: _ARG, np.median: _MEDIAN,
    np.zeros_like: _like, np.ones_like: _like, np.empty_like: _like, np.full_like: _like, np.copy: _like,
    np.asarray: _array, np.array: _array, np.real: _like, np.imag: _like, np.conj: _like,
    np.matmul: _matmul, np.dot: _matmul, "@": _matmul,
    np.transpose: _transpose, np.reshape: _reshape, np.ravel: _ravel, np.expand_dims: _expand_dims,
    np.swapaxes: _swapaxes, np.concatenate: _joined(False), np.stack: _joined(True), np.einsum: _einsum,
    np.zeros: _created(None), np.ones: _created(None), np.empty: _created(None), np.full: _created(None),
    np.arange: _created(1), np.linspace: _created(1), np.eye: _created(2), np.identity: _created(2),
    np.linalg.slogdet: _stacked_parts(2, 2), np.linalg.eigh: _stacked_parts(1, 0), np.linalg.eig: _stacked_parts(1, 0),
    np.linalg.svd: _stacked_parts(0, 1, 0), np.linalg.qr: _stacked_parts(0, 0),
    np.linalg.inv: _stacked(0), np.linalg.det: _stacked(2), np.linalg.cholesky: _stacked(0),
}

_scipy_added = False


def _add_scipy_rules() -> None:
    """SciPy's rules, once the program has imported scipy.special (adsrc never imports SciPy itself)."""
    global _scipy_added
    special = sys.modules.get("scipy.special")
    if _scipy_added or special is None:
        return
    _scipy_added = True
    RULES[special.logsumexp] = _LOGSUMEXP


EXAMPLES_CHECK = "examples_are_arrays"  # its name in batched code


def examples_are_arrays(results: list, where: str) -> None:
    """The check batched code makes of the results of a call it ran once per example (the loop fallback)
    before stacking them: arrays or numbers. A list, tuple, dict or other object, stacked, would become an
    array on which the rest of the function would compute something else, so it is refused when made.

    >>> examples_are_arrays([np.ones(2), 1.0], "f.py:3")
    >>> examples_are_arrays([[1.0, 2.0]], "f.py:3")
    Traceback (most recent call last):
    ...
    adsrc.errors.RefusedWhenRun: f.py:3: under adsrc.vmap, a call run once per example that returns a list is not supported by adsrc; batch it with NumPy operations that return arrays, or return the list's items separately
    """
    for result in results:
        if not isinstance(result, (np.ndarray, np.generic, bool, int, float, complex)):
            raise RefusedWhenRun(f"under adsrc.vmap, a call run once per example that returns a "
                                 f"{type(result).__name__}", where,
                                 "batch it with NumPy operations that return arrays, or return the list's items "
                                 "separately")


register_nondifferentiable(examples_are_arrays)


def rule_for(func: Any) -> Optional[Rule]:
    """The batching rule of a primitive: declared in :data:`RULES`, else :func:`elementwise` for any
    ufunc, else None (the transform loops over the batch for that call).

    >>> rule_for(np.tanh) is elementwise, rule_for(np.sum) is reduction, rule_for(np.fft.fft)
    (True, True, None)
    """
    _add_scipy_rules()
    try:
        found = RULES.get(func)
    except TypeError:  # unhashable
        return None
    if found is None and isinstance(func, np.ufunc):
        return elementwise if func.nout == 1 else _outputs(func.nout)
    return found
