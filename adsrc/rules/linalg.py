"""Products and contractions: matmul, dot, einsum and friends, trace/diagonal, cross.

Most contractions are phrased as an einsum and share one vjp, which contracts
the cotangent with the other operands. Repeated subscripts (``"ii->i"``) put
the gradient back on the diagonal; subscripts that only one operand uses are
broadcast back. einsum is differentiable in every form NumPy accepts:
subscripts with or without ``->``, with ``...`` (each broadcast axis gets a
label of its own, and an axis of length 1 that was broadcast is summed back),
and the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, whose operands
sit at the even positions.

The matmul/dot and outer vjps declare a batched ``fuse`` form: k contributions
``g_i @ B_iᵀ`` to the same A are one product of the concatenated factors, so
512 outer products in a loop become one GEMM.

Every product here is multilinear and the diagonal and triangle extractions are
linear, so they are registered with ``deflinear``: each argument's jvp is the
product with that argument's tangent in its place. multi_dot takes a list of
matrices, so its tangent is one product per matrix that has a tangent.
"""
from __future__ import annotations

import operator
import string

import numpy as np

from ..errors import NotDifferentiable
from .registry import defjvp, deflinear, defmethod, defvjp, lookup
from ._util import as_array, note, unbroadcast, variadic, zero
from .templates import arrays, defalternative, defsame, deftemplate, ranks

_LETTERS = string.ascii_letters


# ---- einsum, the common vjp of the contractions below ----------------------
# Sublist labels are ints 0-51; NumPy reads them as A-Z then a-z, whose order
# (implicit mode sorts the output labels) is that of the ints.
_SUBLIST_LABELS = string.ascii_uppercase + string.ascii_lowercase


def _sublist_term(sublist) -> str:
    """A sublist (``[0, 1]``, ``[Ellipsis, 0]``) as subscripts."""
    return "".join("..." if item is Ellipsis else _SUBLIST_LABELS[int(item)] for item in sublist)


def _einsum_call(args):
    """The subscripts and operands of an einsum call, in either form, with the operands' positions.

    ``einsum("ij,jk->ik", a, b)``: the operands are at positions 1, 2, ...;
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``: at positions 0, 2, ..., each
    followed by its sublist, and an optional output sublist last.
    """
    if isinstance(args[0], str):
        return args[0], list(args[1:]), list(range(1, len(args)))
    count = len(args) // 2
    spec = ",".join(_sublist_term(args[2 * i + 1]) for i in range(count))
    if len(args) % 2:
        spec += "->" + _sublist_term(args[-1])
    return spec, [args[2 * i] for i in range(count)], [2 * i for i in range(count)]


