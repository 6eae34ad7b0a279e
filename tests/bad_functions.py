"""A corpus of functions adsrc must refuse, for tests/test_fence.py.

Every function listed in CORPUS calls ``ran(name)`` before anything else, so
a test can tell whether any of its code ran. The line adsrc must blame holds
a marker comment ``# expect: <ErrorClass>: <text in the message>``; a marker
in a helper names the corpus function it belongs to, ``# expect(f): ...``.
"""
import inspect
import functools
import math
import operator
import random

import numpy
import numpy as np

CALLS = []
COUNTER = 0.0


def ran(name):
    CALLS.append(name)


class Box:
    value = 1.0

    def method(self, v):
        return v


opaque = functools.partial(np.frompyfunc(math.sin, 1, 1))  # a callable whose function has no rule and no source
vectorized = np.vectorize(math.sin)


def try_except(x):
    ran("try_except")
    try:  # expect: UnsupportedSyntax: try/except
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def try_finally(x):
    ran("try_finally")
    y = x * 2.0
    try:  # expect: UnsupportedSyntax: try/finally
        y = y + 1.0
    finally:
        y = y * 3.0
    return np.sum(y)


def try_except_finally(x):
    ran("try_except_finally")
    try:  # expect: UnsupportedSyntax: try/except/finally
        y = x * 2.0
    except ValueError:
        y = x
    finally:
        x = x + 1.0
    return np.sum(y)


def with_statement(x):
    ran("with_statement")
    with open(__file__):  # expect: UnsupportedSyntax: with statement over open
        y = np.log(x)
    return np.sum(y)


def yield_value(x):
    ran("yield_value")
    yield np.sum(x)  # expect: UnsupportedSyntax: yield


def yield_from(x):
    ran("yield_from")
    yield from [np.sum(x)]  # expect: UnsupportedSyntax: yield from


def generator_inside(x):
    ran("generator_inside")

    def gen():
        yield x
    kept = gen()  # expect: UnsupportedSyntax: the generator gen used other than by a loop
    return np.sum(next(kept))


async def async_function(x):  # expect: UnsupportedSyntax: async function
    ran("async_function")
    return np.sum(x)


def global_write(x):
    ran("global_write")
    global COUNTER  # expect: UnsupportedSyntax: global
    COUNTER = COUNTER + 1.0
    return np.sum(x) * COUNTER


def _make_nonlocal():
    total = 0.0

    def nonlocal_write(x):
        ran("nonlocal_write")
        nonlocal total  # expect: UnsupportedSyntax: nonlocal
        total = total + 1.0
        return np.sum(x) * total
    return nonlocal_write


nonlocal_write = _make_nonlocal()


def class_inside(x):
    ran("class_inside")

    class Local:  # expect: UnsupportedSyntax: class definition
        scale = 2.0
    return np.sum(x) * Local.scale


def delete(x):
    ran("delete")
    y = x * 2.0
    del y  # expect: UnsupportedSyntax: del
    return np.sum(x)


def walrus(x):
    ran("walrus")
    if (s := np.sum(x)) > 0:  # expect: UnsupportedSyntax: walrus
        return s * 2.0
    return s


def match_statement(x):
    ran("match_statement")
    match x.ndim:  # expect: UnsupportedSyntax: match
        case 1:
            return np.sum(x)
    return np.sum(x) * 2.0


def starred_in_list(x):
    ran("starred_in_list")
    y = [*x]  # expect: UnsupportedSyntax: star-unpacking
    return y[0]


def attribute_of_argument(x, box):
    ran("attribute_of_argument")
    box.value = x  # expect: UnsupportedSyntax: assignment to an attribute
    return np.sum(x)


def augmented_attribute(x, box):
    ran("augmented_attribute")
    box.value += np.sum(x)  # expect: UnsupportedSyntax: assignment to an attribute
    return np.sum(x)


def attribute_loop_target(x, box):
    ran("attribute_loop_target")
    for box.value in range(3):  # expect: UnsupportedSyntax: assignment to an attribute
        x = x * 2.0
    return np.sum(x)


def import_inside(x):
    ran("import_inside")
    import math as m  # expect: UnsupportedSyntax: import inside the function
    return np.sum(x) * m.pi


def import_from_inside(x):
    ran("import_from_inside")
    from math import pi  # expect: UnsupportedSyntax: import inside the function
    return np.sum(x) * pi


