"""Specialization: an adjoint rewritten for one signature of its arguments' kinds.

Input: an optimized adjoint, the kinds of its parameters (rules/templates.py:
Python types, and for arrays dtype and shape), the generated module's outside
names and the vjp functions its header binds. Output: the same adjoint where
the kinds decide what the generic code decides when it runs (kinds.py infers
them):

* a call of a rule's vjp, ``sin_dx(dsin_y, None, y)``, becomes the rule's
  template, ``dsin_y * math.cos(y)``, where the template is exact for the
  kinds of its operands (no zero guard, complex check or unbroadcast left);
* a deferred contribution ``Thunk(vjp, ...)`` becomes the same expression,
  computed at once, where its vjp has no batched form, its cotangent is
  small (the small-size eagerness of ``accumulate``, decided here), or it is
  a contribution to a real scalar (``dr`` of ``r * u``: holding it saves no
  arithmetic and no memory, and the template costs less than a Stack's call
  of the vjp), or one whose batched form would only sum the cotangents first
  (``x.T``'s); a large one that an AccThunk may batch with its siblings (a
  product's, matmul's outer products) stays a Thunk;
* ``d = accumulate(d, c)`` becomes ``d = d + c`` where neither can be a thunk;
  ``d = unthunk(d)`` goes where ``d`` cannot be one;
* a loop's iteration count, ``n = 0`` and ``n += 1`` in the forward sweep,
  becomes ``n = len(range(k))`` (or ``len(xs)`` over an array) where the loop
  cannot break.

The optimizer then runs again: copies such as ``dsin_y_times_0_5 = dy``
propagate away, and values no vjp reads any more leave the tape.
Everything not inferred stays generic, as it was.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import types
from typing import Any, Callable

import gast
import numpy as np

from ..ir.build import call, clone, copy_tree, name
from ..rules import registry
from ..rules.templates import NONE, ZERO, Kind, Template, templates_of
from ..rules.views import written_through
from .indexed import one_hots
from .inline_writes import inline_writes
from .kinds import Inference, Kinds, own_rule_function
from .write_kinds import int_index

MAX_COMBINATIONS = 16
SMALL_SIZE = 64  # elements of a cotangent below which a deferred contribution is computed at once


_by_function: dict[int, Any] = {}  # registry version -> {id(vjp): (rule, position)}


def rules_of(vjps: dict[str, Callable]) -> dict[str, tuple[Any, int]]:
    """The rule and argument position of each vjp the module binds, by its name there."""
    version = registry.version()
    if version not in _by_function:
        _by_function.clear()
        _by_function[version] = {id(v): (rule, i) for rule in registry.rules() for i, v in enumerate(rule.vjps)
                                 if v is not None}
    by_function = _by_function[version]
    return {label: by_function[id(fn)] for label, fn in vjps.items() if id(fn) in by_function}


@functools.lru_cache(maxsize=512)
def _template_expression(text: str) -> gast.expr:
    return gast.parse(text).body[0].value


def _parsed(text: str) -> gast.expr:
    """A template's expression, parsed once per text, as a tree of its own."""
    return copy_tree(_template_expression(text))


