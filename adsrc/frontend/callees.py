"""Callees: what a call's function names, and how an active call becomes one primitive operation.

Input: a parsed function (frontend/parse.py) and its local names. Output:

* :class:`CalleeResolver`, which resolves a call's function expression before
  anything runs: a dotted name rooted outside the function through closure
  cells, globals and builtins, a method of a local value through the
  registry's method table (also used by transforms/forward.py and
  backend/pipeline.py); :func:`local_names` gives it the names to leave alone;
* :class:`CallSplitter`, the part of frontend/anf.py's ``ANF`` that splits an
  active call into atoms and a :class:`~.prims.Prim`: a registered rule, a
  user function (transformed recursively, its arguments bound in parameter
  order), a NamedTuple or dataclass built as a pack of its fields, a call of a
  value resolved when it runs, a non-differentiable function, or a
  NoGradientRule error (a library's function is never transformed:
  libraries.py). A differentiable keyword argument of a rule's call
  (``x.clip(min=lo)``) is moved to its parameter's position, since a rule
  differentiates positional arguments, or the call is refused where it has
  none.
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import gast
import numpy as np

from ..rules import registry
from ..rules.checkpoint import recomputes
from ..rules.iterables import dict_with
from .libraries import is_library_function, library_remedy
from ..errors import NoGradientRule, UnsupportedSyntax
from ..ir.build import const, name
from ..ir.dataflow import names as name_nodes
from .parse import _MISSING, Parsed, bound_parts, signature_of
from .prims import Prim, argument_label, positional_parameters
from .receivers import CONTAINER, DICT, ReceiverKinds


class CalleeResolver:
    """What a call's function expression names, where that can be known before running.

    A dotted name rooted outside the function (``np.linalg.norm``, ``helper``)
    resolves through closure cells, globals and builtins; a method of a local
    value (``x.sum``) resolves through the registry's method table.
    """

    def __init__(self, parsed: Parsed, locals_: set[str], receivers: ReceiverKinds | None = None):
        self.parsed = parsed
        self.locals = locals_
        self.receivers = receivers

    def resolve_callee(self, func: gast.AST) -> Any:
        if isinstance(func, gast.Name):
            if func.id in self.locals:
                return None
            obj = self.parsed.resolve(func.id)
            return None if obj is _MISSING else obj
        if isinstance(func, gast.Attribute):
            if not self.global_chain(func.value):
                return self.method_of(func)
            base = self.resolve_callee(func.value)
            return getattr(base, func.attr, None) if base is not None else None
        return None

    resolve = resolve_callee

    def method_of(self, func: gast.Attribute) -> Any:
        """The primitive a method call ``obj.name(...)`` is, where the receiver is shown to be of the
        kind its rule is for (frontend/receivers.py); None where it is resolved when it runs."""
        return self._shown("method", registry.method_primitive(func.attr), func)

    def attribute_of(self, node: gast.Attribute) -> Any:
        """The primitive an attribute read ``obj.name`` is (``x.T``), where the receiver is shown to be of
        its rule's kind; None for an attribute read from a structure or a value whose kind is not shown."""
        return self._shown("attribute", registry.attribute_primitive(node.attr), node)

    def _shown(self, what: str, prim: Any, node: gast.Attribute) -> Any:
        if prim is None or self.receivers is None \
                or not self.receivers.accepts(node.value, registry.receivers_of(what, node.attr)):
            return None
        return prim

    def inert_attribute(self, node: gast.Attribute) -> bool:
        """``x.shape``, ``x.dtype`` and the like carry no gradient on an array; on a value the code does not
        show to be one (a distribution's ``self.shape``), they are read as any attribute."""
        return node.attr in registry.INERT_ATTRIBUTES and self.receivers is not None \
            and self.receivers.accepts(node.value, "array")

    def global_chain(self, node: gast.AST) -> bool:
        """True for ``np``, ``np.linalg`` and the like: a dotted name rooted outside the function."""
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.locals


def local_names(node: gast.FunctionDef) -> set[str]:
    """The names ``node`` binds: its parameters and every name it stores (a CalleeResolver's ``locals_``)."""
    names = {a.id for a in node.args.args + node.args.kwonlyargs}
    for child in name_nodes(node):
        if isinstance(child.ctx, (gast.Store, gast.Param)):
            names.add(child.id)
    return names


