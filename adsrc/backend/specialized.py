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
from ..ir.stopwatch import phase
from ..optimize import copy_adjoint, dots, optimize as run_passes, owned, pullback_of
from ..optimize.fold import fold
from ..optimize.hoist import hoist
from ..optimize.indexed import scatter_adds
from ..optimize.inline_writes import WriteInliner, as_lists
from ..optimize.kinds import only_read, single
from ..optimize.specialize import Specializer, rules_of, signature_kinds
from ..optimize.stacks import array_pushes, outer_pushes
from ..optimize.write_kinds import float64_arrays, real_scalars
from ..rules import registry
from ..rules.templates import Kind, computes_as
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
        elif kind is list or kind is tuple:
            part = _sequence(value, kind)
            key.append(part)
            known = known or part is not None
        else:
            key.append(None)
    return tuple(key) if known else None


def _sequence(value: list | tuple, kind: type) -> tuple | None:
    """The key of a list or tuple whose elements are all arrays of one dtype and shape, ``(list, n, dtype,
    shape)``, or all of one number type, ``(list, n, float)``; None for any other (an empty one too).
    One look at each element (about 60 ns): the generated code only reads the sequence, and the key
    is computed again at each call."""
    if not value:
        return None
    first = value[0]
    element = type(first)
    if element is np.ndarray:
        dtype, shape = first.dtype, first.shape
        for item in value:
            if type(item) is not np.ndarray or item.shape != shape or (item.dtype is not dtype and item.dtype != dtype):
                return None
        return kind, len(value), dtype, shape
    if element is float or element is np.float64 or element is int:
        for item in value:
            if type(item) is not element:
                return None
        return kind, len(value), element
    return None


def _kind(part: Any) -> Kind | None:
    if part is None:
        return None
    if isinstance(part, tuple) and len(part) == 2:
        dtype, shape = part
        return Kind(np.ndarray, dtype, shape) if dtype.kind in "fiub" else None
    if isinstance(part, tuple):  # a list or tuple of elements of one kind
        item = _kind(part[2] if len(part) == 3 else part[2:])
        return None if item is None else Kind(part[0], shape=(part[1],), item=item)
    return Kind(part)


# the kinds of W @ x in a loop, as outer_pushes proves them (only the ranks matter to what it asks)
_F64 = np.dtype(np.float64)
_MATRIX_VECTOR = {"g": Kind(np.ndarray, _F64, (2,)), "ans": Kind(np.ndarray, _F64, (2,)),
                  "a": Kind(np.ndarray, _F64, (2, 3)), "b": Kind(np.ndarray, _F64, (3,))}


def specialized(compiled: Compiled, key: tuple | None) -> Compiled | None:
    """``compiled`` specialized for the argument kinds ``key`` (see the module docstring), or None."""
    if key is None or compiled.generic is None:
        return None
    found = compiled.specialized.get(key, compiled)
    if found is not compiled:
        return found
    if len(compiled.specialized) >= MAX_SIGNATURES:
        return None
    with collection_paused(), phase("specialize"):
        result = _build(compiled, key)
    compiled.specialized[key] = result
    return result


def specialized_note(name: str) -> str:
    """The second line of a specialized adjoint's title."""
    return f"What grad({name}) runs for arguments of these kinds; it runs the generic adjoint for others."


def generic_reason(compiled: Compiled, key: tuple | None) -> str:
    """Why ``specialized(compiled, key)`` gave None, so that grad runs the generic adjoint for such arguments."""
    if key is None:
        return "none of them is a float, an int or a NumPy array (or a list of them)"
    if key not in compiled.specialized and len(compiled.specialized) >= MAX_SIGNATURES:
        return f"it has been specialized for {MAX_SIGNATURES} other kinds of arguments already, the most it keeps"
    return "specializing it for their kinds changes nothing"


def describe(params: list[str], key: tuple) -> str:
    """``x: float, n: int`` for a title."""
    parts = []
    for p, part in zip(params, key):
        kind = _kind(part)
        parts.append(f"{p}: {kind!r}" if kind is not None else f"{p}: any")
    return ", ".join(parts)


def _one_float64_shape(kinds: frozenset | None, ndim: int) -> bool:
    """One kind: a float64 array of rank ``ndim`` (so of one shape at every step of a loop)."""
    return single(kinds) is not None and float64_arrays(kinds, ndim)


def _arrays(kinds: frozenset | None) -> bool:
    return bool(kinds) and all(k.type is np.ndarray for k in kinds)


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
            namespace[chosen] = found  # so that the kinds of what the templates compute with it are known
            module.extra.append(f"import {found.__name__}" if chosen == found.__name__
                                else f"import {found.__name__} as {chosen}")
        return aliases[found]

    vjps = {label: fn for fn, label in generic.vjps.items()}
    params = signature_kinds(compiled.params, tuple(_kind(part) for part in key))
    for param, kinds in params.items():  # a list or tuple whose elements' kind might change is not known
        if kinds and next(iter(kinds)).item is not None \
                and not only_read(function, param, namespace, vjps, generic.tape):
            params[param] = None
    runtime = module.runtime
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
    context.write_aliases = {n for n in context.write_aliases if not real_scalars(inference.kinds(n))}
    run_passes(function, context)
    inference = inference.rebound(function)  # the optimizer keeps each name's values (Inference.rebound)
    WriteInliner(function, inference, runtime, vjps, module_alias).scalar_copies()
    if runtime.get("Stack"):  # a Stack's cotangents that the kinds prove arrays: pushed without a look at them
        array_pushes(pullback_of(function), runtime["Stack"], lambda g: _arrays(inference.expr(g)))
        if not generic.context.accumulation.eager:  # a loop's outer products g xᵀ: their factors held, GEMMs
            matmul = registry.lookup(np.matmul)  # W @ x's vjp for W: g xᵀ of vectors, however it is spelled
            outer_pushes(pullback_of(function), runtime["Stack"], runtime["OuterStack"],
                         {label for label, (rule, position) in rules_of(vjps).items()
                          if position == 0 and computes_as(rule, matmul, _MATRIX_VECTOR)},
                         lambda node, ndim: _one_float64_shape(inference.expr(node), ndim), taken)
    # what a backward loop computes the same at every step (a sum's cotangent), computed before it
    hoist(pullback_of(function), inference, {runtime["Stack"], runtime["OuterStack"]})
    fold(function, inference, generic.tape)  # temporaries read once, back into their reader
    if not generic.context.accumulation.eager:  # a float's dot products with many vectors, computed as one
        dots.run(pullback_of(function), namespace, lambda node: single(inference.expr(node)), taken)
    # reads by slices (a stencil's u[1:-1], u[2:]) of a gradient that no one else holds, added into it in place
    scatter_adds(pullback_of(function).body, inference, rules_of(vjps), vjps, module_alias, runtime.get("cleared"))
    # last: a loop's owned float64 gradient vectors that it only indexes, as Python lists over the loop
    as_lists(function, inference, runtime, module_alias("np", np))
    known = tuple(None if params.get(p, ()) is None else part for p, part in zip(compiled.params, key))
    title = module.title.replace("; ", f"; specialized for {describe(compiled.params, known)}; ", 1)
    module.title = f"{title.splitlines()[0]}\n# {specialized_note(module.label)}"
    source, live = module.assemble(function)
    return dataclasses.replace(compiled, function=live, source=source, generic=None, specialized={})