def _einsum_terms(subscripts, operands):
    """Input and output subscripts of an einsum, the output made explicit and every ``...``
    replaced by letters of its own (one per broadcast axis, aligned on the right)."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:  # implicit mode: the ellipsis axes, then the labels used once, in alphabetical order
        inputs = spec
        letters = inputs.replace(",", "").replace(".", "")
        output = ("..." if "." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    inputs = inputs.split(",")
    if "." not in spec:
        return inputs, output
    unused = [c for c in _LETTERS if c not in spec]
    widths = [np.ndim(op) - (len(term) - 3) if "..." in term else 0 for term, op in zip(inputs, operands)]
    width = max(widths, default=0)
    axes = "".join(unused[:width])
    inputs = [term.replace("...", axes[width - w:] if w else "") for term, w in zip(inputs, widths)]
    return inputs, output.replace("...", axes)


def _einsum_grad(g, inputs, output, operands, k):
    """The gradient of ``einsum(",".join(inputs) + "->" + output, *operands)`` with respect to operand ``k``."""
    target, shape = inputs[k], np.shape(operands[k])
    labels = list(dict.fromkeys(target))
    others = [(s, op) for j, (s, op) in enumerate(zip(inputs, operands)) if j != k]
    seen = set(output).union(*(set(s) for s, _ in others))
    kept = "".join(c for c in labels if c in seen)
    g = as_array(g, dtype=np.result_type(g, *operands))
    spec = ",".join([output] + [s for s, _ in others]) + "->" + kept
    grad = np.einsum(spec, g, *(op for _, op in others), optimize=len(others) > 1)
    sizes = {c: shape[target.index(c)] for c in labels}
    # An axis of length 1 that NumPy broadcast against the other operands: sum it back.
    broadcast = tuple(i for i, c in enumerate(kept) if sizes[c] == 1 and grad.shape[i] != 1)
    if broadcast:
        grad = np.sum(grad, axis=broadcast, keepdims=True)
    if len(kept) < len(labels):  # labels summed inside operand k alone: broadcast back
        grad = np.reshape(grad, [sizes[c] if c in kept else 1 for c in labels])
        grad = np.broadcast_to(grad, [sizes[c] for c in labels])
    if len(labels) == len(target):
        return grad
    out = np.zeros(shape, dtype=grad.dtype)  # repeated labels: scatter onto the diagonal
    index = tuple(
        np.arange(sizes[c]).reshape([-1 if i == labels.index(c) else 1 for i in range(len(labels))]) for c in target
    )
    out[index] = grad
    return out


def _einsum_vjp(position):
    """The vjp of the argument at ``position``, in either form; a subscripts string or a sublist gets none."""

    def vjp(g, ans, *args, **kwargs):
        subscripts, operands, positions = _einsum_call(args)
        if position not in positions:
            return zero
        inputs, output = _einsum_terms(subscripts, operands)
        return _einsum_grad(g, inputs, output, operands, positions.index(position))

    return vjp


# NumPy's most, 63 operands, in the subscripts form (at positions 1 to 63); 32 in the sublist
# form, where they sit at the even positions.
_EINSUM_POSITIONS = 64
deflinear(np.einsum, *variadic(_einsum_vjp, _EINSUM_POSITIONS, ("operand", "a", "b", "c", "d", "e", "f")),
          piecewise_linear=False)


def _contract(g, a, b, spec_a, spec_b, spec_out, k):
    return _einsum_grad(g, [spec_a, spec_b], spec_out, (a, b), k)


# ---- matmul and dot --------------------------------------------------------
def _matrix_vector(g, a, b) -> bool:
    """``a @ b`` of a NumPy matrix and vector, the step of most loops: its vjps skip the general case."""
    return type(a) is np.ndarray and type(b) is np.ndarray and type(g) is np.ndarray and a.ndim == 2 and b.ndim == 1


def _matmul_da(g, ans, a, b):
    if _matrix_vector(g, a, b):
        return g[:, None] * b
    if np.ndim(b) == 1:
        if np.ndim(a) == 1:
            return g * b
        return unbroadcast(np.expand_dims(g, -1) * b, a)
    if np.ndim(a) == 1:
        return unbroadcast(np.matmul(b, np.expand_dims(g, -1))[..., 0], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def _matmul_db(g, ans, a, b):
    if _matrix_vector(g, a, b):
        return a.T @ g
    if np.ndim(a) == 1:
        if np.ndim(b) == 1:
            return g * a
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b)
    if np.ndim(b) == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def _dot_terms(a, b):
    """dot as einsum subscripts: the last axis of a against the second-to-last of b."""
    na, nb = np.ndim(a), np.ndim(b)
    sa = _LETTERS[:na]
    sb = list(_LETTERS[na : na + nb])
    sb[-2 if nb >= 2 else 0] = sa[-1]
    sb = "".join(sb)
    return sa, sb, sa[:-1] + "".join(c for c in sb if c != sa[-1])


def _dot_vjp(k):
    matmul_vjp = (_matmul_da, _matmul_db)[k]

    def vjp(g, ans, a, b, out=None):
        if np.ndim(a) == 0 or np.ndim(b) == 0:
            return unbroadcast(g * (b, a)[k], (a, b)[k])
        if np.ndim(a) <= 2 and np.ndim(b) <= 2:
            return matmul_vjp(g, None, a, b)
        return _contract(g, a, b, *_dot_terms(a, b), k)

    return vjp


def _as_2d_factors(calls, side):
    """Left/right factors of each contribution as 2-D blocks, or None if not batchable."""
    lefts, rights = [], []
    for args, kwargs in calls:
        g, _, a, b = args[:4]
        if kwargs or len(args) > 4 or not 1 <= np.ndim(a) <= 2 or not 1 <= np.ndim(b) <= 2:
            return None
        if side == 0:  # dA = g ⊗ b: rows of g against rows of b
            if np.ndim(a) != 2:
                return None
            lefts.append(np.reshape(g, (np.shape(a)[0], -1)))
            rights.append(np.reshape(b, (np.shape(a)[1], -1)).T if np.ndim(b) == 2 else np.reshape(b, (1, -1)))
        else:  # dB = a ⊗ g
            if np.ndim(b) != 2:
                return None
            lefts.append(np.reshape(a, (-1, np.shape(b)[0])).T if np.ndim(a) == 2 else np.reshape(a, (-1, 1)))
            rights.append(np.reshape(g, (-1, np.shape(b)[1])))
    if len({l.shape[0] for l in lefts}) != 1 or len({r.shape[1] for r in rights}) != 1:
        return None
    return lefts, rights


# The parts of a call (args, kwargs) and of its args (g, ans, a, b), taken from many calls at once.
_ARGUMENTS, _KEYWORDS = operator.itemgetter(0), operator.itemgetter(1)
_G, _A, _B = operator.itemgetter(0), operator.itemgetter(2), operator.itemgetter(3)
_SHAPE = operator.attrgetter("shape")


def _fuse_vector_calls(calls, side):
    """The common loop case, ``W @ x_i`` with vectors: one GEMM, no per-call reshapes.

    For dW the contributions are outer products g_i x_iᵀ, whose sum is Gᵀ X
    with the g_i and x_i stacked as rows; for dx with one shared W it is
    Wᵀ (Σ g_i). Returns None when the calls are not of that form. The checks
    look at whole columns (a set of types, one ``np.array`` of the rows),
    since a loop's Stack hands over many calls at once.
    """
    if any(map(_KEYWORDS, calls)):
        return None
    rows = list(map(_ARGUMENTS, calls))
    if set(map(len, rows)) != {4}:
        return None
    gs, as_, bs = list(map(_G, rows)), list(map(_A, rows)), list(map(_B, rows))
    if set(map(type, gs)) != {np.ndarray} or set(map(type, as_)) != {np.ndarray}:
        return None
    try:
        G, X = np.array(gs), np.array(bs)  # rows of one length, or an error (or more axes)
    except ValueError:
        return None
    shared = len(set(map(id, as_))) == 1  # one W for every step, the common loop
    shapes = {as_[0].shape} if shared else set(map(_SHAPE, as_))
    if G.ndim != 2 or X.ndim != 2 or X.dtype == object or shapes != {(G.shape[1], X.shape[1])}:
        return None
    if side == 0:
        return G.T @ X
    if shared:
        return as_[0].T @ np.sum(G, axis=0)
    return None


def _fuse_matmul(side):
    def fuse(calls):
        fused = _fuse_vector_calls(calls, side)
        if fused is not None:
            return fused
        factors = _as_2d_factors(calls, side)
        if factors is None:
            return None
        lefts, rights = factors
        return np.concatenate(lefts, axis=1) @ np.concatenate(rights, axis=0)

    return fuse


_MATMUL_FUSE = {0: _fuse_matmul(0), 1: _fuse_matmul(1)}
deflinear(np.matmul, _matmul_da, _matmul_db, fuse=_MATMUL_FUSE)
def _matrix_vector_kinds(k) -> bool:
    """A matrix times a vector, ``_matmul_db``'s first case (the step of an RNN: ``Wh.T @ g``)."""
    return arrays({"a": 2, "b": 1})(k) and k["g"].type is np.ndarray and k["g"].shape == (k["a"].shape[0],) \
        and k["b"].shape == (k["a"].shape[1],)