def setattr_call(x, box):
    ran("setattr_call")
    setattr(box, "value", np.sum(x))  # expect: UnsupportedSyntax: setattr
    return np.sum(x) * box.value


def setattr_alias(x, box):
    ran("setattr_alias")
    put = setattr  # expect: UnsupportedSyntax: setattr
    put(box, "value", 2.0)
    return np.sum(x)


def delattr_call(x, box):
    ran("delattr_call")
    delattr(box, "value")  # expect: UnsupportedSyntax: delattr
    return np.sum(x)


def object_setattr(x, box):
    ran("object_setattr")
    object.__setattr__(box, "value", 2.0)  # expect: UnsupportedSyntax: __setattr__
    return np.sum(x)


def for_else(x):
    ran("for_else")
    for i in range(2):  # expect: UnsupportedSyntax: for ... else
        x = x * 2.0
    else:
        x = x + 1.0
    return np.sum(x)


def while_else(x):
    ran("while_else")
    k = 0
    while k < 2:  # expect: UnsupportedSyntax: while ... else
        k += 1
    else:
        x = x + 1.0
    return np.sum(x)


def subscript_assignment(x):
    ran("subscript_assignment")
    y = x.reshape(3, 1)  # a view made by a method: adsrc cannot follow the write into x
    y[0, 0] = np.sum(x)  # expect: UnsupportedSyntax: assignment to a subscript
    return np.sum(y)


# x[0] += 1.0 into an argument runs as Python's (its caller's array changes): tests/test_writes_fresh.py;
# so does y = x[1:]; y[0] = e, a write through a sliced view: tests/test_view_writes.py


def subscript_assignment_through_alias(x):
    ran("subscript_assignment_through_alias")
    y = np.zeros(3)
    z = y
    z[1] = 2.0  # expect: UnsupportedSyntax: assignment to a subscript
    return np.sum(y * x)


def list_append(x):
    ran("list_append")
    parts = [x]
    alias = parts
    parts.append(x * 2.0)  # expect: UnsupportedSyntax: .append()
    return np.sum(alias[1])


def array_fill(x):
    ran("array_fill")
    y = x * 2.0
    y.fill(0.0)  # expect: UnsupportedSyntax: .fill()
    return np.sum(y)


def array_sort_method(x):
    ran("array_sort_method")
    y = x * 2.0
    y.sort()  # expect: UnsupportedSyntax: .sort()
    return y[0]


def setitem_method(x):
    ran("setitem_method")
    y = x * 2.0
    y.__setitem__(0, 1.0)  # expect: UnsupportedSyntax: __setitem__
    return np.sum(y)


def out_keyword(x):
    ran("out_keyword")
    y = x * 1.0
    np.multiply(y, 2.0, out=y)  # expect: UnsupportedSyntax: out=
    return np.sum(y)


def copyto(x):
    ran("copyto")
    y = np.zeros_like(x)
    np.copyto(y, x)  # expect: UnsupportedSyntax: np.copyto
    return np.sum(y)


def ufunc_at(x):
    ran("ufunc_at")
    y = x * 1.0
    np.multiply.at(y, [0], 2.0)  # expect: UnsupportedSyntax: np.multiply.at
    return np.sum(y)


# np.add.at(x, [0], 1.0) into an argument runs as Python's: tests/test_writes_fresh.py


def add_at_as_value(x):
    ran("add_at_as_value")
    y = x * 1.0
    z = np.add.at(y, [0], 1.0)  # expect: UnsupportedSyntax: np.add.at into an array not created
    return np.sum(y) + z


def shuffle(x):
    ran("shuffle")
    y = x * 1.0
    random.shuffle(y)  # expect: UnsupportedSyntax: random.shuffle
    return y[0]


def exec_call(x):
    ran("exec_call")
    exec("pass")  # expect: UnsupportedSyntax: exec
    return np.sum(x)


def eval_call(x):
    ran("eval_call")
    y = eval("x * 2.0")  # expect: UnsupportedSyntax: eval
    return np.sum(y)


def lambda_inside(x):
    ran("lambda_inside")
    fs = [lambda v: -v * k for k in range(2)]  # expect: UnsupportedSyntax: a lambda inside a comprehension
    return np.sum(fs[0](x))


def nested_function(x):
    ran("nested_function")
    for i in range(2):
        def square(v):  # expect: UnsupportedSyntax: nested function definition
            return v * v
    return np.sum(square(x))


def dict_unpacking(x):
    ran("dict_unpacking")
    base = {"b": 1.0}
    d = {**base, "a": x}  # expect: UnsupportedSyntax: dict unpacking
    return np.sum(d["a"])


