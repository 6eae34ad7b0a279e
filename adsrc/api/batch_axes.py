"""Where the batch axis is, for adsrc.vmap (vmap.py): the arguments bound and their batch axes moved to
the front (what the transform is told of each), and the outputs' batch axes moved to ``out_axes``
(an output that is the same for every example repeated), with the pullbacks of both moves; and the
loop of calls that runs what cannot be batched.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import numpy as np

from ..errors import InvalidArgument
from ..frontend.parse import signature_of
from ..rules.batching import Info, Seq, is_batched
from ..transforms.batching import info_of
from ..values import part, unthunk, zero
from .derivative import Derivative
from .primitives import callable_for

Axes = Any  # an int, None, or a tuple/list/dict of them


def name_of(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def bind_axes(func: Callable, args: tuple, kwargs: dict, in_axes: Axes) -> tuple[list, list]:
    """The arguments in signature order and the axes tree of each (None for keyword arguments)."""
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != len(args):
            raise InvalidArgument(f"vmap of {name_of(func)}: in_axes has {len(in_axes)} entries for {len(args)} "
                                  f"positional arguments; give one per positional argument")
        per_arg = list(in_axes)
    else:
        per_arg = [in_axes] * len(args)
    target = func.of if isinstance(func, Derivative) else callable_for(func)
    try:
        signature = signature_of(target) if inspect.isfunction(target) else inspect.signature(target)
        bound = signature.bind(*args, **kwargs)
        marks = signature.bind(*per_arg, **{k: None for k in kwargs})
    except (TypeError, ValueError) as error:
        raise InvalidArgument(f"vmap of {name_of(func)}: {error}") from None
    bound.apply_defaults()
    axes = [marks.arguments.get(name) for name in bound.arguments]
    return list(bound.arguments.values()), axes


def _leaves(value: Any, axes: Axes, path: str, out: list) -> None:
    """Each (leaf, axis, path) of ``value`` under the axes tree ``axes`` (a prefix of its structure)."""
    if axes is None or isinstance(axes, int):
        if isinstance(value, dict):
            for k, v in value.items():
                _leaves(v, axes, f"{path}[{k!r}]", out)
        elif isinstance(value, (tuple, list)):
            for k, v in enumerate(value):
                _leaves(v, axes, f"{path}[{k}]", out)
        else:
            out.append((value, axes, path))
        return
    if isinstance(axes, dict) and isinstance(value, dict) and list(axes) == list(value):
        for k in value:
            _leaves(value[k], axes[k], f"{path}[{k!r}]", out)
    elif isinstance(axes, (tuple, list)) and isinstance(value, (tuple, list)) and len(axes) == len(value):
        for k, (v, a) in enumerate(zip(value, axes)):
            _leaves(v, a, f"{path}[{k}]", out)
    else:
        raise InvalidArgument(f"vmap's in_axes {axes!r} does not match the structure of argument{path}")


def batch_size(values: list, axes: list, axis_size: Optional[int], func: Callable) -> int:
    sizes = {}
    for k, (value, ax) in enumerate(zip(values, axes)):
        found: list = []
        _leaves(value, ax, f" {k}", found)
        for leaf, axis, path in found:
            if axis is None:
                continue
            ndim = np.ndim(leaf)
            if not -ndim <= axis < ndim:
                raise InvalidArgument(f"vmap of {name_of(func)}: in_axes {axis} is out of range for argument{path}, "
                                      f"of shape {np.shape(leaf)}")
            sizes[path] = np.shape(leaf)[axis]
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"argument{p}: {s}" for p, s in sizes.items())
        raise InvalidArgument(f"vmap of {name_of(func)}: the batched arguments have different batch sizes ({shown})")
    if sizes:
        size = next(iter(sizes.values()))
        if axis_size is not None and axis_size != size:
            raise InvalidArgument(f"vmap of {name_of(func)}: axis_size={axis_size} but the batched arguments have "
                                  f"batch size {size}")
        return size
    if axis_size is None:
        raise InvalidArgument(f"vmap of {name_of(func)}: no argument is batched (every in_axes is None); give "
                              f"axis_size= to say how many examples")
    return axis_size


def move_in(value: Any, axes: Axes) -> Any:
    """``value`` with the batch axis of each batched leaf moved to the front."""
    if isinstance(value, dict):
        return {k: move_in(v, axes[k] if isinstance(axes, dict) else axes) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        parts = [move_in(v, axes[k] if isinstance(axes, (tuple, list)) else axes) for k, v in enumerate(value)]
        return type(value)(parts) if type(value) in (tuple, list) else type(value)(*parts)
    if axes is None:
        return value
    return np.moveaxis(np.asarray(value), axes, 0) if axes != 0 else np.asarray(value)


def infos_of(value: Any, axes: Axes) -> Any:
    """What the transform is told of an argument (its batch axis already in front)."""
    if isinstance(value, dict):
        return {k: infos_of(v, axes[k] if isinstance(axes, dict) else axes) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(infos_of(v, axes[k] if isinstance(axes, (tuple, list)) else axes)
                           for k, v in enumerate(value))
    if axes is None:
        return info_of(value)
    return Info(True, np.ndim(value) - 1)


def plain_structure(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(plain_structure(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return type(value) in (tuple, list) and all(plain_structure(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, np.generic, np.ndarray, str))


def repeat(value: Any, axes: Axes, size: int) -> Any:
    """An argument with every unbatched leaf repeated ``size`` times along a new first axis."""
    if isinstance(value, dict):
        return {k: repeat(v, axes[k] if isinstance(axes, dict) else axes, size) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(repeat(v, axes[k] if isinstance(axes, (tuple, list)) else axes, size)
                           for k, v in enumerate(value))
    if axes is not None or value is None:
        return value
    array = np.asarray(value)  # an int stays an int, for grad to refuse as a loop of grad calls would
    return np.broadcast_to(array, (size,) + array.shape)  # a view: read, never written


def _example(value: Any, axes: Axes, k: int) -> Any:
    if isinstance(value, dict):
        return {key: _example(v, axes[key] if isinstance(axes, dict) else axes, k) for key, v in value.items()}
    if isinstance(value, (tuple, list)):
        parts = [_example(v, axes[j] if isinstance(axes, (tuple, list)) else axes, k) for j, v in enumerate(value)]
        return type(value)(parts) if type(value) in (tuple, list) else type(value)(*parts)
    return value if axes is None else value[k]


def _call_in_order(func: Callable, values: list) -> Any:
    """``func`` called with the arguments ``bind_axes`` put in signature order (``*args`` as one tuple,
    keyword-only and ``**kwargs`` ones by name)."""
    target = func.of if isinstance(func, Derivative) else callable_for(func)
    params = list((signature_of(target) if inspect.isfunction(target) else inspect.signature(target))
                  .parameters.values())
    args: list = []
    kwargs: dict = {}
    for p, value in zip(params, values):
        if p.kind is p.VAR_POSITIONAL:
            args.extend(value)
        elif p.kind is p.VAR_KEYWORD:
            kwargs.update(value)
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    return func(*args, **kwargs)


def loop_calls(func: Callable, moved: list, axes: list, size: int) -> Any:
    """``func`` called once per example, the results stacked leaf by leaf."""
    from .trees import tree_flatten, tree_unflatten

    results = [_call_in_order(func, [_example(v, a, k) for v, a in zip(moved, axes)]) for k in range(size)]
    if not results:
        raise InvalidArgument(f"vmap of {name_of(func)} on an empty batch cannot tell what it returns")
    flat = [tree_flatten(r) for r in results]
    structure = flat[0][1]
    if any(s != structure for _, s in flat):
        raise InvalidArgument(f"vmap of {name_of(func)}: the examples' results have different structures")
    leaves = [np.stack([np.asarray(f[0][j]) for f in flat]) for j in range(len(flat[0][0]))]
    return tree_unflatten(structure, leaves)


def owned(out: Any, args: list) -> Any:
    """The outputs, each its own array: one that is a view of an argument (``return x``) is copied, as
    stacking the examples' results would."""
    from .trees import tree_flatten, tree_unflatten

    inputs = [a for a in tree_flatten(args)[0] if isinstance(a, np.ndarray)]
    leaves, structure = tree_flatten(out)
    if not any(isinstance(leaf, np.ndarray) and any(np.may_share_memory(leaf, a) for a in inputs)
               for leaf in leaves):
        return out
    return tree_unflatten(structure, [leaf.copy() if isinstance(leaf, np.ndarray) and
                                      any(np.may_share_memory(leaf, a) for a in inputs) else leaf
                                      for leaf in leaves])


