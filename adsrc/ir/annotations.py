"""Named annotations on syntax nodes: how one pass tells a later one what it found.

A pass never hangs ad-hoc attributes on nodes; it calls ``set(node, KEY,
value)`` with one of the keys below, and the reader calls ``get``. Each key
says which pass writes it and what it holds, so a reader can find its
writer, and a deep copy of a node keeps its annotations.
"""
from __future__ import annotations

from typing import Any

PRIM = "prim"              # anf -> transforms: the Prim that differentiates ``t = op(args)``
SINGLE_USE = "single_use"  # anf -> reverse: temporaries read once, right after their definition
PUSHES = "pushes"          # reverse -> optimize.tape: the tape pushes that a pop statement undoes
HINT = "hint"              # front end -> naming.hint_for: a name for an expression's value (a closure's captures)

WRITTEN_LISTS = "written_lists"  # fence -> anf: the local lists ``xs[i] = v`` writes in place (frontend/lists.py)
WRITTEN_PARAMS = "written_params"  # fence -> pipeline, desugar: parameters whose given arrays the function
#   writes (name -> (kind, returned, where): kind "array" for y[i] = v, "update" for y op= e only), and
#   the updates that run in place (key "updates": their (line, column)); api/written.py runs such a call
TAPE_COPY = "tape_copy"    # reverse -> optimize.tape: ``h_prev = h``, a name for a value a later tape push saves

_KEYS = frozenset({PRIM, SINGLE_USE, PUSHES, HINT, TAPE_COPY, WRITTEN_LISTS, WRITTEN_PARAMS})
_MISSING = object()


def _field(key: str) -> str:
    if key not in _KEYS:
        raise KeyError(f"unknown annotation {key!r}; the keys are {sorted(_KEYS)}")
    return "adsrc_" + key


def set(node: Any, key: str, value: Any) -> None:  # noqa: A001 - reads as anno.set(node, KEY, value)
    setattr(node, _field(key), value)


def get(node: Any, key: str, default: Any = _MISSING) -> Any:
    """The annotation ``key`` of ``node``; ``default`` if it has none (KeyError without a default)."""
    value = getattr(node, _field(key), default)
    if value is _MISSING:
        raise KeyError(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')} has no {key!r} annotation")
    return value


def has(node: Any, key: str) -> bool:
    return hasattr(node, _field(key))
