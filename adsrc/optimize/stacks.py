"""Stacked accumulation: a loop's deferred contributions to a gradient, collected on a Stack.

Input: a lazy pullback. Output: for each loop, the outermost first, and each
gradient ``dW`` that the loop only adds to (every ``dW`` in it is one of
``dW = accumulate(dW, c)``), each deferred contribution
``dW = accumulate(dW, Thunk(vjp, *args), origin)`` becomes
``dW_stack.add(*args)`` on a ``dW_stack = Stack(vjp, origin)`` made just
before the loop, and ``dW = accumulate(dW, dW_stack.total())`` follows the
loop. The rule of each statement is known here, so a step no longer builds a
Thunk nor asks at run time what kind of contribution it is: it appends the
vjp's arguments to a list, and the Stack computes them together (one GEMM for
the outer products of ``W @ x_i``) when the loop ends or its memory bound is
reached (adsrc/values/stacks.py).

Inside such a loop ``dW`` is never read, so when its contributions are
summed does not change what the loop computes; after the loop it holds the
same sum (in another order, so equal to rounding). A loop holding a
``return``, a ``yield`` or a nested function is left alone.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

import gast

from ..ir.dataflow import blocks, names

_OPAQUE = (gast.Return, gast.Yield, gast.YieldFrom, gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal)


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    acc = context.accumulation
    if acc.eager:
        return False
    taken = {n.id for n in names(adjoint)}
    indexed = {label for label, vjp in context.vjps.items()
               if getattr(vjp, "add_into", None) is not None and getattr(vjp, "fuse", None) is None}
    return _visit(pullback.body, acc, taken, indexed)


def _visit(block: list[gast.stmt], acc, taken: set[str], indexed: set[str]) -> bool:
    changed = False
    out: list[gast.stmt] = []
    for stmt in block:
        before, after = _stack(stmt, acc, taken, indexed) if isinstance(stmt, (gast.For, gast.While)) else ([], [])
        out += before + [stmt] + after
        changed |= bool(before)
        for field in ("body", "orelse"):  # then the loops inside, for gradients this one reads
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                changed |= _visit(inner, acc, taken, indexed)
    block[:] = out
    return changed


def _only_added(loop: gast.stmt, acc) -> set[str]:
    """The names that ``loop`` reads and writes only in statements ``d = accumulate(d, c)``."""
    uses = Counter(n.id for n in gast.walk(loop) if isinstance(n, gast.Name))
    adds: Counter = Counter()
    for block in blocks(loop.body):
        for stmt in block:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                    and acc.is_lazy_add(stmt.value):
                total = stmt.value.args[0]
                if isinstance(total, gast.Name) and total.id == stmt.targets[0].id:
                    adds[total.id] += 1
    return {d for d, n in adds.items() if uses[d] == 2 * n}


def _fresh(base: str, taken: set[str]) -> str:
    label, k = base, 1
    while label in taken:
        k += 1
        label = f"{base}_{k}"
    taken.add(label)
    return label


def _stack(loop: gast.stmt, acc, taken: set[str], indexed: set[str]) -> tuple[list[gast.stmt], list[gast.stmt]]:
    """The statements to put before and after ``loop``, whose deferred additions it rewrites in place.
    A gradient that receives a read by index (``indexed``: vjps that add into a buffer and fuse nothing,
    such as ``x[t]``'s) is left to owned.py, which adds each into one buffer in place as it comes."""
    if any(isinstance(n, _OPAQUE) for n in gast.walk(loop)):
        return [], []
    gradients = _only_added(loop, acc)
    if not gradients:
        return [], []
    sites = [(block, i, found) for block in blocks(loop.body) for i, stmt in enumerate(block)
             for found in [acc.deferred_add(stmt)] if found is not None and found[0] in gradients]
    gradients -= {found[0] for _, _, found in sites if found[1].args[0].id in indexed}
    sites = [site for site in sites if site[2][0] in gradients]
    per_gradient = Counter(found[0] for _, _, found in sites)
    before: list[gast.stmt] = []
    after: list[gast.stmt] = []
    for block, i, (gradient, deferred, origin) in sites:
        vjp = deferred.args[0].id
        # dW_stack, or dW_matmul_da_stack where several statements of the loop add to dW
        stack = _fresh(f"{gradient}_stack" if per_gradient[gradient] == 1 else f"{gradient}_{vjp}_stack", taken)
        before.append(acc.stack(stack, vjp, origin))
        block[i] = gast.copy_location(acc.stacked(stack, deferred), block[i])
        after.append(acc.stack_total(gradient, stack))
    return before, after


def stacks_made(pullback: gast.FunctionDef, stack_types: set[str]) -> dict[str, gast.Assign]:
    """Each name of ``pullback`` assigned a new stack (``s = Stack(...)``, of one of ``stack_types``), with
    that assignment."""
    return {stmt.targets[0].id: stmt for stmt in gast.walk(pullback) if isinstance(stmt, gast.Assign)
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name) and stmt.value.func.id in stack_types}


