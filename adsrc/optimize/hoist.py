"""Hoisting: what a backward loop computes the same at every step, computed once before it.

Input: a specialized pullback and its kinds (kinds.py). Output: the same
pullback where the statements of a loop's body that compute a value from
names the loop never assigns go before the loop, in their order, under the
comment of the line they came from:

    for _ in range(n_xi):                      dW_at_xi = np.zeros((10,))
        xi = tape.pop()                        dW_at_xi[0] += dsum_xi
        dW_at_xi = np.zeros((10,))     ->      for _ in range(n_xi):
        dW_at_xi[0] += dsum_xi                     xi = tape.pop()
        dW_stack.push(dW_at_xi, xi)                dW_stack.push(dW_at_xi, xi)

(the cotangent of ``(W @ xi)[0]`` inside ``sum(...)`` is the same one-hot
vector at every step). The loop then reads one array where it made one per
step. Inner loops go first, so what leaves an inner loop may leave the outer
one too. A statement is hoisted when

* it assigns a name that the loop assigns nowhere else and reads nowhere
  before it, and that appears nowhere outside the loop, from an expression
  of constants, of names the loop never assigns (numbers and arrays, by
  their kinds) and of names hoisted before it, with ``+``, ``-``, ``*``,
  unary ``-`` and NumPy's allocators (``np.zeros``, ``np.full``, ...):
  nothing that can raise or have an effect, since it now runs even when the
  loop runs no step;
* or it writes, by constant indices within the array's shape, into an array
  hoisted before it, and the loop reads that array only after the write;

and not an allocation the rest of the loop writes into by item (that array
is made anew at each step, and stays, with what reads it); and the loop uses
each hoisted name only as an operand of an operator, an argument of a
Stack's push, of an array's ``dot`` or of one of adsrc's own vjps, or a value
written into an item of an array it allocates (none of which keeps or
changes it), and writes in place into no array but those it allocates at
every step (so no step can change what the next one reads). The values are
the same, computed once: bit for bit what the loop computed at every step.
"""
from __future__ import annotations

from collections import Counter

import gast
import numpy as np

from ..ir.build import comment, is_comment
from ..ir.dataflow import blocks
from .kinds import Inference, library_primitive, own_rule_function
from .stacks import stacks_made

__all__ = ["hoist"]

_ALLOCATORS = frozenset({np.zeros, np.ones, np.full, np.zeros_like, np.ones_like, np.full_like})
_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.USub)
_SAFE_NODES = (gast.Name, gast.Constant, gast.Tuple, gast.BinOp, gast.UnaryOp, gast.Call, gast.Attribute,
               gast.Load, gast.keyword) + _OPERATORS
_STACK_METHODS = frozenset({"push", "add"})
_HOISTED = "  (the same at every step of the loop below)"  # ends the comment over hoisted statements
_PURE_METHODS = frozenset({"dot"})  # an array's methods that templates write: they keep and change nothing
_KNOWN_METHODS = _STACK_METHODS | _PURE_METHODS | {"append", "pop", "total"}  # and the tape's and Stacks'


def hoist(pullback: gast.FunctionDef, inference: Inference, stacks: set[str]) -> bool:
    """Hoist the loop-invariant statements of ``pullback``'s loops (see the module docstring);
    ``stacks`` names the Stack types of the generated code. Whether any moved."""
    loops = [b for b in blocks(pullback.body) if any(isinstance(s, (gast.For, gast.While)) for s in b)]
    if not loops:
        return False
    made = set(stacks_made(pullback, stacks))
    changed = False
    for block in reversed(loops):  # inner loops first: what they hoist may then leave the outer loop too
        i = 0
        while i < len(block):
            loop = block[i]
            moved = _invariant(loop, inference, made) if isinstance(loop, (gast.For, gast.While)) else []
            if moved and _named_outside(pullback, loop, moved):
                moved = []
            if moved:
                commented: list[gast.stmt] = []
                last = None
                for stmt in moved:  # under the original line each came from, as in the loop
                    said = _said_before(loop.body, stmt)
                    if said and said != last:
                        commented.append(comment(said + _HOISTED))
                    last = said
                    commented.append(stmt)
                gone = {id(m) for m in moved}
                body = loop.body  # without the moved statements, nor a comment hoisted with them before
                loop.body[:] = [stmt for k, stmt in enumerate(body) if id(stmt) not in gone and not (
                    is_comment(stmt) and stmt.value.value.text.endswith(_HOISTED) and k + 1 < len(body)
                    and id(body[k + 1]) in gone)] or [gast.Pass()]
                moved = commented
                block[i:i] = moved
                changed = True
            i += len(moved) + 1
    return changed


