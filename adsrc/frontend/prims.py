"""Prim: how to differentiate one ANF statement, the annotation (``anno.PRIM``) ANF sets on it.

Input: what frontend/anf.py and frontend/callees.py learn of a statement as
they split it. Output: the :class:`Prim` dataclass, which both transforms
read, and what they need to describe one in generated code and messages:
:func:`call_site` (the options of a call whose callee is a value),
:func:`argument_label` (``argument 2 ('a_max')``) and
:func:`positional_parameters` (the parameters a call can fill by position,
also read by second_order/dispatch.py).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import gast

from ..rules import registry


@dataclass
class Prim:
    """How to differentiate one ANF statement ``target = op(args)``.

    kind is ``"rule"`` (a registered primitive), ``"copy"`` (``t = a``),
    ``"pack"`` (a tuple, list or dict literal; ``keys`` are its positions or
    keys), ``"append"`` (``xs + [v]``), ``"call"`` (a user function,
    differentiated by its own adjoint), ``"dynamic"`` (a call of a value: a
    function passed in, a method of an object, resolved when it runs) or ``"write"`` (``x[i] = v``, in place;
    ``args`` are ``[x, i, v]``, the index as a value).
    ``args`` are the value expressions the vjp receives after ``(g, ans)``.
    """

    kind: str
    args: list[gast.expr]
    keywords: list[gast.keyword] = field(default_factory=list)
    rule: registry.Rule | None = None
    callee: Any = None
    func: gast.expr | None = None
    keys: list[gast.expr] = field(default_factory=list)
    # For a rule: the name of each positional argument where the call named it
    # (``max`` in ``x.clip(max=hi)``), for messages.
    names: dict[int, str] = field(default_factory=dict)
    # For a call of a value (``"dynamic"``): ``args`` are ``[callee or object, *atoms]``; ``method`` is the
    # attribute called on the object, ``starred``/``mapping`` the positions of ``*xs``/``**kw`` atoms.
    method: str | None = None
    starred: tuple = ()
    mapping: tuple = ()
    source: str | None = None  # the callee expression, where it is not a name (np.vectorize(math.erf))
    after: bool = False  # the method is looked up after the last atom (a class) in the MRO: super(C, obj).m()
    into_list: bool = False  # a write into a list made here (frontend/lists.py), not into an array


def call_site(prim: Prim, where: str) -> tuple[str, str]:
    """A ``"dynamic"`` call's label (for names: the method, or the callee variable) and the options
    that describe it to ``adjoint_of_call`` / ``jvp_of_call`` in the generated module's header."""
    label = prim.method or (prim.args[0].id if isinstance(prim.args[0], gast.Name) else "call")
    options = f"where={where!r}"
    options += f", method={prim.method!r}" if prim.method else ""
    options += f", starred={prim.starred!r}" if prim.starred else ""
    options += f", mapping={prim.mapping!r}" if prim.mapping else ""
    options += f", source={prim.source!r}" if prim.source else ""
    options += ", after=True" if prim.after else ""
    return label, options


def argument_label(prim: Prim, index: int) -> str:
    """``argument 2 ('a_max')`` of a rule's call, for messages: the position its vjp and jvp
    are indexed by, and the parameter's name where it is known."""
    label = prim.names.get(index)
    if label is None and prim.rule is not None:
        params = positional_parameters(prim.rule.func)
        if params is not None and index < len(params):
            label = params[index].name
    return f"argument {index}" + (f" ({label!r})" if label else "")


def positional_parameters(func: Any) -> list[inspect.Parameter] | None:
    """The parameters of ``func`` that a call can fill by position (up to ``*args``), or None
    when its signature cannot be read. A rule may declare them (``rule.extra["signature"]``) for
    a primitive whose own signature is ``(*args, **kwds)``, such as ``scipy.stats.norm.logpdf``."""
    rule = registry.lookup(func)
    try:
        declared = rule.extra.get("signature") if rule is not None else None
        params = (declared or inspect.signature(func)).parameters.values()
    except (TypeError, ValueError):
        return None
    out = []
    for param in params:
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        out.append(param)
    return out