def _items(info: Any, value: Any) -> Any:
    """A comprehension's list (``Seq``) as the list of its items' infos."""
    return [info.item] * len(value) if isinstance(info, Seq) and isinstance(value, (list, tuple)) else info


def move_back(g: Any, value: Any, info: Any, axes: Axes) -> Any:
    """The pullback of ``move_out``: a cotangent of the output given back in the batched function's
    layout (batch axis first; summed over the examples for an output that was repeated)."""
    info = _items(info, value)
    if g is zero:
        return zero
    if isinstance(value, dict):
        return {k: move_back(part(g, k), v, info[k] if isinstance(info, dict) else info,
                              axes[k] if isinstance(axes, dict) else axes) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(move_back(part(g, j), v, info[j] if isinstance(info, (tuple, list)) else info,
                                      axes[j] if isinstance(axes, (tuple, list)) else axes)
                           for j, v in enumerate(value))
    g = unthunk(g)
    if axes is None:
        return g
    front = np.moveaxis(np.asarray(g), axes, 0)
    return front if is_batched(info) else np.sum(front, axis=0)


def unmove(g: Any, axes: Axes) -> Any:
    """The pullback of ``move_in``: an argument's gradient with its batch axis back where it was."""
    if g is zero or axes is None or axes == 0 and not isinstance(g, (dict, tuple, list)):
        return g
    if isinstance(g, dict):
        return type(g)({k: unmove(v, axes[k] if isinstance(axes, dict) else axes) for k, v in g.items()})
    if isinstance(g, (tuple, list)):
        return type(g)(unmove(v, axes[j] if isinstance(axes, (tuple, list)) else axes) for j, v in enumerate(g))
    return np.moveaxis(unthunk(g), 0, axes)


def all_batched(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: all_batched(v) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(all_batched(v) for v in value)
    return Info(True, None)


def move_out(value: Any, info: Any, axes: Axes, size: int, func: Callable) -> Any:
    """An output with each leaf's batch axis at its place in ``out_axes`` (unbatched leaves repeated)."""
    info = _items(info, value)
    if isinstance(info, Info) or not isinstance(value, (dict, tuple, list)):
        return _leaf_out(value, is_batched(info), axes, size, func)
    if isinstance(value, dict):
        return {k: move_out(v, info[k] if isinstance(info, dict) else info,
                             axes[k] if isinstance(axes, dict) else axes, size, func) for k, v in value.items()}
    parts = [move_out(v, info[j] if isinstance(info, (tuple, list)) else info,
                       axes[j] if isinstance(axes, (tuple, list)) else axes, size, func) for j, v in enumerate(value)]
    if isinstance(axes, (tuple, list)) and len(axes) != len(value):
        raise InvalidArgument(f"vmap of {name_of(func)}: out_axes {axes!r} does not match the output's structure")
    return type(value)(parts) if type(value) in (tuple, list) else type(value)(*parts)


def _leaf_out(value: Any, batched: bool, axis: Axes, size: int, func: Callable) -> Any:
    if isinstance(value, (dict, tuple, list)):
        if not isinstance(axis, (int, type(None))):
            raise InvalidArgument(f"vmap of {name_of(func)}: out_axes {axis!r} does not match the output's structure")
        return move_out(value, Info(batched, None), axis, size, func)
    if axis is None:
        if batched:
            raise InvalidArgument(f"vmap of {name_of(func)}: out_axes is None for an output that differs from "
                                  f"example to example; give it a batch axis")
        return value
    if not isinstance(axis, int):
        raise InvalidArgument(f"vmap of {name_of(func)}: out_axes {axis!r} does not match the output's structure")
    array = np.asarray(value)
    if not batched:
        array = np.broadcast_to(array, (size,) + array.shape).copy()
    if not -array.ndim <= axis < array.ndim:
        raise InvalidArgument(f"vmap of {name_of(func)}: out_axes {axis} is out of range for an output of rank "
                              f"{array.ndim - 1} per example")
    return np.moveaxis(array, 0, axis) if axis != 0 else array