class CallSplitter(CalleeResolver):
    """How ANF splits a call: ``(forward expression over atoms, Prim)``.

    A base of frontend/anf.py's ``ANF``, which gives it ``expr`` and
    ``expr_into`` (statements computing a value), ``primitive``, ``is_varied``,
    ``where`` and the attributes ``namer``, ``runtime`` and ``closures``.
    """

    def keywords(self, keywords: list[gast.keyword]) -> list[gast.keyword]:
        return [gast.keyword(arg=k.arg, value=self.expr(k.value)) for k in keywords]

    def rule(self, func: Any, args: list[gast.expr], node: gast.AST, keywords=()) -> Prim:
        rule = registry.lookup(func)
        if rule is None:
            label = getattr(func, "__name__", repr(func))
            raise NoGradientRule(label, self.where(node))
        prim = Prim("rule", args, list(keywords), rule=rule)
        for index, arg in enumerate(args):  # a local function's captured values would get no gradient there
            if isinstance(arg, gast.Name) and arg.id in self.closures and self.is_varied(arg) \
                    and (index >= len(rule.vjps) or rule.vjps[index] is None):
                raise UnsupportedSyntax(f"passing the local function {arg.id}, which captures differentiable values, "
                                        f"to {rule.qualname}, which does not differentiate it", self.where(node),
                                        "call it in a loop or comprehension instead")
        # Arguments the function depends on but whose derivative the rule does not have (a cdf's shape
        # parameters): a None vjp there would silently give them no gradient.
        for index, why in rule.extra.get("no_derivative", {}).items():
            if index < len(args) and self.is_varied(args[index]):
                raise NoGradientRule(f"{rule.qualname} with respect to {argument_label(prim, index)}",
                                     self.where(node), why)
        return prim

    def call(self, node: gast.Call) -> tuple[gast.expr, Prim]:
        func = node.func
        method = isinstance(func, gast.Attribute) and not self.global_chain(func.value)
        obj = self.resolve_callee(func)
        label = _source_of(func)
        spread = any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if obj is dict and not node.args and node.keywords and all(k.arg is not None for k in node.keywords):
            literal = gast.Dict(keys=[const(k.arg) for k in node.keywords], values=[k.value for k in node.keywords])
            return self.primitive(gast.copy_location(literal, node))  # dict(a=x, b=y) is {"a": x, "b": y}
        if obj is None:
            if method and func.attr in _CONTAINER_METHODS and self.receivers is not None \
                    and self.receivers.kind(func.value) in (DICT, CONTAINER):
                raise NoGradientRule(f"the method .{func.attr}() of a dict, list, tuple or str", self.where(node),
                                     "a loop over list(d) that reads d[k] for a dict's values, or a list "
                                     "literal or comprehension for a list's")
            if method or isinstance(func, gast.Name) and func.id in self.locals \
                    or not isinstance(func, (gast.Name, gast.Attribute)):
                return self.dynamic(node, method)  # a value called: f(y), self.predict(X), layers[i](h)
            raise NoGradientRule(label, self.where(node))
        if inspect.isclass(obj) and (issubclass(obj, tuple) and hasattr(obj, "_fields")
                                     or dataclasses.is_dataclass(obj)) and not spread:
            return self.construct(obj, node, label)
        if registry.lookup(obj) is not None and any(isinstance(a, gast.Starred) for a in node.args):
            return self.dynamic(node, False)  # f(*args): its rule's arguments are bound when the call runs
        takes_mapping = inspect.isfunction(obj) and not is_library_function(obj) and any(
            p.kind is p.VAR_KEYWORD for p in signature_of(obj).parameters.values())
        if takes_mapping and registry.lookup(obj) is None and not recomputes(obj):
            return self.dynamic(node, False)  # a **kwargs parameter: bound when the call runs, as Python binds it
        if inspect.isfunction(obj) and not is_library_function(obj) and registry.lookup(obj) is None \
                and not recomputes(obj) and _takes_default_object(obj, node):
            return self.dynamic(node, False)  # a default such as np.tanh: Python's own, bound when the call runs
        if spread and registry.lookup(obj) is None or not inspect.isfunction(obj) and registry.lookup(obj) is None \
                and callable(obj) and not method and not inspect.isclass(obj) and not inspect.isbuiltin(obj) \
                and not recomputes(obj):  # a checkpointed function is linked below, as a user function
            target = bound_parts(obj)[0]
            if not inspect.isfunction(target) and registry.lookup(target) is None \
                    and not hasattr(type(obj), "__adsrc_pullback__"):  # adsrc.grad(g), adsrc.vmap(g): their own
                raise NoGradientRule(label, self.where(node), instead=_distribution_remedy(obj, label))
            return self.dynamic(node, False)  # a bound method, a partial, a callable object, or f(*xs)
        if obj is dict and node.keywords and len(node.args) <= 1 and not spread:
            return self.dict_with(node)
        args = [self.expr(a) for a in node.args]
        keywords = self.keywords(node.keywords)
        if method:
            base = self.expr(func.value)
            prim, args, keywords = self.rule_call(obj, [base] + args, keywords, node, label, func.attr)
            forward = gast.Call(func=gast.Attribute(value=base, attr=func.attr, ctx=gast.Load()),
                                args=args[1:], keywords=keywords)
            return forward, prim
        if registry.lookup(obj) is not None:
            prim, args, keywords = self.rule_call(obj, args, keywords, node, label)
            return gast.Call(func=func, args=args, keywords=keywords), prim
        if is_library_function(obj):  # libraries are primitives: a rule, or refused (never traced into)
            raise NoGradientRule(label, self.where(node), library_remedy(obj, label))
        if inspect.isfunction(obj) or recomputes(obj):  # a checkpointed callee is linked as a user function
            args = self.bind(obj, args, keywords, node)
            return gast.Call(func=func, args=args, keywords=[]), Prim("call", args, callee=obj, func=func)
        raise NoGradientRule(label, self.where(node))

    def dict_with(self, node: gast.Call) -> tuple[gast.expr, Prim]:
        """``dict(pairs, b=x)``: ``dict_with(pairs, {"b": x})``, a call with a rule for both (rules/iterables.py),
        since dict's keywords are entries, not parameters."""
        pairs = self.expr(node.args[0]) if node.args else gast.Tuple(elts=[], ctx=gast.Load())
        entries = self.namer.fresh("entries")
        self.expr_into(gast.Dict(keys=[const(k.arg) for k in node.keywords],
                                 values=[k.value for k in node.keywords]), entries)
        entries = name(entries)
        return (gast.Call(func=name(self.runtime["dict_with"]), args=[pairs, entries], keywords=[]),
                self.rule(dict_with, [pairs, entries], node))

    def construct(self, cls: type, node: gast.Call, label: str) -> tuple[gast.expr, Prim]:
        """``Params(w, b=b0)`` of a NamedTuple or dataclass: a pack of its fields, by field (the
        cotangent of a NamedTuple is a tuple, of a dataclass a dict keyed by field name)."""
        namedtuple = issubclass(cls, tuple)
        if not namedtuple:
            if not cls.__dataclass_params__.init or hasattr(cls, "__post_init__"):
                raise UnsupportedSyntax(f"constructing the dataclass {label} from differentiable values, whose "
                                        f"{'__post_init__' if cls.__dataclass_params__.init else '__init__'} "
                                        f"may change what its fields hold", self.where(node),
                                        "compute the fields first and construct it without __post_init__, "
                                        "or use a NamedTuple")
        fields = list(cls._fields) if namedtuple else \
            [f.name for f in dataclasses.fields(cls) if f.init]
        try:
            bound = inspect.signature(cls).bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except (TypeError, ValueError) as error:
            raise UnsupportedSyntax(f"this call of {label} ({error})", self.where(node)) from None
        atoms, keywords = [], []
        for field_name in fields:
            value = bound.arguments.get(field_name)
            if value is None:
                default = inspect.signature(cls).parameters[field_name].default
                if not isinstance(default, (int, float, complex, str, bool, type(None))):
                    raise UnsupportedSyntax(f"the default value of {label}'s field {field_name}", self.where(node),
                                            "pass it explicitly")
                value = const(default)
            atom = self.expr(value)
            atoms.append(atom)
            keywords.append(gast.keyword(arg=field_name, value=atom))
        keys = [const(i) for i in range(len(fields))] if namedtuple else [const(f) for f in fields]
        return gast.Call(func=node.func, args=[], keywords=keywords), Prim("pack", atoms, keys=keys)

    def dynamic(self, node: gast.Call, method: bool) -> tuple[gast.expr, Prim]:
        """A call whose callee is a value, resolved when it runs (calls.py): ``[callee, *atoms]``, or
        ``[obj, *atoms]`` with ``method`` the attribute called on ``obj`` (on ``super(C, obj)``: ``C`` is
        then the last atom, and ``after`` says so)."""
        func = node.func
        owner = func.value if method else None
        after = None
        if isinstance(owner, gast.Call) and isinstance(owner.func, gast.Name) and owner.func.id == "super" \
                and self.resolve_callee(owner.func) is super and len(owner.args) == 2 and not owner.keywords:
            after, owner = owner.args
        first = self.expr(owner if method else func)
        atoms, forward_args, starred, mapping = [], [], [], []
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                atom = self.expr(arg.value)
                starred.append(len(atoms) + 1)
                forward_args.append(gast.Starred(value=atom, ctx=gast.Load()))
            else:
                atom = self.expr(arg)
                forward_args.append(atom)
            atoms.append(atom)
        keywords = []
        for k in node.keywords:
            atom = self.expr(k.value)
            if k.arg is None:
                mapping.append(len(atoms) + 1)
                atoms.append(atom)
            keywords.append(gast.keyword(arg=k.arg, value=atom))
        receiver = first
        if after is not None:  # super(C, obj).m(...): the method found after C in obj's class's MRO
            after = self.expr(after)
            atoms.append(after)
            receiver = gast.Call(func=name("super"), args=[after, first], keywords=[])
        callee = gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load()) if method else first
        forward = gast.Call(func=callee, args=forward_args, keywords=keywords)
        prim = Prim("dynamic", [first] + atoms, [k for k in keywords if k.arg is not None],
                    method=func.attr if method else None, starred=tuple(starred), mapping=tuple(mapping),
                    source=None if isinstance(func, (gast.Name, gast.Attribute)) else _source_of(func),
                    after=after is not None)
        return forward, prim

    def rule_call(self, func: Any, args: list[gast.expr], keywords: list[gast.keyword], node: gast.Call,
                  label: str, method: str | None = None) -> tuple[Prim, list[gast.expr], list[gast.keyword]]:
        """A call of a primitive that has a rule, as (its Prim, the call's positional arguments, its
        keywords); ``method``: called as ``args[0].method(*args[1:])`` (the object comes first).

        A rule differentiates positional arguments only (``rule.vjps[i]`` is the
        vjp of argument ``i``), so a differentiable value passed by keyword is
        moved to its parameter's position, as in ``np.clip(x, a_min=lo, a_max=hi)``
        -> ``(x, lo, hi)`` or ``x.clip(max=hi)`` -> ``(x, None, hi)``, filling the
        positions before it with the keywords that name them or the parameters'
        defaults. The call itself is written the same way where the called
        object takes that many positional arguments (a method's own signature
        may take fewer than its function's); else it stays as written. Where no
        position can be found (a keyword-only parameter, a ``**mapping``,
        ``*args`` before it), the call is refused rather than the keyword's
        gradient dropped.
        """
        if registry.lookup(func) is None or not any(self.is_varied(k.value) for k in keywords):
            return self.rule(func, args, node, keywords), args, keywords

        def refuse(keyword: gast.keyword, why: str) -> UnsupportedSyntax:
            shown = f"{keyword.arg}=..." if keyword.arg is not None else "**..."
            return UnsupportedSyntax(f"passing a differentiable value to {label} by keyword ({shown})",
                                     self.where(node), f"{why}; pass it positionally")

        varied = [k for k in keywords if self.is_varied(k.value)]
        if any(isinstance(a, gast.Starred) for a in node.args):
            raise refuse(varied[0], "its position is not known where *args come before it")
        for k in keywords:
            if k.arg is None:
                raise refuse(varied[0] if varied[0].arg is not None else k,
                             "its position is not known beside a **mapping")
        params = positional_parameters(func)
        if params is None:
            raise refuse(varied[0], f"the signature of {label} cannot be read to find its position")
        # Where each keyword goes: the parameter of that name (a method's own name first: ``x.clip(min=)``
        # is np.clip's a_min; obj.name(*args) differentiates as func(obj, *args)).
        position = {p.name: i for i, p in enumerate(params) if p.kind is p.POSITIONAL_OR_KEYWORD}
        own = positional_parameters(getattr(np.ndarray, method, None)) if method else None
        for i, p in enumerate(own or ()):
            if i and p.kind is p.POSITIONAL_OR_KEYWORD:
                position[p.name] = i
        slots = {}
        for k in keywords:
            if k.arg in position:
                slots[position[k.arg]] = k
        for k in varied:
            if k.arg not in position:
                raise refuse(k, f"{label} has no positional parameter {k.arg!r} (adsrc differentiates a "
                                f"rule's positional arguments)")
            if position[k.arg] < len(args):
                raise refuse(k, f"{k.arg!r} is given positionally as well")
        last = max(position[k.arg] for k in varied)
        out, names, moved = list(args), {}, set()
        for i in range(len(args), last + 1):
            keyword = slots.get(i)
            if keyword is not None:
                out.append(keyword.value)
                names[i] = keyword.arg
                moved.add(id(keyword))
                continue
            param = own[i] if own is not None and i < len(own) else params[i]
            default = None if param.default is np._NoValue else param.default  # NumPy's "not given"
            if default is param.empty or not isinstance(default, (int, float, complex, str, bool, type(None))):
                culprit = next(k for k in varied if position[k.arg] > i)
                raise refuse(culprit, f"the argument before it, {param.name!r}, has no default adsrc can pass")
            out.append(const(default))
        rest = [k for k in keywords if id(k) not in moved]
        prim = self.rule(func, out, node, rest)
        prim.names = names
        if own is not None and last >= len(own):
            return prim, args, keywords  # the method takes fewer positional arguments: as written
        return prim, out, rest

    def bind(self, callee: Any, args: list, keywords: list, node: gast.AST) -> list[gast.expr]:
        """A user call's arguments, in parameter order, with defaults filled in."""
        try:
            signature = signature_of(callee)
            bound = signature.bind(*args, **{k.arg: k.value for k in keywords})
        except (TypeError, ValueError) as error:
            raise UnsupportedSyntax(f"this call of {callee.__name__} ({error})", self.where(node)) from None
        out = []
        for param in signature.parameters.values():
            if param.kind is param.VAR_POSITIONAL:  # the callee's adjoint takes *args as one tuple
                out.append(self.expr(gast.Tuple(elts=list(bound.arguments.get(param.name, ())), ctx=gast.Load())))
                continue
            if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                raise UnsupportedSyntax(f"calling {callee.__name__}, which has a {param.kind.description} "
                                        f"parameter, with a differentiable argument", self.where(node))
            if param.name in bound.arguments:
                out.append(bound.arguments[param.name])
            elif isinstance(param.default, (int, float, complex, str, bool, type(None))):
                out.append(const(param.default))
            else:
                raise UnsupportedSyntax(f"the default value of {callee.__name__}'s parameter {param.name}",
                                        self.where(node), "pass it explicitly")
        return out