def array_pushes(pullback: gast.FunctionDef, stack_type: str, arrays: Callable[[gast.expr], bool]) -> bool:
    """In a specialized pullback, each ``s.add(g, ...)`` on a Stack ``s`` whose cotangent ``g`` the kinds
    prove a NumPy array (``arrays(g)``) as ``s.push(g, ...)``, which does not look at its type
    (adsrc/values/stacks.py); whether any changed."""
    made = stacks_made(pullback, {stack_type})
    if not made:
        return False
    changed = False
    for node in gast.walk(pullback):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "add" \
                and isinstance(node.func.value, gast.Name) and node.func.value.id in made and node.args \
                and not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args) \
                and arrays(node.args[0]):
            node.func.attr = "push"
            changed = True
    return changed


def outer_pushes(pullback: gast.FunctionDef, stack_type: str, outer_type: str, outer_vjps: set[str],
                 vectors: Callable[[gast.expr, int], bool], taken: set[str]) -> bool:
    """In a specialized lazy pullback, each ``s = Stack(vjp, origin)`` of an outer-product vjp
    (``outer_vjps``: matmul's for its matrix) whose pushes ``s.push(g, None, W, x)`` the kinds prove
    float64 vectors ``g`` and ``x`` and a float64 matrix ``W`` (``vectors(node, ndim)``) as
    ``s = OuterStack(origin)`` with pushes ``s.push(g, x)``, which hold the factors and add them up as
    GEMMs (adsrc/values/stacks.py). Stacks pushed only once each, in adjacent statements, with one
    cotangent ``g`` (``W @ x + V @ y``) become one, ``dW_dV_stack.push(g, x, y)``, whose totals are
    ``dW_dV_stack.total(0)`` and ``.total(1)``: the stacked ``g`` is built once. A stack used in any
    other way is left. Whether any changed."""
    made = {stack: stmt for stack, stmt in stacks_made(pullback, {stack_type}).items()
            if stmt.value.args and isinstance(stmt.value.args[0], gast.Name)
            and stmt.value.args[0].id in outer_vjps and not stmt.value.keywords}
    if not made:
        return False
    pushes: dict[str, list[gast.Call]] = {s: [] for s in made}
    totals: dict[str, list[gast.Call]] = {s: [] for s in made}
    for node in gast.walk(pullback):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and isinstance(node.func.value, gast.Name) and node.func.value.id in pushes):
            continue
        stack, args = node.func.value.id, node.args
        if node.func.attr == "total" and not args and not node.keywords:
            totals[stack].append(node)
        elif node.func.attr == "push" and len(args) == 4 and not node.keywords \
                and isinstance(args[1], gast.Constant) and args[1].value is None \
                and vectors(args[0], 1) and vectors(args[2], 2) and vectors(args[3], 1):
            pushes[stack].append(node)
        else:
            pushes.pop(stack)
    uses = Counter(n.id for n in gast.walk(pullback) if isinstance(n, gast.Name) and n.id in pushes)
    typed = [s for s, calls in pushes.items()  # made once, otherwise only pushed to and totalled
             if calls and totals[s] and uses[s] == 1 + len(calls) + len(totals[s])]
    for stack in typed:
        made[stack].value.func.id = outer_type
        made[stack].value.args = made[stack].value.args[1:]
        for call in pushes[stack]:
            call.args = [call.args[0], call.args[3]]
    once = {pushes[s][0]: s for s in typed if len(pushes[s]) == 1}
    where = {id(stmt): block for block in blocks(pullback.body) for stmt in block}
    for block in list(blocks(pullback.body)):  # listed first: a merge rewrites blocks the walk would be in
        for run in _adjacent_pushes(block, once):
            stacks = [once[call] for call in run]
            creations = [made[s] for s in stacks]
            if len({id(where.get(id(c))) for c in creations}) != 1:  # made before one loop, as stacks.run does
                continue
            merged = _fresh("_".join(s.removesuffix("_stack") for s in stacks) + "_stack", taken)
            creations[0].targets[0].id = merged
            for k, stack in enumerate(stacks):
                for total in totals[stack]:
                    total.func.value.id = merged
                    total.args = [gast.Constant(value=k, kind=None)]
            run[0].func.value.id = merged
            run[0].args += [call.args[1] for call in run[1:]]
            gone = {id(call) for call in run[1:]} | {id(c) for c in creations[1:]}
            for inner in (block, where[id(creations[0])]):
                inner[:] = [stmt for stmt in inner if id(stmt) not in gone and id(getattr(stmt, "value", None))
                            not in gone]
    return bool(typed)


def _adjacent_pushes(block: list[gast.stmt], once: dict[gast.Call, str]) -> list[list[gast.Call]]:
    """The runs of at least two adjacent statements of ``block`` that are pushes in ``once`` of one cotangent."""
    runs: list[list[gast.Call]] = []
    previous = None
    for stmt in block:
        call = stmt.value if isinstance(stmt, gast.Expr) and stmt.value in once else None
        if call is not None and previous is not None and gast.dump(call.args[0]) == gast.dump(previous.args[0]):
            runs[-1].append(call)
        elif call is not None:
            runs.append([call])
        previous = call
    return [run for run in runs if len(run) > 1]