def _vector_matrix_kinds(k) -> bool:
    """A vector times a matrix, ``h @ W``: no broadcasting, so unbroadcast does nothing."""
    return arrays({"a": 1, "b": 2})(k) and k["g"].type is np.ndarray and k["g"].shape == (k["b"].shape[1],) \
        and k["a"].shape == (k["b"].shape[0],)


# Two matrices, where summing back to the argument's shape does nothing; a matrix times a vector (db).
deftemplate(lookup(np.matmul), 0, "g @ b.T", lambda k: arrays({"a": 2, "b": 2})(k)
            and k["a"].shape == (k["g"].shape[0], k["b"].shape[0]))
deftemplate(lookup(np.matmul), 1, "a.T @ g", lambda k: arrays({"a": 2, "b": 2})(k)
            and k["b"].shape == (k["a"].shape[1], k["g"].shape[1]))
# gᵀA: the same BLAS gemv as a.T @ g (the same values); the array's own dot skips the dispatch that
# np.matmul and np.dot go through, so it costs a third of a.T @ g on a 32x32 matrix
defalternative(lookup(np.matmul), 1, "g.dot(a)", _matrix_vector_kinds)
# Two vectors: one product per element, g * b (the inner products' too, however NumPy spells them).
_vectors = ranks({"a": (1,), "b": (1,)})
defalternative(lookup(np.matmul), 0, "g * b", _vectors)
defalternative(lookup(np.matmul), 1, "g * a", _vectors)
# A vector times a matrix, as _matmul_da and _matmul_db compute it. (A matrix times a vector keeps its
# outer product g bᵀ deferred: a loop's are one GEMM, optimize/stacks.py's outer_pushes.)
# (Of vectors, g[:, None] is np.expand_dims(g, -1), the same view, without the axis checks.)
defalternative(lookup(np.matmul), 0, "(b @ g[:, None])[:, 0]", _vector_matrix_kinds)
defalternative(lookup(np.matmul), 1, "a[:, None] * g", _vector_matrix_kinds)
if hasattr(np.linalg, "matmul"):
    deflinear(np.linalg.matmul, _matmul_da, _matmul_db, fuse=_MATMUL_FUSE)
