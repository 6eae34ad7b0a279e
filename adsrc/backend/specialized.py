"""Specialized adjoints: a compiled adjoint rewritten for the kinds of one call's arguments.

``signature(values)`` is the cheap key the API computes at each call: per
argument its type, and for an array its dtype and shape (None for anything
else). ``specialized(compiled, key)`` returns the adjoint specialized for that
key (optimize/specialize.py, then the optimizer again), compiled once and kept
on the generic ``Compiled``, so it lives and dies with it (the compile cache
recompiles when an outside value or a rule changes). It returns None, and the
caller runs the generic adjoint, when no argument has a kind, when the
specialization changes nothing, or past ``MAX_SIGNATURES`` keys for one
function (a function called with ever new shapes is not compiled again and
again). Every pass here costs time in proportion to the adjoint's length, so
long functions are specialized too; the generic adjoint itself is finished
and loaded only if it runs (backend/pipeline.py's ``Compiled.defer``).
"""
from __future__ import annotations

import copy
import dataclasses
import types
from typing import Any, Sequence

import numpy as np

from ..ir.dataflow import names
from ..optimize import copy_adjoint, optimize as run_passes, owned, pullback_of
from ..optimize.fold import fold
from ..optimize.inline_writes import WriteInliner, immutable
from ..optimize.specialize import Specializer, signature_kinds
from ..rules.templates import Kind
from .pipeline import Compiled, collection_paused

MAX_SIGNATURES = 8
_SCALAR_TYPES = (float, int, np.float64)


def signature(values: Sequence[Any]) -> tuple | None:
    """The key of the arguments' kinds: a type, ``(dtype, shape)`` for an array, or None, per argument;
    None when no argument has a kind."""
    key = []
    known = False
    for value in values:
        kind = type(value)
        if kind is np.ndarray:
            key.append((value.dtype, value.shape))
            known = True
        elif kind is float or kind is np.float64 or kind is int:
            key.append(kind)
            known = True
        else:
            key.append(None)
    return tuple(key) if known else None


def _kind(part: Any) -> Kind | None:
    if part is None:
        return None
    if isinstance(part, tuple):
        dtype, shape = part
        return Kind(np.ndarray, dtype, shape) if dtype.kind in "fiub" else None
    return Kind(part)


def specialized(compiled: Compiled, key: tuple | None) -> Compiled | None:
    """``compiled`` specialized for the argument kinds ``key`` (see the module docstring), or None."""
    if key is None or compiled.generic is None:
        return None
    found = compiled.specialized.get(key, compiled)
    if found is not compiled:
        return found
    if len(compiled.specialized) >= MAX_SIGNATURES:
        return None
    with collection_paused():
        result = _build(compiled, key)
    compiled.specialized[key] = result
    return result


def describe(params: list[str], key: tuple) -> str:
    """``x: float, n: int`` for a title."""
    parts = []
    for p, part in zip(params, key):
        kind = _kind(part)
        parts.append(f"{p}: {kind!r}" if kind is not None else f"{p}: any")
    return ", ".join(parts)


def _build(compiled: Compiled, key: tuple) -> Compiled | None:
    generic = compiled.generic
    function = copy_adjoint(generic.function)
    module = dataclasses.replace(generic.module, extra=[], prune=True)
    taken = {n.id for n in names(function)} | set(module.runtime.values())
    taken |= {line.split(" = ", 1)[0] for line in module.header}
    namespace = dict(module.reads)
    aliases: dict[types.ModuleType, str] = {}

    def module_alias(alias: str, found: types.ModuleType) -> str:
        if namespace.get(alias) is found:
            return alias
        if found not in aliases:
            chosen, count = alias, 1
            while chosen in taken or chosen in namespace:
                count += 1
                chosen = f"{alias}_{count}"
            taken.add(chosen)
            aliases[found] = chosen
            module.extra.append(f"import {found.__name__}" if chosen == found.__name__
                                else f"import {found.__name__} as {chosen}")
        return aliases[found]

    params = signature_kinds(compiled.params, tuple(_kind(part) for part in key))
    runtime = module.runtime
    vjps = {label: fn for fn, label in generic.vjps.items()}
    # The loops' indexed gradients owned now rather than in optimize.finish, so that the kinds follow them
    # through their in-place updates (added_into of a number is an array, a thunk's accumulation may be a
    # thunk) and the specializer can write those updates as indexing (optimize/inline_writes.py).
    owned.run(function, pullback_of(function), generic.context)
    specializer = Specializer(function, params, namespace, vjps, runtime, generic.tape, module_alias)
    if not specializer.run():
        return None
    context = copy.copy(generic.context)
    inference = specializer.inference
    # a number read from a written array shares no memory with it: a restore only numbers read is dead
    context.write_aliases = {n for n in context.write_aliases if not immutable(inference.kinds(n))}
    run_passes(function, context)
    inference = inference.rebound(function)  # the optimizer keeps each name's values (Inference.rebound)
    WriteInliner(function, inference, runtime, vjps, module_alias).scalar_copies()
    fold(function, inference, generic.tape)  # temporaries read once, back into their reader
    module.title = module.title.replace("; ", f"; specialized for {describe(compiled.params, key)}; ", 1)
    source, live = module.assemble(function)
    return dataclasses.replace(compiled, function=live, source=source, generic=None, specialized={})
