"""autograd.wrap_util.unary_to_nary, over the shim's argument binding."""
import functools

from ._bridge import bind


def unary_to_nary(unary_operator):
    """``op(fun, x)`` becomes ``op(fun, argnum=0)(*args, **kwargs)``: ``x`` is the argument(s) ``argnum``."""
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        def nary_f(*args, **kwargs):
            g, xs, _ = bind(fun, argnum, args, kwargs)
            if isinstance(argnum, (tuple, list)):
                return unary_operator(_packed(g, len(xs)), tuple(xs), *op_args, **op_kwargs)
            return unary_operator(g, xs[0], *op_args, **op_kwargs)
        return nary_f
    return nary_operator


def _packed(g, count):
    """A function of one tuple, as autograd's unary operators see several arguments."""
    import linecache
    source = (f"def {g.__name__}_of_tuple(xs):\n"
              f"    return g({', '.join(f'xs[{i}]' for i in range(count))})\n")
    filename = f"<autograd shim tuple {id(g)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"g": g}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"{g.__name__}_of_tuple"]


def get_name(fun):
    return getattr(fun, "__name__", "[unknown name]")