deflinear(np.dot, *variadic(_dot_vjp, 2, ("a", "b")), fuse=_MATMUL_FUSE)
# dot of vectors and matrices is matmul: its vjps call matmul's
defsame(lookup(np.dot), lookup(np.matmul), ranks({"a": (1, 2), "b": (1, 2)}))


# ---- other products --------------------------------------------------------
def _inner_vjp(k):
    def vjp(g, ans, a, b):
        if np.ndim(a) == 0 or np.ndim(b) == 0:
            return unbroadcast(g * (b, a)[k], (a, b)[k])
        na, nb = np.ndim(a), np.ndim(b)
        sa, sb = _LETTERS[:na], _LETTERS[na : na + nb - 1] + _LETTERS[na - 1]
        return _contract(g, a, b, sa, sb, sa[:-1] + sb[:-1], k)

    return vjp


def _tensordot_axes(a, b, axes):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(np.ndim(a) - n, np.ndim(a))), list(range(n))
    axes_a, axes_b = axes
    axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
    axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    return [i % np.ndim(a) for i in axes_a], [i % np.ndim(b) for i in axes_b]


def _tensordot_vjp(k):
    def vjp(g, ans, a, b, axes=2):
        axes_a, axes_b = _tensordot_axes(a, b, axes)
        na, nb = np.ndim(a), np.ndim(b)
        sa = _LETTERS[:na]
        sb = list(_LETTERS[na : na + nb])
        for i, j in zip(axes_a, axes_b):
            sb[j] = sa[i]
        out = "".join(c for i, c in enumerate(sa) if i not in axes_a) + "".join(
            c for j, c in enumerate(sb) if j not in axes_b
        )
        return _contract(g, a, b, sa, "".join(sb), out, k)

    return vjp


def _outer_da(g, ans, a, b, out=None):
    return np.reshape(g @ np.ravel(b), np.shape(a))


def _outer_db(g, ans, a, b, out=None):
    return np.reshape(np.ravel(a) @ g, np.shape(b))


def _fuse_outer(side):
    """k contributions ``g_i @ b_i`` to one ``a`` are one product of the stacked factors."""

    def fuse(calls):
        if any(kwargs or len(args) > 4 for args, kwargs in calls):
            return None
        mine = {np.shape(args[2 + side]) for args, _ in calls}
        if len(mine) != 1:
            return None
        gs = [args[0] for args, _ in calls]
        others = [np.ravel(args[3 - side]) for args, _ in calls]
        if side == 0:
            total = np.concatenate(gs, axis=1) @ np.concatenate(others)
        else:
            total = np.concatenate(others) @ np.concatenate(gs, axis=0)
        return np.reshape(total, mine.pop())

    return fuse


