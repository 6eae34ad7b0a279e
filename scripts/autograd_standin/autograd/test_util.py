"""check_grads with adsrc: the transpose pairing of the vjp and the jvp against central differences,
and second order as jvp(grad(h)) for h(x) = Re(sum(g0 * f(x)))."""
from itertools import product

import numpy as np

import adsrc

EPS, TOL, RTOL = 1e-6, 1e-6, 1e-6


def _close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _randn(value):
    shape = np.shape(value)
    out = np.random.randn(*shape)
    if np.iscomplexobj(value):
        out = out + 1j * np.random.randn(*shape)
    return out if isinstance(value, np.ndarray) else (complex(out) if np.iscomplexobj(value) else float(out))


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flat(v)]
    return [np.asarray(value)]


def _pair(a, b):
    return sum(float(np.real(np.sum(x * y))) for x, y in zip(_flat(a), _flat(b)))


def _rand_tree(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_rand_tree(v) for v in value)
    return _randn(value)


def _numeric(f, args, argnum, v):
    def at(step):
        moved = list(args)
        moved[argnum] = args[argnum] + step * v
        return f(*moved)
    plus, minus = _flat(at(EPS / 2)), _flat(at(-EPS / 2))
    return [(p - m) / EPS for p, m in zip(plus, minus)]


def check_grads(f, argnum=0, modes=None, order=2):
    modes = modes or ["fwd", "rev"]

    def run(*args, **kwargs):
        if kwargs:
            raise NotImplementedError("keyword arguments")
        x = args[argnum]
        v = _randn(x)
        numeric = _numeric(f, args, argnum, v)
        if "rev" in modes:
            value, pullback = adsrc.vjp(f, *args, wrt=argnum)
            g = _rand_tree(value)
            got = _pair(pullback(g), v)
            want = sum(float(np.real(np.sum(a * b))) for a, b in zip(_flat(g), numeric))
            assert _close(got, want), f"vjp check: {got} != {want}"
        if "fwd" in modes:
            tangents = tuple(v if i == argnum else None for i in range(len(args)))
            _, tangent = adsrc.jvp(f, args, tangents)
            w = _rand_tree(f(*args))
            got = sum(float(np.real(np.sum(a * b))) for a, b in zip(_flat(w), _flat(tangent)))
            want = sum(float(np.real(np.sum(a * b))) for a, b in zip(_flat(w), numeric))
            assert _close(got, want), f"jvp check: {got} != {want}"
        if order > 1 and len(args) == 1 and not isinstance(f, adsrc.Derivative):
            g0 = _rand_tree(f(*args))

            def h(x):
                return _reduce(g0, f(x))

            gradient = adsrc.grad(h, wrt=argnum)
            tangents = tuple(v if i == argnum else None for i in range(len(args)))
            _, second = adsrc.jvp(gradient, args, tangents)
            want = _numeric(gradient, args, argnum, v)[0]
            w = _randn(x)
            assert _close(_pair(second, w), _pair(want, w)), "second order"
    return run


def _reduce(g0, y):
    if isinstance(y, (tuple, list)):
        total = 0.0
        for k in range(len(y)):
            total = total + _reduce(g0[k], y[k])
        return total
    return np.real(np.sum(g0 * y))


def combo_check(fun, argnums=(0,), modes=None, order=2):
    def run(*args, **kwargs):
        pairs = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for a in product(*args):
            for kw in product(*pairs):
                bound = _arity_wrapped(fun, dict(kw), len(a))
                for argnum in argnums:
                    check_grads(bound, argnum, modes, order)(*a)
    return run


_counter = [0]


def _bind(fun, kw):
    """Python functions with source calling ``fun`` with these keywords: adsrc reads source, and
    autograd's tests pass NumPy functions and partials, which have none."""
    import importlib.util
    import os
    import tempfile
    _counter[0] += 1
    name = f"_wrapped_{_counter[0]}"
    path = os.path.join(tempfile.gettempdir(), f"adsrc_shim_{os.getpid()}_{name}.py")
    keywords = "".join(f", {k}=KW[{k!r}]" for k in kw)
    with open(path, "w") as out:
        out.write(f"def f1(x):\n    return FUN(x{keywords})\n\n\ndef f2(x, y):\n    return FUN(x, y{keywords})\n"
                  f"\n\ndef f3(x, y, z):\n    return FUN(x, y, z{keywords})\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.FUN, module.KW = fun, kw
    spec.loader.exec_module(module)
    return module


def _arity_wrapped(fun, kw, n):
    return getattr(_bind(fun, kw), f"f{n}")
