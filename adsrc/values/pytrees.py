"""Structured values (pytrees): NamedTuples, dataclasses, registered classes and plain objects.

Tuples, lists and dicts are adsrc's own containers (containers.py). This
module adds the user's structures, as JAX has them:

* a **NamedTuple** is a tuple: its cotangent is a tuple, and ``p.w`` reads
  the position of the field ``w``;
* a **dataclass** (frozen or not) and any **plain object** (a model whose
  parameters live on ``self``) are read by attribute: the cotangent of an
  object is a dict of the cotangents of the attributes the function read;
* a **dict read by attribute** (SciPy's ``OdeResult``, ``OptimizeResult``:
  ``sol.y`` is ``sol["y"]``) is a dict: its cotangent is a dict by key;
* a class registered with :func:`register_pytree` is flattened into its
  children by the user's function, and rebuilt by the other.

Gradients come back in the argument's own type (:func:`rebuild`): a
NamedTuple of gradients, a copy of the dataclass or object whose float
attributes are replaced by their gradients (zeros where nothing flowed),
other attributes (ints, strings, functions) left as they are.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import types
from typing import Any, Callable

import numpy as np

from .arrays import is_foreign
from .containers import TangentDict, TangentTuple, part
from .zero import zero

_registered: dict[type, tuple[Callable[[Any], tuple], Callable[[Any, Any], Any]]] = {}

# Types that are values, not structures: never looked into.
_ATOMS = (int, float, complex, str, bytes, bool, type(None), type, range, slice)


def register_pytree(cls: type, flatten: Callable[[Any], tuple], unflatten: Callable[[Any, Any], Any]) -> None:
    """Make instances of ``cls`` structured arguments and results, as ``jax.tree_util.register_pytree_node``.

    ``flatten(obj)`` returns ``(children, aux)``: a sequence of the values
    that hold floats, and anything else needed to rebuild; ``unflatten(aux,
    children)`` builds an instance. The function reads the instance by
    attribute, as it would without adsrc; gradients come back as an
    instance, built by ``unflatten`` from the gradients of the children.

    >>> import numpy as np, adsrc
    >>> class Affine:
    ...     def __init__(self, w, b):
    ...         self.w, self.b = w, b
    >>> adsrc.register_pytree(Affine, lambda a: ((a.w, a.b), None), lambda aux, c: Affine(*c))
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree takes a class, not {cls!r}")
    _registered[cls] = (flatten, unflatten)


def is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


_NOT_OBJECTS = (list, tuple, dict, set, frozenset, np.ndarray, np.generic, types.FunctionType, types.MethodType,
                types.BuiltinFunctionType, types.ModuleType, functools.partial)


def is_object(value: Any) -> bool:
    """A structure read by attribute: a dataclass instance, a registered class, a plain object."""
    if isinstance(value, _ATOMS) or isinstance(value, _NOT_OBJECTS) or inspect.isclass(value):
        return False
    kind = type(value)
    if kind in _registered or dataclasses.is_dataclass(value):
        return True
    module = getattr(kind, "__module__", "") or ""
    if module == "builtins" or module.split(".")[0] in ("numpy", "adsrc") or hasattr(value, "__array__") \
            or hasattr(value, "__array_function__"):
        return False  # a library's value (an array of another library, a ufunc, a thunk): not a structure
    return hasattr(value, "__dict__") or bool(getattr(kind, "__slots__", ()))


def holds_floats(value: Any, seen: frozenset = frozenset()) -> bool:
    """Whether a value, or a structure, holds floating-point numbers (what has a gradient)."""
    if isinstance(value, (float, np.floating)) or isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return True
    if isinstance(value, complex) or is_foreign(value) and value.dtype.kind in "fc":  # a Dask or CuPy array
        return True
    if id(value) in seen:
        return False
    if isinstance(value, dict):
        return any(holds_floats(v, seen | {id(value)}) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_floats(v, seen | {id(value)}) for v in value)
    return is_object(value) and any(holds_floats(v, seen | {id(value)}) for v in children(value))