def _kron_vjp(k):
    def vjp(g, ans, a, b):
        nd = max(np.ndim(a), np.ndim(b))
        sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
        sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
        blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
        la, lb = _LETTERS[:nd], _LETTERS[nd : 2 * nd]
        spec = "".join(x + y for x, y in zip(la, lb))
        grad = _contract(blocks, np.reshape(a, sa), np.reshape(b, sb), la, lb, spec, k)
        return np.reshape(grad, np.shape((a, b)[k]))

    return vjp


def _vdot_vjp(k):
    def vjp(g, ans, a, b):
        return np.reshape(g * np.ravel((b, a)[k]), np.shape((a, b)[k]))

    return vjp


def _vecdot_vjp(k):
    def vjp(g, ans, x1, x2, /, *, axis=-1, **kwargs):
        return unbroadcast(np.expand_dims(g, axis) * (x2, x1)[k], (x1, x2)[k])

    return vjp


deflinear(np.inner, *variadic(_inner_vjp, 2, ("a", "b")))
defsame(lookup(np.inner), lookup(np.matmul), _vectors)  # of two vectors: one product per element
deflinear(np.tensordot, *variadic(_tensordot_vjp, 2, ("a", "b")))
deflinear(np.outer, _outer_da, _outer_db, fuse={0: _fuse_outer(0), 1: _fuse_outer(1)})
deflinear(np.kron, *variadic(_kron_vjp, 2, ("a", "b")))
deflinear(np.vdot, *variadic(_vdot_vjp, 2, ("a", "b")))
defsame(lookup(np.vdot), lookup(np.matmul), _vectors)  # of two real vectors, the same
if hasattr(np, "vecdot"):
    deflinear(np.vecdot, *variadic(_vecdot_vjp, 2, ("x", "y")))
    deflinear(np.linalg.vecdot, *variadic(_vecdot_vjp, 2, ("x", "y")))
    deflinear(np.linalg.outer, _outer_da, _outer_db, fuse={0: _fuse_outer(0), 1: _fuse_outer(1)})
    deflinear(np.linalg.tensordot, *(lambda g, ans, a, b, /, *, axes=2, _v=v: _v(g, None, a, b, axes)
                                  for v in variadic(_tensordot_vjp, 2, ("a", "b"))))


def _multi_dot_darrays(g, ans, arrays, *, out=None):
    """One gradient per matrix: (product of those before)ᵀ @ g @ (product of those after)ᵀ."""
    mats = [as_array(m) for m in arrays]
    work = list(mats)
    if work[0].ndim == 1:
        work[0] = work[0][None, :]
    if work[-1].ndim == 1:
        work[-1] = work[-1][:, None]
    g = np.reshape(g, (work[0].shape[0], work[-1].shape[1]))
    before, acc = [None], work[0]
    for m in work[1:-1]:
        before.append(acc)
        acc = acc @ m
    before.append(acc)
    after, acc = [None], work[-1]
    for m in reversed(work[1:-1]):
        after.append(acc)
        acc = m @ acc
    after.append(acc)
    after.reverse()
    grads = []
    for left, right in zip(before, after):
        d = g if right is None else g @ right.T
        grads.append(d if left is None else left.T @ d)
    return [np.reshape(d, m.shape) for d, m in zip(grads, mats)]


def _multi_dot_jvp(t, ans, arrays, *, out=None):
    """The sum over matrices of the chain with that matrix replaced by its tangent."""
    total = zero
    for i, ti in enumerate(t):
        if ti is not zero:
            total = total + np.linalg.multi_dot([*arrays[:i], ti, *arrays[i + 1:]])
    return total


defvjp(np.linalg.multi_dot, _multi_dot_darrays)
defjvp(np.linalg.multi_dot, _multi_dot_jvp)


