"""Rule templates: a vjp written as an expression that specialized code can inline.

A generic adjoint calls each rule's vjp through its wrapper (registry.py: the
zero guard, the complex check, the contribution's real part) and the rule's
own case analysis (``unbroadcast``, the rank of a matmul). Once the kinds of
the values are known (optimize/specialize.py infers them from the argument
types), most of that is decided: a template is the expression the vjp computes
for those kinds, such as ``g * math.cos(x)`` for ``math.sin`` of a float or
``g`` for ``x + y`` where ``g`` and ``x`` have the same shape.

A template is declared beside its rule (``deftemplate``), is another rule's
where the two compute the same for those kinds (``defsame``: ``np.dot``,
``np.inner`` and ``np.vdot`` of real vectors and matrices are ``np.matmul``,
so every template of matmul's serves them), or comes for free
with ``defderivative``: its derivative ``d(ans, x)``, read back from the rule
module's source (the one lambda of its line, checked against the lambda's own
names and constants), gives
``g * (d)``. Its ``exact`` predicate receives one :class:`Kind` per vjp
parameter (by name: ``g``, ``ans``, then the primal arguments) and says
whether the expression gives bit for bit what the vjp returns for values of
those kinds. The wrapper is a no-op when every value is real and ``g`` is not
the zero tangent; :func:`all_real` checks that, and every template asks it.

A kind is what the specializer knows of a value: its Python type, and for an
array its dtype and shape; for a list or tuple whose elements all have one
kind, its length and that kind (``list[512 x float64[10]]``). ``ZERO`` is adsrc's zero tangent, ``NONE`` the
``None`` passed for a value a vjp does not read.
"""
from __future__ import annotations

import ast
import inspect
import math
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..values import zero
from . import singular as _singular
from ..values.zero import ZeroTangent

__all__ = ["Kind", "ZERO", "NONE", "kind_of", "constant", "example", "shape_of", "all_real", "Template", "deftemplate",
           "derivative_template", "template_of", "same_shape", "broadcasts_to", "arrays", "defalternative",
           "templates_of", "float64_arrays", "float_scalar", "defsame", "ranks", "computes_as"]


@dataclass(frozen=True)
class Kind:
    """A value's Python type, and for an array its dtype and shape."""

    type: type
    dtype: Any = None
    shape: tuple | None = None
    const: tuple | None = None  # (value,) for a constant of the code (an axis, an exponent)
    item: "Kind | None" = None  # for a list or tuple (its shape is its length): the kind of every element
    items: "tuple[Kind, ...] | None" = None  # for a short list or tuple of elements of several kinds: each one

    def __repr__(self) -> str:
        if self.const is not None:
            return repr(self.const[0])
        if self.item is not None:
            return f"{self.type.__name__}[{self.shape[0]} x {self.item!r}]"
        if self.items is not None:
            return f"{self.type.__name__}({', '.join(map(repr, self.items))})"
        if self.type is np.ndarray:
            return f"{self.dtype}{list(self.shape)}"
        return self.type.__name__

    def variable(self) -> "Kind":
        """The kind of a name that was assigned this value (which may change)."""
        if self.items is not None:
            return Kind(self.type, items=tuple(k.variable() for k in self.items))
        return self if self.const is None else Kind(self.type)


ZERO = Kind(ZeroTangent)
NONE = Kind(type(None))
_SCALARS = (float, int, np.float64)
_REAL_DTYPES = "fiub"
MAX_EXAMPLE_SIZE = 1 << 20  # larger arrays are not built to infer a kind
MAX_ITEMS = 8  # a longer list or tuple of several kinds is not followed


def kind_of(value: Any) -> Kind | None:
    """The kind of a value, or None for anything the specializer does not follow."""
    kind = type(value)
    if kind in _SCALARS:
        return Kind(kind)
    if kind is np.ndarray and value.dtype.kind in _REAL_DTYPES:
        return Kind(np.ndarray, value.dtype, value.shape)
    if value is zero:
        return ZERO
    if value is None:
        return NONE
    if isinstance(value, (tuple, list)) and type(value).__module__ in ("builtins", "adsrc.values.containers") \
            and len(value) <= MAX_ITEMS:  # ([0.0], u[1:], [0.0]), or a cotangent of one
        items = tuple(kind_of(v) for v in value)
        return None if any(k is None for k in items) else Kind(type(value), items=items)
    return None


def constant(value: Any) -> Kind | None:
    """The kind of a constant written in the code, which keeps its value."""
    if type(value) in (int, float, str, bool, tuple) and value is not None:
        try:
            hash(value)
        except TypeError:
            return None
        return Kind(type(value), const=(value,))
    return kind_of(value)