def _named_outside(pullback: gast.FunctionDef, loop: gast.stmt, moved: list[gast.stmt]) -> bool:
    """Whether a name the moved statements assign appears outside ``loop``: where the loop runs no
    step, it would then see the hoisted value instead of the one it had before the loop."""
    assigned = {stmt.targets[0].id for stmt in moved if isinstance(stmt, gast.Assign)
                and isinstance(stmt.targets[0], gast.Name)}
    everywhere = Counter(n.id for n in gast.walk(pullback) if isinstance(n, gast.Name) and n.id in assigned)
    inside = Counter(n.id for n in gast.walk(loop) if isinstance(n, gast.Name) and n.id in assigned)
    return everywhere != inside


def _said_before(body: list[gast.stmt], stmt: gast.stmt) -> str | None:
    """The text of the original-line comment that ``stmt`` comes under in ``body``."""
    said = None
    for other in body:
        if other is stmt:
            return said
        if is_comment(other):
            said = other.value.value.text.removesuffix(_HOISTED)
    return said


def _invariant(loop: gast.For | gast.While, inference: Inference, stacks: set[str]) -> list[gast.stmt]:
    """The statements of ``loop``'s body that can go before it, in their order (maybe none). An array
    the rest of the loop writes into by item stays in the loop (it is made anew at each step), and so
    does what reads it."""
    if loop.orelse:
        return []
    stores = Counter(n.id for n in gast.walk(loop) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load))
    allocated = _allocated(loop, inference)
    kept: set[str] = set()  # names the loop writes into by item after their allocation: not hoisted
    while True:
        chosen, hoisted = _candidates(loop, stores, kept, inference)
        if not chosen:
            return []
        rest = [stmt for index, stmt in enumerate(loop.body) if index not in chosen]
        written = {name for stmt in rest for name in _items_written(stmt)} & set(hoisted) & allocated
        if not written:
            break
        kept |= written
    fresh = allocated - set(hoisted)
    if any(_writes_in_place(stmt, inference, fresh) for stmt in rest) \
            or not all(_harmless_uses(stmt, set(hoisted), inference, stacks, fresh) for stmt in rest):
        return []
    return [loop.body[index] for index in chosen]


def _candidates(loop: gast.For | gast.While, stores: Counter, kept: set[str],
                inference: Inference) -> tuple[list[int], dict[str, int]]:
    """The indices of the body's statements that compute invariants (none that reads or assigns a name of
    ``kept``), and each hoisted name with the index of its last hoisted statement."""
    header = loop.iter if isinstance(loop, gast.For) else loop.test
    hoisted: dict[str, int] = {}
    chosen: list[int] = []
    first_read: dict[str, int] = {n.id: -1 for n in gast.walk(header) if isinstance(n, gast.Name)}
    first_read.update({name: -1 for name in kept})  # as if read first: never hoisted, nor what reads them
    for index, stmt in enumerate(loop.body):
        if _assigns_invariant(stmt, stores, hoisted, first_read, inference) \
                or _writes_hoisted(stmt, stores, hoisted, first_read, inference):
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
            hoisted[target.id if isinstance(target, gast.Name) else target.value.id] = index
            chosen.append(index)
            continue
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                first_read.setdefault(node.id, index)
    return chosen, hoisted


def _items_written(stmt: gast.stmt) -> set[str]:
    """The names whose items or attributes ``stmt`` stores into."""
    return {node.value.id for node in gast.walk(stmt) if isinstance(node, (gast.Subscript, gast.Attribute))
            and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name)}


def _assigns_invariant(stmt: gast.stmt, stores: Counter, hoisted: dict, first_read: dict,
                       inference: Inference) -> bool:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return False
    name = stmt.targets[0].id
    return stores[name] == 1 and name not in first_read and _safe(stmt.value, stores, hoisted, inference)