# ---- diagonals and triangles -----------------------------------------------
def _diagonal_scatter(g, shape, offset, axis1, axis2, dtype):
    """Zeros of ``shape`` with ``g`` written on the ``offset`` diagonal of (axis1, axis2)."""
    out = np.zeros(shape, dtype=dtype)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    n = min(view.shape[-2] - max(-offset, 0), view.shape[-1] - max(offset, 0))
    idx = np.arange(max(n, 0))
    view[..., idx + max(-offset, 0), idx + max(offset, 0)] = g
    return out


def _trace_da(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    a = as_array(a)
    eye = np.eye(a.shape[axis1], a.shape[axis2], k=offset, dtype=np.result_type(a, g))
    return np.moveaxis(as_array(g)[..., None, None] * eye, (-2, -1), (axis1, axis2))


def _diagonal_da(g, ans, a, offset=0, axis1=0, axis2=1):
    return _diagonal_scatter(g, np.shape(a), offset, axis1, axis2, np.result_type(a, g))


def _diag_dv(g, ans, v, k=0):
    if np.ndim(v) == 1:
        return np.diag(g, k)
    return _diagonal_scatter(g, np.shape(v), k, 0, 1, np.result_type(v, g))


deflinear(np.trace, _trace_da)
deflinear(np.diagonal, _diagonal_da)
deflinear(np.diag, _diag_dv)
deflinear(np.diagflat, lambda g, ans, v, k=0: np.reshape(np.diagonal(g, k), np.shape(v)))
deflinear(np.triu, lambda g, ans, m, k=0: np.triu(g, k))
deflinear(np.tril, lambda g, ans, m, k=0: np.tril(g, k))
if hasattr(np.linalg, "trace"):
    deflinear(np.linalg.trace, lambda g, ans, x, /, *, offset=0, dtype=None: _trace_da(g, None, x, offset, -2, -1))
    deflinear(np.linalg.diagonal, lambda g, ans, x, /, *, offset=0: _diagonal_da(g, None, x, offset, -2, -1))


# ---- cross product ---------------------------------------------------------
def _cross_vjp(k):
    def vjp(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        if axis is not None:
            axisa = axisb = axisc = axis
        x, y = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
        if x.shape[-1] != 3 or y.shape[-1] != 3:
            raise NotDifferentiable("the gradient of cross is supported for 3-vectors only")
        gc = np.moveaxis(g, axisc, -1)
        grad = np.cross(y, gc) if k == 0 else np.cross(gc, x)
        return np.moveaxis(unbroadcast(grad, (x, y)[k]), -1, (axisa, axisb)[k])

    return vjp


deflinear(np.cross, *variadic(_cross_vjp, 2, ("a", "b")))
if hasattr(np.linalg, "cross"):
    deflinear(np.linalg.cross, *(lambda g, ans, a, b, /, *, axis=-1, _v=v: _v(g, None, a, b, axis=axis)
                              for v in variadic(_cross_vjp, 2, ("a", "b"))))

defmethod("dot", np.dot)
defmethod("trace", np.trace)
defmethod("diagonal", np.diagonal)
note("explicit or implicit subscripts, ellipsis, repeated labels, the sublist form einsum(a, [0, 1], b, [1], [0]) "
     "(operands at the even positions); up to 63 operands (NumPy's limit; 32 in the sublist form)", lookup(np.einsum))
note("3-vectors only", *(lookup(f) for f in (np.cross, getattr(np.linalg, "cross", None)) if lookup(f)))
note("a list of matrices; returns a list of gradients", lookup(np.linalg.multi_dot))


# NumPy 2.2's matrix-vector products, over the last axes (stacks broadcast).
if hasattr(np, "matvec"):
    deflinear(np.matvec, lambda g, ans, x1, x2: unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1),
              lambda g, ans, x1, x2: unbroadcast(np.sum(x1 * np.expand_dims(g, -1), axis=-2), x2))
    deflinear(np.vecmat, lambda g, ans, x1, x2: unbroadcast(np.sum(x2 * np.expand_dims(g, -2), axis=-1), x1),
              lambda g, ans, x1, x2: unbroadcast(np.expand_dims(x1, -1) * np.expand_dims(g, -2), x2))