def _distribution_remedy(obj: Any, label: str) -> str:
    """For a scipy.stats distribution called to freeze it (``norm(mu, s)``) inside the function: the working forms."""
    if not (type(obj).__module__.startswith("scipy.stats") and hasattr(obj, "freeze")):
        return ""
    return (f"a distribution frozen with parameters that carry a gradient is not differentiated; call its "
            f"method with the parameters, {label}.logpdf(x, *params) (a rule, differentiated in each), or "
            f"freeze it with constant ones (`d = {label}(0.0, 1.0)`, then d.logpdf(x))")


# Methods of Python's own containers: without a rule of their own, a call of one on a differentiated value is
# refused before anything runs (a user object's method of the same name is refused with them).
_CONTAINER_METHODS = frozenset(name for kind in (dict, list, tuple, str, set) for name in dir(kind)
                               if not name.startswith("_"))


_CONSTANTS = (int, float, complex, str, bool, type(None))


def _takes_default_object(func: Any, node: gast.Call) -> bool:
    """Whether the call leaves a parameter to a default that is not a constant (``f=np.tanh``, an array):
    such a call binds its arguments when it runs, with the default object Python evaluated once."""
    try:
        params = list(signature_of(func).parameters.values())
    except (TypeError, ValueError):
        return False
    given = {k.arg for k in node.keywords}
    if any(isinstance(a, gast.Starred) for a in node.args) or None in given:
        return False
    for index, param in enumerate(params):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is param.empty:
            continue
        passed = index < len(node.args) and param.kind is not param.KEYWORD_ONLY or param.name in given
        if not passed and not isinstance(param.default, _CONSTANTS):
            return True
    return False


def _source_of(node: gast.AST) -> str:
    """The source text of an expression, for messages."""
    import ast

    return ast.unparse(gast.gast_to_ast(node))