def attributes(obj: Any) -> dict[str, Any]:
    """The attributes of an object that may hold floats, by name."""
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    out = dict(getattr(obj, "__dict__", {}))
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if slot not in out and slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                out[slot] = getattr(obj, slot)
    return out


def children(value: Any) -> list[Any]:
    """The parts of a structure, for walking its leaves (a registered class through its flatten)."""
    kind = type(value)
    if kind in _registered:
        return list(_registered[kind][0](value)[0])
    if is_object(value):
        return list(attributes(value).values())
    return []


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of a structure: of containers all, of objects those of the attributes that hold floats
    (an object's ints, strings and functions are its configuration, not its parameters)."""
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in tree_leaves(value)]
    if isinstance(tree, (list, tuple)):
        return [leaf for value in tree for leaf in tree_leaves(value)]
    if is_object(tree):
        return [leaf for value in children(tree) if holds_floats(value) for leaf in tree_leaves(value)]
    return [tree]


def is_keyed_attribute(obj: Any, name: str) -> bool:
    """Whether ``obj.name`` is ``obj[name]``: a dict subclass that reads its keys as attributes (SciPy's
    ``OdeResult`` and ``OptimizeResult``), whose cotangent is then a dict by key."""
    if not isinstance(obj, dict) or type(obj) is dict or not isinstance(name, str) or name not in obj:
        return False
    try:
        return getattr(obj, name) is obj[name]
    except Exception:  # an attribute that raises: not a key read
        return False


def _attribute_kind(obj: Any, name: str) -> str:
    """What ``obj.name`` is to a derivative: ``"method"`` (bound to ``obj``: its derivative is the
    object's), ``"part"`` (a part of the structure that holds floats), ``"key"`` (a dict's item read
    as an attribute) or ``"constant"``.

    A float-holding attribute of a value that is not a structure (``getattr(x, "T")`` of an array) is
    refused: only an array attribute with a rule of its own (``x.T``) has a gradient."""
    value = getattr(obj, name, None)
    if getattr(value, "__self__", None) is obj and getattr(value, "__func__", None) is not None:
        return "method"
    if isinstance(inspect.getattr_static(type(obj), name, None), functools.cached_property) and holds_floats(value):
        raise TypeError(f"the gradient of a {type(obj).__name__} reached {name}, a functools.cached_property: "
                        f"its getter is not differentiated (the value it cached would take the gradient of the "
                        f"attributes it computes from); read those attributes, or call a method instead")
    held = _holder(value)
    if held is not None and holds_floats(held):  # self.act = layer.forward: its gradient is layer's
        raise TypeError(f"the gradient of a {type(obj).__name__} reached its attribute {name!r}, which holds "
                        f"{'a bound method' if isinstance(value, types.MethodType) else 'a functools.partial'} "
                        f"of values with gradients (a {type(held).__name__}): adsrc cannot send the gradient "
                        f"through it to where those values live; store the object itself and call its method "
                        f"(self.layer.forward(x)), or pass the values as arguments")
    if not holds_floats(value):
        return "constant"
    if is_keyed_attribute(obj, name):
        return "key"
    if not (is_namedtuple(obj) or is_object(obj)):
        raise TypeError(f"adsrc differentiates getattr(obj, {name!r}) for attributes of objects, dataclasses and "
                        f"NamedTuples, not of a {type(obj).__name__}; write obj.{name} where adsrc has a rule "
                        f"for it (docs/rules.md)")
    return "part"


def _holder(value: Any) -> Any:
    """What a bound method or a ``functools.partial`` carries besides its function: its object, or its
    bound arguments; None for anything else."""
    if isinstance(value, types.MethodType) and not inspect.isclass(value.__self__):
        return value.__self__
    if isinstance(value, functools.partial):
        return (value.args, value.keywords)
    return None