def example(kind: Kind) -> Any:
    """A value of this kind (raises ValueError when an array would be too large to build)."""
    if kind.type is slice:  # a slice of constant bounds, kept as its bounds (a slice is not hashable)
        return slice(*kind.const[0])
    if kind.const is not None:
        return kind.const[0]
    if kind.type is np.ndarray:
        if math.prod(kind.shape) > MAX_EXAMPLE_SIZE:
            raise ValueError("too large an example")
        return np.full(kind.shape, 1 if kind.dtype.kind == "b" else 0.5, kind.dtype)
    if kind.item is not None:  # a list or tuple of n elements of one kind: one example, n times
        item = example(kind.item)
        if kind.shape[0] * max(1, np.size(item)) > MAX_EXAMPLE_SIZE:
            raise ValueError("too large an example")
        return kind.type([item] * kind.shape[0])
    if kind.items is not None:
        return kind.type([example(k) for k in kind.items])
    if kind is ZERO:
        return zero
    if kind is NONE:
        return None
    return kind.type(2 if kind.type is int else 0.5)


def shape_of(kind: Kind) -> tuple | None:
    """A value's shape as NumPy sees it: () for a scalar, None for the zero tangent or None."""
    if kind.type is np.ndarray:
        return kind.shape
    return () if kind.type in _SCALARS else None


def real(kind: Kind) -> bool:
    return kind.type in _SCALARS or kind.type is np.ndarray and kind.dtype.kind in _REAL_DTYPES


def all_real(kinds: dict[str, Kind]) -> bool:
    """Every value real (or an unread None) and ``g`` not the zero tangent: the vjp's wrapper does nothing."""
    return real(kinds["g"]) and all(real(k) or k is NONE for k in kinds.values())


def broadcast(*kinds: Kind) -> tuple | None:
    """The shape NumPy broadcasts these kinds to (None if they do not broadcast)."""
    shapes = [shape_of(k) for k in kinds]
    if any(s is None for s in shapes):
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def same_shape(a: str, b: str) -> Callable[[dict[str, Kind]], bool]:
    """``a`` and ``b`` have one shape (``unbroadcast(a, b)`` is ``a``)."""
    return lambda kinds: shape_of(kinds[a]) is not None and shape_of(kinds[a]) == shape_of(kinds[b])


def broadcasts_to(target: str, *factors: str) -> Callable[[dict[str, Kind]], bool]:
    """The product of ``factors`` has ``target``'s shape (summing it back to ``target`` does nothing)."""
    return lambda kinds: broadcast(*(kinds[f] for f in factors)) == shape_of(kinds[target])


def arrays(ndims: dict[str, int | None], only: bool = True) -> Callable[[dict[str, Kind]], bool]:
    """The named values are float arrays of these ranks (None: any rank), and, with ``only``, no optional
    argument was passed: the vjp's parameters are ``g``, ``ans`` and these."""
    def check(kinds: dict[str, Kind]) -> bool:
        if only and set(kinds) != {"g", "ans", *ndims}:
            return False
        return all(kinds[n].type is np.ndarray and kinds[n].dtype.kind == "f" and d in (None, len(kinds[n].shape))
                   for n, d in ndims.items())
    return check


@dataclass
class Template:
    """``text``: an expression in the vjp's parameter names (``g``, ``ans``, the arguments) and the
    modules ``np`` and ``math``; ``exact(kinds)``: whether it is what the vjp computes for these kinds."""

    text: str
    exact: Callable[[dict[str, Kind]], bool]
    modules: dict[str, types.ModuleType]

    def expression(self) -> ast.expr:
        return ast.parse(self.text, mode="eval").body


_MODULES = {"np": np, "math": math, "singular": _singular}


def deftemplate(rule: Any, position: int, text: str, when: Callable[[dict[str, Kind]], bool] | None = None) -> None:
    """Declare the template of ``rule``'s vjp at ``position``: exact where every value is real and
    ``when(kinds)`` holds (by default always)."""
    def exact(kinds: dict[str, Kind]) -> bool:
        return all_real(kinds) and (when is None or when(kinds))

    rule.extra.setdefault("templates", {})[position] = Template(text, exact, _MODULES)


def defalternative(rule: Any, position: int, text: str, when: Callable[[dict[str, Kind]], bool]) -> None:
    """A second template for ``rule``'s vjp at ``position``, for the kinds where ``when`` holds and the
    first one (``deftemplate``) is not exact: ``np.sum(g * x)`` for a product's scalar factor."""
    def exact(kinds: dict[str, Kind]) -> bool:
        return all_real(kinds) and when(kinds)

    rule.extra.setdefault("alternatives", {}).setdefault(position, []).append(Template(text, exact, _MODULES))


def defsame(rule: Any, other: Any, when: Callable[[dict[str, Kind]], bool]) -> None:
    """Declare that for the kinds where ``when`` holds, ``rule``'s vjps return bit for bit what ``other``'s
    do at the same positions (with the same parameter names), so that ``other``'s templates serve ``rule``:
    one linear algebra however it is spelled (``np.dot(a, b)``, ``np.inner``, ``a @ b``)."""
    rule.extra.setdefault("same", []).append((other, when))