def set_literal(x):
    ran("set_literal")
    s = {1, 2}  # expect: UnsupportedSyntax: set literal
    return np.sum(x) * len(s)


def list_comprehension(x):
    ran("list_comprehension")
    ys = {x * i for i in range(2)}  # expect: UnsupportedSyntax: set comprehension
    return np.sum(ys[1])


def generator_expression(x):
    ran("generator_expression")
    return max(np.sum(x * i) for i in range(2) async for j in x)  # expect: UnsupportedSyntax: async comprehension


def _star_helper(*terms, **options):
    return terms[0]


def bare_annotation(x):
    ran("bare_annotation")
    y: float  # expect: UnsupportedSyntax: annotation without a value
    return np.sum(x)


def sum_in_while_condition(x):
    ran("sum_in_while_condition")
    k = 0
    while sum(v for v in range(k)) < 3:  # expect: UnsupportedSyntax: sum over a comprehension in a while
        k += 1
    return np.sum(x) * k


def set_comprehension(x):
    ran("set_comprehension")
    s = {i for i in range(3)}  # expect: UnsupportedSyntax: set comprehension
    return np.sum(x) * len(s)


def active_keyword(x):
    ran("active_keyword")
    return np.sum(np.clip(x, min=x * 0.5))  # expect: UnsupportedSyntax: by keyword


def opaque_callable(x):
    ran("opaque_callable")
    return np.sum(opaque(x * 2.0))  # expect: NoGradientRule: opaque


def vectorized_call(x):
    ran("vectorized_call")
    return np.sum(vectorized(x))  # expect: NoGradientRule: vectorized


def _helper_with_try(v):
    try:  # expect(calls_bad_helper): UnsupportedSyntax: try/except
        w = v * 2.0
    except ValueError:
        w = v
    return w


def calls_bad_helper(x):
    ran("calls_bad_helper")
    y = x * 3.0
    return np.sum(_helper_with_try(y))


def _helper_without_rule(v):
    return opaque(v)  # expect(calls_helper_without_rule): NoGradientRule: opaque


def calls_helper_without_rule(x):
    ran("calls_helper_without_rule")
    return np.sum(_helper_without_rule(x * 2.0))


def _keyword_only_helper(v, *, scale=2.0):
    return v * scale


def calls_keyword_only(x):
    ran("calls_keyword_only")
    return np.sum(_keyword_only_helper(x, scale=x))  # expect: UnsupportedSyntax: keyword-only


# -- in-place methods and functions reached other than by a direct call ----------


def fill_alias(x):
    ran("fill_alias")
    y = x * 2.0
    fill = y.fill  # expect: UnsupportedSyntax: .fill() taken as a value
    fill(0.0)
    return np.sum(y)


def sort_by_getattr(x):
    ran("sort_by_getattr")
    y = x * 2.0
    getattr(y, "sort")()  # expect: UnsupportedSyntax: .sort() taken as a value
    return y[0]


def getattr_non_constant(x):
    ran("getattr_non_constant")
    y = x * 2.0
    name = "sort"
    getattr(y, name)()  # expect: UnsupportedSyntax: not a constant string
    return y[0]


def getattr_as_value(x):
    ran("getattr_as_value")
    y = x * 2.0
    reach = getattr  # expect: UnsupportedSyntax: getattr used other than in a direct call
    reach(y, "sort")()
    return y[0]


def mutating_methods_in_a_list(x):
    ran("mutating_methods_in_a_list")
    y = x * 2.0
    methods = [y.resize, y.put]  # expect: UnsupportedSyntax: .resize() taken as a value
    methods[1]([0], [5.0])
    return np.sum(y)


def partition_passed_on(x):
    ran("partition_passed_on")
    y = x * 2.0
    _call_with(y.partition, 1)  # expect: UnsupportedSyntax: .partition() taken as a value
    return y[0]


def _call_with(f, v):
    return f(v)


def unbound_fill(x):
    ran("unbound_fill")
    y = x * 2.0
    fill = np.ndarray.fill  # expect: UnsupportedSyntax: .fill() taken as a value
    fill(y, 0.0)
    return np.sum(y)


def copyto_alias(x):
    ran("copyto_alias")
    y = np.zeros_like(x)
    copy_into = np.copyto  # expect: UnsupportedSyntax: np.copyto
    copy_into(y, x * 2.0)
    return np.sum(y * x)