def _parameters(fn: Callable) -> list[str]:
    """The names of a vjp's positional parameters: g, ans, then the primal arguments."""
    inner = getattr(fn, "__wrapped__", fn)
    try:
        return [p.name for p in inspect.signature(inner).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


class Specializer:
    """Rewrites one adjoint for the kinds of its parameters (see the module docstring)."""

    def __init__(self, adjoint: gast.FunctionDef, params: dict[str, Kinds | None], namespace: dict[str, Any],
                 vjps: dict[str, Callable], runtime: dict[str, str], tape: str | None,
                 module_alias: Callable[[str, types.ModuleType], str]):
        self.adjoint = adjoint
        self.params = params
        self.namespace = namespace
        self.vjps = vjps
        self.rules = rules_of(vjps)
        self.rt = runtime
        self.tape = tape
        self.module_alias = module_alias
        self.changed = False
        self._params: dict[str, list[str]] = {}  # a vjp's parameters, by its name

    def infer(self) -> Inference:
        return Inference(self.adjoint, self.params, self.namespace, self.vjps, self.rt, self.tape)

    def run(self) -> bool:
        pullback = next((s for s in self.adjoint.body if isinstance(s, gast.FunctionDef)), None)
        if pullback is None:
            return False
        inference = self._writes()
        _rewrite_calls(self.adjoint, lambda node: self._element_written(node, inference))
        self.changed |= one_hots(pullback.body, inference, self.rules, self.vjps, self.module_alias)
        self._rewrite(pullback, lambda node: self._inline(node, inference))
        inference = self.infer()  # contributions inlined are values now, not thunks
        self._rewrite(pullback, lambda node: self._accumulation(node, inference))
        self._differences(pullback, inference)
        self._drop_unthunks(pullback.body, inference)
        self._count_loops(self.adjoint.body, inference)
        self.inference = inference  # for fold.py, after the optimizer (Inference.rebound)
        return self.changed

    def _writes(self, rounds: int = 2) -> Inference:
        """The write helpers as plain indexing (inline_writes.py); again with the kinds that gives (a gradient
        allocated by np.zeros is an array). Returns the kinds of the code it leaves."""
        for _ in range(rounds):
            inference = self.infer()
            if not inline_writes(self.adjoint, inference, self.rt, self.vjps, self.module_alias):
                return inference
            self.changed = True
        return self.infer()

    # ---- loop counts --------------------------------------------------------------
    def _count_loops(self, stmts: list[gast.stmt], inference: Inference) -> None:
        """``n = 0`` and ``n += 1`` in each iteration as ``n = len(range(k))`` (or ``len(xs)`` for an array)
        before the loop, where the loop cannot break and the kinds say that taking the length has no effect."""
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.FunctionDef):
                continue
            for part in ("body", "orelse"):
                if isinstance(getattr(stmt, part, None), list):
                    self._count_loops(getattr(stmt, part), inference)
            if i == 0 or not isinstance(stmt, gast.For) or not self._counted(stmts[i - 1], stmt, inference):
                continue
            stmts[i - 1].value = call("len", clone(stmt.iter))
            stmt.body = stmt.body[1:] or [gast.Pass()]
            self.changed = True

    def _counted(self, before: gast.stmt, loop: gast.For, inference: Inference) -> bool:
        first = loop.body[0] if loop.body else None
        if not (isinstance(before, gast.Assign) and isinstance(before.targets[0], gast.Name)
                and isinstance(before.value, gast.Constant) and before.value.value == 0
                and isinstance(first, gast.AugAssign) and isinstance(first.target, gast.Name)
                and first.target.id == before.targets[0].id and isinstance(first.op, gast.Add)
                and isinstance(first.value, gast.Constant) and first.value.value == 1):
            return False
        count = first.target.id
        if inference.resolve(name("len")) is not len:
            return False
        for node in gast.walk(gast.Module(body=loop.body[1:], type_ignores=[])):
            if isinstance(node, gast.Break) or isinstance(node, gast.Name) and node.id == count:
                return False
        iterable = loop.iter
        if isinstance(iterable, gast.Call) and inference.resolve(iterable.func) is range and not iterable.keywords:
            return all(int_index(inference.expr(a)) or isinstance(a, gast.Constant) and type(a.value) is int
                       for a in iterable.args)
        kinds = inference.expr(iterable) if isinstance(iterable, gast.Name) else None
        return kinds is not None and all(k.type is np.ndarray and k.shape or k.item is not None for k in kinds)

    # ---- rewriting expressions --------------------------------------------------
    def _rewrite(self, pullback: gast.FunctionDef, transform: Callable[[gast.AST], gast.AST | None]) -> None:
        _rewrite_calls(pullback, transform)

    def _inline(self, node: gast.Call, inference: Inference) -> gast.expr | None:
        """A vjp call or a Thunk of one, as its rule's template, if exact for these kinds."""
        if not isinstance(node.func, gast.Name) or node.keywords:
            return None
        deferred = node.func.id == self.rt["Thunk"]
        if deferred and node.args and isinstance(node.args[0], gast.Name):
            label, args = node.args[0].id, node.args[1:]
        else:
            label, args = node.func.id, node.args
        found = self._template(label, args, inference)
        if found is None:
            return None
        template, operands, kinds, argument = found
        if deferred and not _real_scalars(argument) and not _sums_only(self.vjps[label]) \
                and not (self._small(self.vjps[label], kinds.get("g")) and self._small(self.vjps[label], argument)):
            return None  # a large contribution that an AccThunk may batch with its siblings stays deferred
        if template is None:
            return self._unless_zero(templates_of(*self.rules[label]), operands, kinds)
        expression = self._instantiate(template, operands, kinds)
        if expression is not None:
            self.changed = True
        return expression

    def _element_written(self, node: gast.Call, inference: Inference) -> gast.expr | None:
        """``written_through(K, i, j)`` (``K[i][j] = v``, rules/views.py) of an array of two or more axes and
        two ints as the index ``(i, j)``: the same element, without the general index arithmetic per write.
        An index out of bounds raises IndexError at the write, where Python's ``K[i]`` would."""
        if len(node.args) != 3 or node.keywords or inference.resolve(node.func) is not written_through:
            return None
        base, outer, inner = (inference.expr(a) for a in node.args)
        if not base or any(k.type is not np.ndarray or len(k.shape) < 2 for k in base) \
                or not outer or not inner or any(k.type is not int for k in outer | inner):
            return None
        self.changed = True
        return gast.Tuple(elts=list(node.args[1:]), ctx=gast.Load())

    def _template(self, label: str, args: list[gast.expr], inference: Inference) -> tuple | None:
        """For a call of the vjp ``label`` on ``args``: the first of its templates exact for their kinds (or
        None), the operands and kinds by parameter, and the kinds of the argument it differentiates for.
        None where the vjp has no template or is not one of adsrc's own."""
        found = self.rules.get(label)
        if found is None or not own_rule_function(self.vjps[label]):
            return None
        rule, position = found
        templates = templates_of(rule, position)
        if not templates or not all(isinstance(a, (gast.Name, gast.Constant)) for a in args):
            return None
        params = self._params.get(label)
        if params is None:
            params = self._params[label] = _parameters(self.vjps[label])
        if len(args) > len(params):
            return None
        operands = dict(zip(params, args))
        kinds = {p: inference.expr(a) for p, a in operands.items()}
        template = next((t for t in templates if self._exact(t, kinds)), None)
        argument = kinds.get(params[2 + position]) if 2 + position < len(params) else None
        return template, operands, kinds, argument

    def _unless_zero(self, templates: list[Template], operands: dict[str, gast.expr],
                     kinds: dict[str, Kinds | None]) -> gast.expr | None:
        """``zero if g is zero else <template>`` where the cotangent ``g`` is the zero tangent on some path
        and of kinds the template is exact for on the others (a value overridden in a branch: its gradient
        is zero there): what the vjp's wrapper does first, then what the vjp computes."""
        cotangent, zero_name = kinds.get("g"), self.rt.get("zero")
        g = operands.get("g")
        if not cotangent or ZERO not in cotangent or len(cotangent) < 2 or zero_name is None \
                or not isinstance(g, gast.Name):
            return None
        nonzero = dict(kinds, g=cotangent - {ZERO})
        template = next((t for t in templates if self._exact(t, nonzero)), None)
        expression = None if template is None else self._instantiate(template, operands, nonzero)
        if expression is None:
            return None
        self.changed = True
        test = gast.Compare(left=name(g.id), ops=[gast.Is()], comparators=[name(zero_name)])
        return gast.IfExp(test=test, body=name(zero_name), orelse=expression)

    @staticmethod
    def _small(vjp: Callable, cotangent: Kinds | None) -> bool:
        """Whether computing a deferred contribution at once costs less than deferring it: its vjp has no
        batched or in-place form, or its cotangent has at most SMALL_SIZE elements (a thunk's bookkeeping
        then costs more than the arithmetic; accumulate's small_size, decided here). Asked of the
        contribution's own kinds too: an outer product of small vectors is a large matrix, which a
        batched form computes as one product of matrices."""
        if getattr(vjp, "fuse", None) is None and getattr(vjp, "add_into", None) is None:
            return True
        return cotangent is not None and all(
            k.type is not np.ndarray or int(np.prod(k.shape)) <= SMALL_SIZE for k in cotangent)

    @staticmethod
    def _exact(template: Template, kinds: dict[str, Kinds | None]) -> bool:
        if any(k is None for k in kinds.values()):
            return False
        names = list(kinds)
        sets = [list(kinds[n]) if len(kinds[n]) == 1 else sorted(kinds[n], key=repr) for n in names]
        count = 1
        for s in sets:
            count *= len(s)
        if count > MAX_COMBINATIONS:
            return False
        return all(template.exact(dict(zip(names, combination))) for combination in itertools.product(*sets))

    def _instantiate(self, template: Template, operands: dict[str, gast.expr],
                     kinds: dict[str, Kinds]) -> gast.expr | None:
        expression = _parsed(template.text)
        for node in gast.walk(expression):
            if not isinstance(node, gast.Name):
                continue
            if node.id in template.modules:
                node.id = self.module_alias(node.id, template.modules[node.id])
            elif node.id in operands:
                if kinds[node.id] == {NONE}:
                    return None  # the template reads a value the generic call did not pass
            else:
                return None

        class Substitute(gast.NodeTransformer):
            def visit_Attribute(inner, node):  # noqa: N805
                # x.shape where the kinds fix it: the shape itself, so that x need not be kept for it
                if node.attr == "shape" and isinstance(node.value, gast.Name) and node.value.id in kinds:
                    shapes = {k.shape if k.type is np.ndarray else None for k in kinds[node.value.id]}
                    if len(shapes) == 1 and None not in shapes:
                        return gast.Constant(value=shapes.pop(), kind=None)
                inner.generic_visit(node)
                return node

            def visit_Name(inner, node):  # noqa: N805
                if node.id in operands and isinstance(node.ctx, gast.Load):
                    return copy_tree(operands[node.id])
                return node

            def visit_BinOp(inner, node):  # noqa: N805
                # integers of the code, such as an exponent less one: their value (exact, as Python's)
                inner.generic_visit(node)
                left, right = node.left, node.right
                if isinstance(left, gast.Constant) and isinstance(right, gast.Constant) \
                        and type(left.value) is int and type(right.value) is int \
                        and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
                    op = {gast.Add: int.__add__, gast.Sub: int.__sub__, gast.Mult: int.__mul__}[type(node.op)]
                    return gast.Constant(value=op(left.value, right.value), kind=None)
                return node

        return Substitute().visit(expression)

    # ---- accumulations and materializations -------------------------------------
    @staticmethod
    def _values(kinds: Kinds | None) -> bool:
        """Every kind a plain value (no Thunk, no container): ``+`` adds it as accumulate would."""
        return kinds is not None and all(k.type is not type(None) for k in kinds)

    def _accumulation(self, node: gast.Call, inference: Inference) -> gast.expr | None:
        """``accumulate(d, c)`` as ``d + c`` where both are values."""
        if not (isinstance(node.func, gast.Name) and node.func.id == self.rt["accumulate"]) or len(node.args) < 2:
            return None
        total, contribution = node.args[:2]
        if isinstance(contribution, gast.Call) and isinstance(contribution.func, gast.Name) \
                and contribution.func.id == self.rt["Thunk"]:
            return None
        if not (self._values(inference.expr(total)) and self._values(inference.expr(contribution))):
            return None
        self.changed = True
        return gast.BinOp(left=total, op=gast.Add(), right=contribution)

    def _differences(self, pullback: gast.FunctionDef, inference: Inference) -> None:
        """``d + -c`` (an accumulation of a negated template) as ``d - c``, where both are floats (or ``d`` the
        zero tangent): IEEE subtraction is the addition of the negation, one operation fewer."""
        specializer = self

        class Differences(gast.NodeTransformer):
            def visit_BinOp(inner, node):  # noqa: N805
                inner.generic_visit(node)
                right = node.right
                if isinstance(node.op, gast.Add) and isinstance(right, gast.UnaryOp) and isinstance(right.op, gast.USub) \
                        and _floats(inference.expr(right.operand)) \
                        and _floats(frozenset(k for k in inference.expr(node.left) or () if k != ZERO) or None):
                    specializer.changed = True
                    return gast.BinOp(left=node.left, op=gast.Sub(), right=right.operand)
                return node

        Differences().visit(pullback)

    def _drop_unthunks(self, stmts: list[gast.stmt], inference: Inference) -> None:
        kept = []
        for stmt in stmts:
            for part in ("body", "orelse"):
                if isinstance(getattr(stmt, part, None), list):
                    self._drop_unthunks(getattr(stmt, part), inference)
            value = getattr(stmt, "value", None)
            if isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
                    and value.func.id == self.rt["unthunk"] and len(value.args) == 1 \
                    and self._values(inference.expr(value.args[0])):
                self.changed = True
                target = stmt.targets[0]
                if isinstance(target, gast.Name) and isinstance(value.args[0], gast.Name) \
                        and target.id == value.args[0].id:
                    continue
                stmt.value = value.args[0]
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                    and isinstance(stmt.value, gast.Name) and stmt.value.id == stmt.targets[0].id:
                self.changed = True
                continue  # d = d, left by a template that returns its cotangent
            kept.append(stmt)
        if len(kept) < len(stmts):
            stmts[:] = kept or [gast.Pass()]