def attribute_cotangent(g: Any, obj: Any, name: str) -> Any:
    """The cotangent of ``obj`` given the cotangent ``g`` of ``obj.name``.

    A bound method's cotangent is its object's (the method reads the object);
    a NamedTuple's is a tuple with ``g`` at the field's position; any other
    object's a dict holding ``g`` under the attribute's name.
    """
    if g is zero:
        return zero
    kind = _attribute_kind(obj, name)
    if kind not in ("part", "key"):
        return g if kind == "method" else zero
    if is_namedtuple(obj):
        parts = [zero] * len(obj)
        parts[type(obj)._fields.index(name)] = g
        return TangentTuple(parts)
    return TangentDict({name: g})


def attribute_tangent(t: Any, obj: Any, name: str) -> Any:
    """The tangent of ``obj.name`` given the tangent ``t`` of ``obj`` (the transpose of the above)."""
    if t is zero or t is None:
        return zero
    kind = _attribute_kind(obj, name)
    if kind not in ("part", "key"):
        return t if kind == "method" else zero
    if is_namedtuple(obj) and isinstance(t, tuple):
        return t[type(obj)._fields.index(name)]
    if isinstance(t, dict):
        return t.get(name, zero)
    return getattr(t, name, zero)  # a tangent given as an object of the same class


def as_attribute_tangent(tree: Any, to_tangent: Callable[[Any], Any]) -> Any:
    """A user's tangent or cotangent for an object (an instance of its class) as a dict of attributes."""
    kind = type(tree)
    if is_namedtuple(tree):
        return TangentTuple(to_tangent(v) for v in tree)
    if kind in _registered or is_object(tree):
        return TangentDict({k: to_tangent(v) for k, v in attributes(tree).items()})
    return tree


def rebuild(like: Any, cotangent: Any, finish: Callable[[Any, Any], Any]) -> Any:
    """The gradient of the structure ``like`` in its own type, given its cotangent.

    ``finish(cotangent, leaf_like)`` finishes each part (zeros where nothing flowed).
    """
    kind = type(like)
    if is_namedtuple(like):
        return kind(*(finish(part(cotangent, i), v) for i, v in enumerate(like)))
    attrs = attributes(like)
    got = {} if cotangent is zero else cotangent
    if type(got) is kind:
        got = attributes(got)  # given as an object of the same class
    elif not isinstance(got, dict):
        raise TypeError(f"the gradient of a {kind.__name__} object arrived as a {type(got).__name__}: a method or "
                        f"attribute of the object named like an array's (.sum(), .dot(), .T) was differentiated "
                        f"as the array's; rename it")
    unknown = sorted(set(got) - set(attrs))
    if unknown:
        raise TypeError(f"the gradient of a {kind.__name__} reached {', '.join(unknown)}, which "
                        f"{'is not an attribute' if len(unknown) == 1 else 'are not attributes'} held by the "
                        f"instance (a property or a class attribute); read instance attributes only")
    finished = {name: finish(got.get(name, zero), value) if holds_floats(value) else value
                for name, value in attrs.items()}
    if kind in _registered:
        flatten, unflatten = _registered[kind]
        shell = copy.copy(like)
        for name, value in finished.items():
            object.__setattr__(shell, name, value)
        parts, aux = flatten(shell)
        own, _ = flatten(like)
        return unflatten(aux, [finish(zero, o) if p is o else p for p, o in zip(parts, own)])
    if dataclasses.is_dataclass(like):
        fields = {f.name for f in dataclasses.fields(like) if f.init}
        out = dataclasses.replace(like, **{k: v for k, v in finished.items() if k in fields})
        for name, value in finished.items():
            if name not in fields:
                object.__setattr__(out, name, value)
        return out
    out = copy.copy(like)
    for name, value in finished.items():
        object.__setattr__(out, name, value)
    return out