def computes_as(rule: Any, other: Any, kinds: dict[str, Kind] | None = None) -> bool:
    """Whether ``rule``'s vjps return what ``other``'s do: it is ``other``, another spelling registered
    with ``other``'s own vjp functions (``operator.matmul``), or declared the same (``defsame``) for
    ``kinds`` (by parameter name), which then must be given."""
    if rule is other:
        return True
    raw = [getattr(v, "__wrapped__", v) for v in rule.vjps]
    if raw and raw == [getattr(v, "__wrapped__", v) for v in other.vjps]:
        return True
    return kinds is not None and any(o is other and when(kinds) for o, when in rule.extra.get("same", ()))


def ranks(allowed: dict[str, tuple[int, ...]]) -> Callable[[dict[str, Kind]], bool]:
    """The named values are real arrays whose ranks are among the allowed ones."""
    def check(kinds: dict[str, Kind]) -> bool:
        return all(kinds[n].type is np.ndarray and kinds[n].dtype.kind in "fiu" and len(kinds[n].shape) in r
                   for n, r in allowed.items())
    return check


def float64_arrays(*names: str) -> Callable[[dict[str, Kind]], bool]:
    """The named values are float64 arrays of one shape."""
    def check(kinds: dict[str, Kind]) -> bool:
        found = [kinds[n] for n in names]
        return all(k.type is np.ndarray and k.dtype == np.float64 and k.shape == found[0].shape for k in found)
    return check


def float_scalar(name: str) -> Callable[[dict[str, Kind]], bool]:
    """The named value is a Python float or a NumPy float64."""
    return lambda kinds: kinds[name].type in (float, np.float64) and kinds[name].const is None


def derivative_template(derivative: Callable, params: list[str], singular: bool = False) \
        -> Callable[[], Template | None]:
    """The template of a ``defderivative`` rule, ``g * (d)`` (``singular.times(g, d)`` for a derivative
    declared singular: what its vjp computes), made when first asked for (None when ``d``'s source cannot
    be read back, or it reads anything but its parameters and modules)."""
    made: list = []

    def template() -> Template | None:
        if not made:
            made.append(_from_derivative(derivative, params, singular))
        return made[0]

    return template


def _from_derivative(derivative: Callable, params: list[str], singular: bool = False) -> Template | None:
    code = getattr(derivative, "__code__", None)
    if code is None or derivative.__name__ != "<lambda>":
        return None
    try:
        tree = ast.parse("".join(inspect.findsource(derivative)[0]))
    except (OSError, TypeError, SyntaxError):
        return None
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno \
                and [a.arg for a in node.args.args] == params and _same_code(node, code):
            if found is not None:
                return None  # two lambdas of these parameters on one line: which is it?
            found = node
    if found is None:
        return None
    modules = {}
    for node in ast.walk(found.body):
        if isinstance(node, ast.Name) and node.id not in params:
            value = derivative.__globals__.get(node.id)
            if not isinstance(value, types.ModuleType):
                return None
            modules[node.id] = value
    if any(m not in (np, math) for m in modules.values()):
        return None
    if singular:
        return Template(f"singular.times(g, {ast.unparse(found.body)})", all_real, {**modules, "singular": _singular})
    return Template(f"g * ({ast.unparse(found.body)})", all_real, modules)


def _same_code(node: ast.Lambda, code: types.CodeType) -> bool:
    """Whether the lambda ``node`` compiles to ``code`` (so the source read back is this rule's)."""
    try:
        compiled = compile(ast.Expression(body=node), code.co_filename, "eval")
    except (SyntaxError, ValueError):
        return False
    inner = next((c for c in compiled.co_consts if isinstance(c, types.CodeType)), None)
    # Names and constants, not bytecode, which differs between compilers (LOAD_METHOD or LOAD_ATTR).
    return inner is not None and inner.co_names == code.co_names and inner.co_consts == code.co_consts \
        and inner.co_varnames == code.co_varnames


def templates_of(rule: Any, position: int) -> list[Template]:
    """The templates for ``rule``'s vjp at ``position``: the declared one first, then the alternatives, then
    those of the rules it is the same as (``defsame``), each for the kinds where it is."""
    first = template_of(rule, position)
    found = ([first] if first is not None else []) + rule.extra.get("alternatives", {}).get(position, [])
    for other, when in rule.extra.get("same", ()):
        found += [_where(t, when) for t in templates_of(other, position)]
    return found


def _where(template: Template, when: Callable[[dict[str, Kind]], bool]) -> Template:
    return Template(template.text, lambda kinds: when(kinds) and template.exact(kinds), template.modules)


def template_of(rule: Any, position: int) -> Template | None:
    """The template declared for ``rule``'s vjp at ``position``, or None."""
    templates = rule.extra.get("templates")
    if not templates:
        return None
    found = templates.get(position)
    return found() if callable(found) and not isinstance(found, Template) else found