def _writes_hoisted(stmt: gast.stmt, stores: Counter, hoisted: dict, first_read: dict,
                    inference: Inference) -> bool:
    """``a[i] op= e`` or ``a[i] = e`` into a hoisted array ``a`` that nothing read yet, ``i`` constant
    indices within its shape, ``e`` invariant."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, _OPERATORS):
        target = stmt.target
    elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    else:
        return False
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
            and target.value.id in hoisted and target.value.id not in first_read):
        return False
    kinds = inference.kinds(target.value.id)
    kind = next(iter(kinds)) if kinds and len(kinds) == 1 else None
    if kind is None or kind.type is not np.ndarray or kind.shape is None:
        return False
    index = target.slice.elts if isinstance(target.slice, gast.Tuple) else [target.slice]
    if len(index) != len(kind.shape) or not all(
            isinstance(i, gast.Constant) and type(i.value) is int and -n <= i.value < n
            for i, n in zip(index, kind.shape)):
        return False
    return _safe(stmt.value, stores, hoisted, inference)


def _safe(value: gast.expr, stores: Counter, hoisted: dict, inference: Inference) -> bool:
    """Operators and allocators of invariant numbers and arrays: nothing that can raise or act."""
    for node in gast.walk(value):
        if not isinstance(node, _SAFE_NODES):
            return False
        if isinstance(node, gast.Name) and node.id not in hoisted:
            kinds = inference.expr(node)
            if stores[node.id] or not kinds or not all(
                    k.type in (float, int, np.float64) or k.type is np.ndarray for k in kinds):
                if not _module_name(node, value):
                    return False
        elif isinstance(node, gast.Call):
            if node.args and isinstance(node.args[0], gast.Starred) or inference.resolve(node.func) not in _ALLOCATORS:
                return False
        elif isinstance(node, gast.Attribute) and not _is_callee(node, value):
            return False
    return True


def _is_callee(node: gast.Attribute, within: gast.expr) -> bool:
    return any(isinstance(c, gast.Call) and c.func is node for c in gast.walk(within))


def _module_name(node: gast.Name, within: gast.expr) -> bool:
    """``np`` in ``np.zeros``: the module an allocator is read from."""
    return any(isinstance(a, gast.Attribute) and a.value is node and _is_callee(a, within) for a in gast.walk(within))


def _allocated(loop: gast.For | gast.While, inference: Inference) -> set[str]:
    """The names that ``loop`` assigns only from NumPy's allocators (``d = np.zeros(shape)``): a new array
    at each assignment, which nothing hoisted can share."""
    allocations = [node.targets[0] for node in gast.walk(loop) if isinstance(node, gast.Assign)
                   and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                   and isinstance(node.value, gast.Call) and inference.resolve(node.value.func) in _ALLOCATORS]
    made = {id(target) for target in allocations}
    other = {node.id for node in gast.walk(loop) if isinstance(node, gast.Name)
             and not isinstance(node.ctx, gast.Load) and id(node) not in made}
    return {target.id for target in allocations} - other


def _writes_in_place(stmt: gast.stmt, inference: Inference, fresh: set[str]) -> bool:
    """Whether ``stmt`` might write into an array: a store into an item or attribute, ``x op= e`` on
    anything but a number, an ``out=``, or a call whose effect is not known (other than a Stack's push
    or add, a list's append or pop, and adsrc's own vjps). A store into an item of an array the loop
    makes anew at every step (``fresh``: every assignment in the loop allocates it) is none of these."""
    for node in gast.walk(stmt):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name) and node.value.id in fresh:
            continue
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, (gast.Store, gast.Del)):
            return True
        if isinstance(node, gast.AugAssign):
            target = node.target
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                    and target.value.id in fresh:
                continue
            kinds = inference.kinds(target.id) if isinstance(target, gast.Name) else None
            if not kinds or not all(k.type in (float, int, np.float64) for k in kinds):
                return True
        if isinstance(node, gast.keyword) and node.arg == "out":
            return True
        if isinstance(node, gast.Call) and not _known_call(node, inference):
            return True
    return False


def _known_call(call: gast.Call, inference: Inference) -> bool:
    """A call that writes into no array: a list's or Stack's methods, adsrc's own vjps, NumPy's functions."""
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in _KNOWN_METHODS and isinstance(func.value, gast.Name):
        return True
    label = func.id if isinstance(func, gast.Name) else None
    if label in inference.vjps:
        return own_rule_function(inference.vjps[label])
    callee = inference.resolve(func)
    return callee is range or callee is len or library_primitive(callee)


def _harmless_uses(stmt: gast.stmt, hoisted: set[str], inference: Inference, stacks: set[str],
                   fresh: set[str]) -> bool:
    """Whether ``stmt`` reads the hoisted names only as operands, pushed on a Stack, passed to one of
    adsrc's own vjps, or written into an item of an array the loop allocates (``fresh``, which copies
    the value): nothing that could keep the array and change it later."""
    allowed: set[int] = set()
    for node in gast.walk(stmt):
        target = node.target if isinstance(node, gast.AugAssign) else \
            node.targets[0] if isinstance(node, gast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id in fresh:
            allowed.add(id(node.value))
        if isinstance(node, (gast.BinOp, gast.Compare)):
            operands = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.left, *node.comparators]
            allowed |= {id(o) for o in operands}
        elif isinstance(node, gast.UnaryOp):
            allowed.add(id(node.operand))
        elif isinstance(node, gast.Call):
            func = node.func
            stack_call = isinstance(func, gast.Attribute) and func.attr in _STACK_METHODS \
                and isinstance(func.value, gast.Name) and func.value.id in stacks
            label = func.id if isinstance(func, gast.Name) else None
            if stack_call or label in inference.vjps and own_rule_function(inference.vjps[label]):
                allowed |= {id(a) for a in node.args}
            elif isinstance(func, gast.Attribute) and func.attr in _PURE_METHODS:
                allowed |= {id(a) for a in node.args} | {id(func.value)}
    return all(id(n) in allowed for n in gast.walk(stmt) if isinstance(n, gast.Name) and n.id in hoisted
               and isinstance(n.ctx, gast.Load))