def ufunc_at_alias(x):
    ran("ufunc_at_alias")
    y = x * 1.0
    add_at = np.add.at  # expect: UnsupportedSyntax: np.add.at
    add_at(y, [0], 1.0)
    return np.sum(y)


def operator_iadd(x):
    ran("operator_iadd")
    y = x * 1.0
    operator.iadd(y, x)  # expect: UnsupportedSyntax: operator.iadd
    return np.sum(y)


def operator_methodcaller(x):
    ran("operator_methodcaller")
    y = x * 1.0
    operator.methodcaller("fill", 0.0)(y)  # expect: UnsupportedSyntax: operator.methodcaller
    return np.sum(y)


# -- out passed by position ---------------------------------------------------------------


def ufunc_positional_out(x):
    ran("ufunc_positional_out")
    y = x * 1.0
    np.exp(y, y)  # expect: UnsupportedSyntax: out argument passed by position
    return np.sum(y)


def ufunc_positional_out_into_argument(x):
    ran("ufunc_positional_out_into_argument")
    np.sin(x, x)  # expect: UnsupportedSyntax: out argument passed by position
    return np.sum(x)


def binary_ufunc_positional_out(x):
    ran("binary_ufunc_positional_out")
    y = x * 1.0
    z = np.multiply(y, 2.0, y)  # expect: UnsupportedSyntax: np.multiply writes into its argument 3
    return np.sum(z)


def function_positional_out(x):
    ran("function_positional_out")
    y = x * 1.0
    np.clip(y, 0.0, 2.0, y)  # expect: UnsupportedSyntax: np.clip writes into its argument 4
    return np.sum(y)


def method_positional_out(x):
    ran("method_positional_out")
    total = np.zeros(())
    s = x.sum(0, None, total)  # expect: UnsupportedSyntax: x.sum writes into its argument 3
    return s + 2.0 * total


def ufunc_method_positional_out(x):
    ran("ufunc_method_positional_out")
    y = np.zeros_like(x)
    np.add.accumulate(x, 0, None, y)  # expect: UnsupportedSyntax: np.add.accumulate writes into its argument 4
    return np.sum(y)


def ufunc_alias_positional_out(x):
    ran("ufunc_alias_positional_out")
    y = x * 1.0
    e = np.exp
    e(y, y)  # expect: UnsupportedSyntax: e, which may be np.exp, writes into its argument 2
    return np.sum(y)


def ufunc_loop_positional_out(x):
    ran("ufunc_loop_positional_out")
    y = x * 1.0
    for f in [np.sin, np.cos]:
        f(y, y)  # expect: UnsupportedSyntax: f, which may be np.sin, writes into its argument 2
    return np.sum(y)


def ufunc_local_function_positional_out(x):
    ran("ufunc_local_function_positional_out")

    def apply(f, v):
        f(v, v)  # expect(ufunc_local_function_positional_out): UnsupportedSyntax: f, which may be np.exp
        return v

    y = x * 1.0
    return np.sum(apply(np.exp, y))


# -- modules as values --------------------------------------------------------------------


def module_in_local_name(x):
    ran("module_in_local_name")
    m = x * 2.0
    xp = np  # expect: UnsupportedSyntax: assigning the module numpy to the local name xp
    return xp.sum(m)


def submodule_in_local_name(x):
    ran("submodule_in_local_name")
    la = np.linalg  # expect: UnsupportedSyntax: assigning the module numpy.linalg to the local name la
    return la.norm(x)


def module_shadowing_its_global(x):
    ran("module_shadowing_its_global")
    m = x * 2.0
    np = numpy  # expect: UnsupportedSyntax: assigning the module numpy to the local name np
    return np.sum(m)


def module_passed_on(x):
    ran("module_passed_on")
    return _sum_with(np, x * 2.0)  # expect: UnsupportedSyntax: module numpy used as a value


def _sum_with(xp, v):
    return xp.sum(v)


def module_in_a_list(x):
    ran("module_in_a_list")
    modules = [np, math]  # expect: UnsupportedSyntax: module numpy used as a value
    return modules[0].sum(x)


def numpy_imported_inside(x):
    ran("numpy_imported_inside")
    import numpy as np  # expect: UnsupportedSyntax: import inside the function
    return np.sum(x * 2.0)


CORPUS = [
    name for name, value in list(globals().items())
    if inspect.isfunction(value) and value.__module__ == __name__
    and not name.startswith("_") and name != "ran"
]