def _sums_only(vjp: Callable) -> bool:
    """A vjp whose batched form only sums the cotangents before one call (a linear rule's, ``g.T`` of
    ``x.T``: registry._summed_first) and which adds nothing in place: batching saves no arithmetic, so a
    specialized loop computes each contribution at once, as eager mode does."""
    fuse = getattr(getattr(vjp, "fuse", None), "__wrapped__", None)
    return getattr(fuse, "one_layout", False) and getattr(vjp, "add_into", None) is None


def _real_scalars(kinds: Kinds | None) -> bool:
    return bool(kinds) and all(k.type in (float, np.float64) for k in kinds)


def _floats(kinds: Kinds | None) -> bool:
    """Real floating-point numbers or arrays, where ``d + -c`` and ``d - c`` round alike (and ``zero - c``
    is ``-c``)."""
    return bool(kinds) and all(k.type in (float, np.float64) or k.type is np.ndarray and k.dtype.kind == "f"
                               for k in kinds)




def _rewrite_calls(node: gast.AST, transform: Callable[[gast.Call], gast.expr | None]) -> gast.AST:
    """Each call under ``node``, innermost first, replaced by ``transform``'s answer where it gives one
    (a NodeTransformer's visit_Call, without its dispatch on every node of a long adjoint)."""
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            for i, item in enumerate(value):
                if isinstance(item, gast.AST) and not isinstance(item, _LEAVES):
                    value[i] = _rewrite_calls(item, transform)
        elif isinstance(value, gast.AST) and not isinstance(value, _LEAVES):
            setattr(node, field, _rewrite_calls(value, transform))
    if isinstance(node, gast.Call):
        replaced = transform(node)
        return node if replaced is None else replaced
    return node


_LEAVES = (gast.Name, gast.Constant, gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)


def signature_kinds(params: list[str], signature: tuple[Kind | None, ...]) -> dict[str, Kinds | None]:
    """The parameters' kinds, by name, from a signature (one kind or None per parameter)."""
    return {p: (None if k is None else frozenset({k})) for p, k in zip(params, signature)}


def specialize(adjoint: gast.FunctionDef, params: dict[str, Kinds | None], namespace: dict[str, Any],
               vjps: dict[str, Callable], runtime: dict[str, str], tape: str | None,
               module_alias: Callable[[str, types.ModuleType], str]) -> bool:
    """Rewrite ``adjoint`` in place for these parameter kinds; whether anything changed."""
    return Specializer(adjoint, params, namespace, vjps, runtime, tape, module_alias).run()


__all__ = ["specialize", "signature_kinds", "Specializer"]
