"""Names that share an array, and mutations the fence must see however they are reached.

``x op= e`` changes an array in place, so that every other name for it sees
the change; adsrc runs it as ``x = x op e``. Where ``x`` may share its array
(a loop over the rows of an array or over a list of arrays, an item unpacked
from another object, a parameter), the augmented assignment is refused when
``x`` turns out to hold an array, before it runs; where it holds a number it
runs as Python runs it. Mutating methods taken as values, ``out`` passed by
position and modules bound to local names are refused before anything runs
(their corpus entries are in bad_functions.py); here, the near misses that
must keep working, checked against Python and central finite differences in
float64, lazy and eager.
"""
import math
import warnings

import gast

import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import check, numerical_grad

SHARED_ARRAY = np.array([1.0, 2.0, 3.0])


# -- refused when the shared name turns out to hold an array ---------------------
def rows_of_a_local_array(x):
    m = np.ones((2, 3)) * x
    for row in m:
        row *= 2.0
    return np.sum(m)


def rows_by_enumerate(x):
    m = np.ones((2, 3)) * x
    for i, row in enumerate(m):
        row *= 2.0 + i
    return np.sum(m)


def rows_by_zip(x):
    m = np.ones((2, 3)) * x
    n = np.ones((2, 3))
    for row, other in zip(m, n):
        row += other
    return np.sum(m)


def rows_of_a_parameter(W):
    total = 0.0
    for row in W:
        row *= 2.0
        total = total + np.sum(row)
    return total


def items_of_a_list_of_arrays(x):
    p = x * 2.0
    q = x * 3.0
    for v in [p, q]:
        v *= 2.0
    return np.sum(p) + np.sum(q)


def items_of_a_list_by_name(x):
    parts = [x * 2.0, x * 3.0]
    for v in parts:
        v += 1.0
    return np.sum(parts[0]) + np.sum(parts[1])


def unpacked_rows(x):
    m = np.ones((2, 3)) * x
    a, b = m
    a *= 2.0
    return np.sum(m) + np.sum(b)


def item_of_a_list(x):
    pair = [x * 2.0, x * 3.0]
    a = pair[0]
    a *= 2.0
    return np.sum(pair[0])


def unpacked_items_of_a_list(x):
    pair = [x * 2.0, x * 3.0]
    a, b = pair
    a *= 2.0
    return np.sum(pair[0]) + np.sum(b)


def global_array(x):
    g = SHARED_ARRAY
    g *= 2.0
    return np.sum(g * x)


def parameter_of_a_local_function(x):
    def double(v):
        v *= 2.0
        return np.sum(v)

    m = x * 1.0
    s = double(m)
    return s + np.sum(m)


# x op= e on a parameter's array runs in place, as Python does, where no other name sees it:
# tests/test_writes_fresh.py (and refuses, when it runs, an argument that shares another's memory).


def swapped_then_shared(x):
    a = x * 2.0
    b = x * 3.0
    kept = b
    a, b = b, a
    a += 1.0
    return np.sum(kept) + np.sum(b)


REFUSED_AT_RUN_TIME = [
    (rows_of_a_local_array, (np.array([7.0 / 6.0]),)),
    (rows_by_enumerate, (np.array([0.5]),)),
    (rows_by_zip, (np.array([0.5]),)),
    (rows_of_a_parameter, (np.arange(6.0).reshape(2, 3),)),
    (items_of_a_list_of_arrays, (np.array([0.5, 1.5]),)),
    (items_of_a_list_by_name, (np.array([0.5, 1.5]),)),
    (unpacked_rows, (np.array([0.5]),)),
    (item_of_a_list, (np.array([0.5, 1.5]),)),
    (unpacked_items_of_a_list, (np.array([0.5, 1.5]),)),
    (global_array, (np.array([0.5, 1.5, 2.5]),)),
    (parameter_of_a_local_function, (np.array([0.5, 1.5]),)),
    (swapped_then_shared, (np.array([0.5, 1.5]),)),
]


def _copy(args):
    return tuple(np.array(a, copy=True) for a in args)


@pytest.mark.parametrize("func,args", [pytest.param(f, a, id=f.__name__) for f, a in REFUSED_AT_RUN_TIME])
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_augmented_assignment_to_a_shared_array_is_refused(func, args, eager):
    """Python changes the shared array in place (the value differs from x = x op e, or the
    caller's array changes); adsrc refuses, names the line, and leaves the inputs alone."""
    before = _copy(args)
    global_before = SHARED_ARRAY.copy()
    for make in (adsrc.grad, adsrc.value_and_grad):
        inputs = _copy(args)
        with pytest.raises(errors.UnsupportedSyntax, match="augmented assignment") as info:
            make(func, wrt=tuple(range(len(args))), eager=eager)(*inputs)
        assert "test_aliases.py:" in str(info.value)
        for a, b in zip(inputs, before):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(SHARED_ARRAY, global_before)


def test_rows_of_a_local_array_are_changed_in_place_by_python():
    """The program of the report: Python gives 14, x = x op e would give 7; adsrc refuses."""
    x = np.array([7.0 / 6.0])
    assert rows_of_a_local_array(x.copy()) == pytest.approx(14.0)
    for eager in (False, True):
        with pytest.raises(errors.RefusedWhenRun, match="augmented assignment"):
            adsrc.value_and_grad(rows_of_a_local_array, eager=eager)(x)


# -- near misses: the same shapes where nothing shares an array run as Python -------
def loop_over_constants(x):
    total = 0.0
    for v in [1.0, 2.0]:
        v *= 2
        total = total + v * np.sum(x)
    return total


def loop_over_a_list_of_floats(x):
    total = 0.0
    for v in [x[0], x[1] * 2.0]:
        v *= v
        total = total + v
    return total


def loop_over_a_vector(x):
    total = 0.0
    for v in x:
        v *= 3.0
        total = total + v * v
    return total


def counters(x):
    total = 0.0
    for i in range(3):
        i += 1
        total = total + i * np.sum(x)
    for i, v in enumerate(x):
        i *= 2
        total = total + i * v
    return total


def fresh_rows(x):
    m = np.ones((2, 3)) * x
    total = 0.0
    for row in m:
        row = row * 2.0
        total = total + np.sum(row)
    return total + np.sum(m)


def swapped(x, y):
    a, b = x * 2.0, y + 1.0
    a, b = b, a
    a += b * 3.0
    a *= y
    return np.sum(a - b)


def scalar_parameter(x, s):
    s *= 2.0
    s += np.sum(x)
    return s * np.sum(x)


def unpacked_numbers(x):
    a, b = np.sum(x), np.prod(x)
    a *= b
    c, d = x[0], x[1]
    c += d
    return a + c


def fresh_local(x):
    y = x * 2.0
    y *= x
    y += 1.0
    return np.sum(y)


NEAR_MISSES = [
    (loop_over_constants, (np.array([0.5, 1.5]),), 0),
    (loop_over_a_list_of_floats, (np.array([0.5, 1.5]),), 0),
    (loop_over_a_vector, (np.array([0.5, 1.5, -2.0]),), 0),
    (counters, (np.array([0.5, 1.5, -2.0]),), 0),
    (fresh_rows, (np.array([0.5]),), 0),
    (swapped, (np.array([0.5, 1.5]), np.array([2.0, -1.0])), (0, 1)),
    (scalar_parameter, (np.array([0.5, 1.5]), 1.5), (0, 1)),
    (unpacked_numbers, (np.array([0.5, 1.5]),), 0),
    (fresh_local, (np.array([0.5, 1.5]),), 0),
]


@pytest.mark.parametrize("func,args,wrt", [pytest.param(f, a, w, id=f.__name__) for f, a, w in NEAR_MISSES])
def test_near_misses_run_as_python(func, args, wrt):
    check(func, *args, wrt=wrt)  # values against Python, gradients against finite differences, both modes


# -- out, methods and modules: accepted where nothing is written ------------------------
def ufuncs_with_their_inputs(x):
    y = np.exp(x)
    z = np.add(y, x)
    w = np.multiply(z, 2.0)
    return np.sum(np.sin(w)) + np.sum(y, 0) + x.sum(0) + np.sum(np.clip(x, 0.0, 2.0))


def constant_by_getattr(x):
    return np.sum(np.sort(x * 2.0)) * getattr(math, "pi")


def module_through_its_global_name(x):
    m = x * 2.0
    return np.sum(m) + math.pi * np.linalg.norm(m)


@pytest.mark.parametrize("func", [ufuncs_with_their_inputs, constant_by_getattr,
                                  module_through_its_global_name],
                         ids=lambda f: f.__name__)
def test_calls_that_write_nothing_compile(func):
    check(func, np.array([0.5, 1.5, 1.75]))


def test_positional_out_never_touches_the_callers_array():
    """np.sin(x, x) would overwrite the caller's array while adsrc.grad runs it; refused first."""
    def overwrites(x):
        np.sin(x, x)
        return np.sum(x)

    x = np.array([0.5, 1.5])
    for eager in (False, True):
        with pytest.raises(errors.UnsupportedSyntax, match="out argument passed by position"):
            adsrc.grad(overwrites, eager=eager)(x)
    np.testing.assert_array_equal(x, [0.5, 1.5])


# -- writes through a name that may be an argument's array: every spelling, every write ---------------
# Issue 25: y = np.array(x, copy=False) is x, so Python's y[0] = 0.0 changes x; adsrc took the result of
# np.array for a copy and gave a wrong gradient. The rule now: the result of a call may be its argument
# itself or a view of it unless the call is known to make a new array (aliasing.py), and every write
# into such a name is refused, with its line, before anything of the function runs.
ALIAS_SPELLINGS = {
    "asarray": "np.asarray(x)",
    "array_copy_false": "np.array(x, copy=False)",
    "array_copy_none": "np.array(x, copy=None)",
    "array_dtype_copy_false": "np.array(x, np.float64, copy=False)",
    "asanyarray": "np.asanyarray(x)",
    "ascontiguousarray": "np.ascontiguousarray(x)",
    "asfortranarray": "np.asfortranarray(x)",
    "asarray_chkfinite": "np.asarray_chkfinite(x)",
    "require": "np.require(x)",
    "atleast_1d": "np.atleast_1d(x)",
    "atleast_2d": "np.atleast_2d(x)[0]",
    "view": "x.view()",
    "ellipsis": "x[...]",
    "full_slice": "x[:]",
    "reshape_method": "x.reshape(3)",
    "reshape_function": "np.reshape(x, (3,))",
    "transpose_attribute": "x.T",
    "transpose_function": "np.transpose(x)",
    "ravel": "np.ravel(x)",
    "ravel_method": "x.ravel()",
    "squeeze": "np.squeeze(x)",
    "squeeze_method": "x.squeeze()",
    "expand_dims": "np.expand_dims(x, 0)[0]",
    "broadcast_to": "np.broadcast_to(x, (3,))",
    "moveaxis": "np.moveaxis(x, 0, 0)",
    "swapaxes": "np.swapaxes(x[None], 0, 1)[:, 0]",
    "real_function": "np.real(x)",
    "real_attribute": "x.real",
    "astype_copy_false": "x.astype(np.float64, copy=False)",
    "nan_to_num_copy_false": "np.nan_to_num(x, copy=False)",
    "conj_method": "x.conj()",
    "einsum": "np.einsum('i->i', x)",
    "flip": "np.flip(np.flip(x))",
    "conditional": "x if x[0] > 0 else np.zeros(3)",
    "tuple_item": "(x, 1)[0]",
    "identity_helper": "same(x)",
    "stored_helper": "stored()",
}
WRITE_FORMS = {
    "item": "y[0] = 0.0",
    "item_from_value": "y[1] = y[0] * y[2]",
    "slice": "y[0:2] = 1.0",
    "slice_augmented": "y[0:2] += 1.0",
    "item_augmented": "y[2] *= 3.0",
    "in_place_operator": "y *= 2.0",
    "in_place_add": "y += x",
    "add_at": "np.add.at(y, [0, 0], 1.0)",
    "out_keyword": "np.multiply(y, 2.0, out=y)",
    "out_positional": "np.exp(y, y)",
    "fill": "y.fill(0.5)",
    "sort": "y.sort()",
    "copyto": "np.copyto(y, 0.5)",
}
STORED = np.array([0.5, 1.5, 2.0])
SLICED = ("ellipsis", "full_slice")  # views taken by slicing, y = x[...], y = x[:]
INDEXED = ("item", "item_from_value", "slice", "slice_augmented", "item_augmented")  # writes by index


def same(a):
    return a


def stored():
    return STORED


def _alias_program(spelling: str, write: str, name: str):
    from sources import function_from_source

    text = (f"def {name}(x):\n"
            f"    y = {spelling}\n"
            f"    {write}\n"
            f"    return np.sum(x * x) + np.sum(np.sin(y))\n")
    path = f"alias_programs/{name}.py"
    func = function_from_source(text, name, path)
    func.__globals__.update(same=same, stored=stored)
    return func, path


@pytest.mark.parametrize("write", list(WRITE_FORMS))
@pytest.mark.parametrize("spelling", list(ALIAS_SPELLINGS))
def test_a_write_into_a_possible_alias_of_an_argument_is_refused_or_runs_as_python(spelling, write):
    """Every write form into every spelling of a possible alias: refused as UnsupportedSyntax naming the
    write's file:line (or, for x op= e on a name only a value shows to be shared, RefusedWhenRun right
    before that line), in lazy and eager mode, with the argument and the global left as they were. A
    write by index through a view taken by slicing (x[:], x[...]) runs as the plain call does instead."""
    func, path = _alias_program(ALIAS_SPELLINGS[spelling], WRITE_FORMS[write], f"alias_{spelling}_{write}")
    x0 = np.array([0.5, 1.5, 2.0])
    plain = x0.copy()
    try:
        expected = func(plain)
    except Exception:  # noqa: BLE001  (a write NumPy itself refuses: a broadcast view is read-only)
        pytest.skip("Python raises on this program")
    if spelling in SLICED and write in INDEXED:
        # a write through a view taken by slicing is the write into x it is (frontend/view_writes.py), which
        # the function may make as Python does: the caller's array changes as the plain call changes it, and
        # the gradient is with respect to its values on entry
        for eager in (False, True):
            x = x0.copy()
            value, grad = adsrc.value_and_grad(func, eager=eager)(x)
            assert value == expected
            np.testing.assert_array_equal(x, plain)
            np.testing.assert_allclose(grad, numerical_grad(lambda p: func(p.copy()), (x0,), 0), rtol=1e-6, atol=1e-8)
        return
    # x.view() has no gradient rule: where the fence lets the program through (y op= e is checked
    # when it runs), compiling it refuses the view itself, naming its line (2).
    refusal = (errors.UnsupportedSyntax, errors.NoGradientRule) if spelling == "view" else errors.UnsupportedSyntax
    for eager in (False, True):
        x, stored_before = x0.copy(), STORED.copy()
        with pytest.raises(refusal) as info:
            adsrc.grad(func, eager=eager)(x)
        if isinstance(info.value, errors.NoGradientRule):
            assert f"{path}:2" in str(info.value) and "ndarray.view" in str(info.value)
            continue
        message = str(info.value)
        assert f"{path}:3" in message, message
        np.testing.assert_array_equal(x, x0)
        np.testing.assert_array_equal(STORED, stored_before)


def test_the_programs_of_the_report_are_refused_before_running():
    """Issue 25's two programs: refused before anything runs (not RefusedWhenRun), with a remedy."""
    def copy_false(x):
        y = np.array(x, copy=False)
        y[0] = 0.0
        return np.sum(x + y)

    def atleast(x):
        y = np.atleast_1d(x)
        y *= 2.0
        return np.sum(x)

    for func, remedy in ((copy_false, "write into a copy"), (atleast, "copy it first")):
        for eager in (False, True):
            x = np.ones(3)
            with pytest.raises(errors.UnsupportedSyntax, match=remedy) as info:
                adsrc.grad(func, eager=eager)(x)
            assert not isinstance(info.value, errors.RefusedWhenRun)
            assert "test_aliases.py:" in str(info.value)
            np.testing.assert_array_equal(x, np.ones(3))


FRESH_SPELLINGS = {
    "array": "np.array(x)",
    "array_copy_true": "np.array(x, copy=True)",
    "asarray_copy_true": "np.asarray(x, copy=True)",
    "copy_method": "x.copy()",
    "copy_function": "np.copy(x)",
    "arithmetic": "x * 1.0",
    "astype": "x.astype(np.float64)",
    "flatten": "x.flatten()",
    "ufunc": "np.multiply(x, 1.0)",
    "concatenate": "np.concatenate([x])",
}
FRESH_WRITES = {k: WRITE_FORMS[k] for k in ("item", "item_from_value", "slice", "slice_augmented",
                                            "item_augmented", "in_place_operator", "in_place_add", "add_at")}


def doubled(a):
    b = a * 2.0
    return b


def test_a_helper_that_returns_a_new_array():
    """A function of the program's own whose every return is a new object: updating its result in place
    runs as Python (nothing else holds it); writing into it by index is refused (it might return a list
    or a dict, whose writes lists.py decides), with the remedy."""
    def updated(x):
        y = doubled(x)
        y *= 2.0
        return np.sum(y * x)

    def written(x):
        y = doubled(x)
        y[0] = 0.0
        return np.sum(y * x)

    check(updated, np.array([0.5, 1.5, 2.0]))
    with pytest.raises(errors.UnsupportedSyntax, match=r"holds what doubled\(\.\.\.\) returned"):
        adsrc.grad(written)(np.array([0.5, 1.5, 2.0]))


@pytest.mark.parametrize("write", list(FRESH_WRITES))
@pytest.mark.parametrize("spelling", list(FRESH_SPELLINGS))
def test_a_write_into_a_fresh_array_runs_as_python(spelling, write):
    """The near misses: a call known to make a new array, then the same writes: accepted, Python's value,
    the gradient of finite differences in lazy and eager mode, the argument untouched (as in Python)."""
    func, _ = _alias_program(FRESH_SPELLINGS[spelling], FRESH_WRITES[write], f"fresh_{spelling}_{write}")
    func.__globals__.update(doubled=doubled)
    check(func, np.array([0.5, 1.5, 2.0]))


def zeros_like_then_copied(x):
    y = np.zeros_like(x)
    y[:] = x
    y[0] = y[0] * y[1]
    y *= 2.0
    return np.sum(y * x)


def fft_then_written(x):
    X = np.fft.fft(x)
    X[2:] = 0.0
    return np.sum(np.real(np.fft.ifft(X)) * x)


def scaled_then_written(x):
    y = np.exp(x)
    y[0] = y[0] * y[1]
    z = np.dot(np.eye(3), x)
    z[1:] += 1.0
    return np.sum(y * z)


@pytest.mark.parametrize("func", [zeros_like_then_copied, fft_then_written, scaled_then_written],
                         ids=lambda f: f.__name__)
def test_writes_into_arrays_a_call_made(func):
    """Issue 24 (item 5): an array a library call returned (np.fft.fft, np.exp, np.dot) is new, so writes
    into it run as in Python."""
    check(func, np.array([0.5, 1.5, 2.0, -0.5, 1.0]) if func is fft_then_written else np.array([0.5, 1.5, 2.0]))


# -- names the function's own arrays reach through a call, a display or an append -----------------------
def read_after_write_through_copy_false(x):
    y = np.zeros(3)
    y[0] = x[0]
    v = np.array(y, copy=False)
    y[1] = x[1]
    return np.sum(v * x)


def read_after_write_through_a_helper(x):
    y = np.zeros(3)
    y[0] = x[0]
    v = same(y)
    y[1] = x[1]
    return np.sum(v * x)


def read_after_write_through_einsum(x):
    y = np.zeros(3)
    v = np.einsum("i->i", y)
    y[1] = x[1]
    return np.sum(v * x)


def update_seen_through_a_tuple(x):
    y = x * 1.0
    t = (y, 1)
    y *= 2.0
    return np.sum(t[0])


def update_seen_through_a_list(x):
    y = x * 1.0
    t = [y]
    y *= 2.0
    return np.sum(t[0])


def update_seen_through_an_append(x):
    y = x * 1.0
    t = []
    t.append(y)
    y *= 2.0
    return np.sum(t[0])


def update_seen_through_copy_false(x):
    y = x * 1.0
    v = np.array(y, copy=False)
    y *= 2.0
    return np.sum(v * x)


def update_seen_through_a_helper(x):
    y = x * 1.0
    v = same(y)
    y *= 2.0
    return np.sum(v * x)


@pytest.mark.parametrize("func", [read_after_write_through_copy_false, read_after_write_through_a_helper,
                                  read_after_write_through_einsum, update_seen_through_copy_false],
                         ids=lambda f: f.__name__)
def test_a_change_another_name_would_see_is_refused_before_running(func):
    """Python's write (or x op= e) changes what v holds too (a view of y, or y); adsrc would not: refused
    before anything runs, with the line."""
    x = np.array([0.5, 1.5, 2.0])
    for eager in (False, True):
        with pytest.raises(errors.UnsupportedSyntax, match="view of") as info:
            adsrc.grad(func, eager=eager)(x)
        assert not isinstance(info.value, errors.RefusedWhenRun)
        assert "test_aliases.py:" in str(info.value)
    np.testing.assert_array_equal(x, [0.5, 1.5, 2.0])


@pytest.mark.parametrize("func", [update_seen_through_a_tuple, update_seen_through_a_list,
                                  update_seen_through_an_append, update_seen_through_a_helper],
                         ids=lambda f: f.__name__)
def test_an_update_of_an_object_another_name_holds_is_refused_when_it_is_an_array(func):
    """t, or what same(y) returned, holds y itself: Python's y op= e changes it if y is an array (a number
    it would not), so the update is refused right before it runs, when y turns out to hold an array."""
    x = np.array([0.5, 1.5, 2.0])
    for eager in (False, True):
        with pytest.raises(errors.RefusedWhenRun, match="augmented assignment") as info:
            adsrc.grad(func, eager=eager)(x)
        assert "test_aliases.py:" in str(info.value)
    np.testing.assert_array_equal(x, [0.5, 1.5, 2.0])


def numbers_held_elsewhere(x, s):
    y = s * 2.0
    t = (y, 1)
    v = same(y)
    kept = [y]
    y *= np.sum(x)
    return y + t[0] + v * kept[0]


def test_the_same_shapes_with_numbers_run_as_python():
    check(numbers_held_elsewhere, np.array([0.5, 1.5, 2.0]), 0.7, wrt=(0, 1))


def read_after_write_through_a_fresh_helper(x):
    y = np.zeros(3)
    y[0] = x[0]
    v = doubled(y)
    y[1] = x[1]
    return np.sum(v * x) + np.sum(y)


def update_after_a_reduction(x):
    y = x * 1.0
    s = np.sum(y) + len(y) + float(y[0])
    n = y.shape
    y *= 2.0
    return s * np.sum(y) + n[0]


@pytest.mark.parametrize("func", [read_after_write_through_a_fresh_helper, update_after_a_reduction],
                         ids=lambda f: f.__name__)
def test_values_that_share_nothing_are_not_refused(func):
    check(func, np.array([0.5, 1.5, 2.0]))


# -- the table of calls that may share memory, checked against what every rule does ----------------------
def _node(value):
    return gast.Constant(value=value, kind=None) if isinstance(value, (bool, int, float, str, type(None))) \
        else gast.Name(id="v", ctx=gast.Load(), annotation=None, type_comment=None)


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _arrays(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)


def _shares_an_argument(result, args, kwargs) -> bool:
    inputs = list(_arrays((args, kwargs)))
    return any(out is a or np.shares_memory(out, a) for out in _arrays(result) for a in inputs)


def test_every_rule_whose_result_shares_an_argument_is_known_to():
    """aliasing.call_shares may say "new" only where the result never shares memory with an argument:
    every sample of every rule (tests/rule_samples.py), method and attribute is run, and one whose result
    is (or views) an argument must be one call_shares says may share."""
    from adsrc.frontend.aliasing import call_shares
    from adsrc.rules import registry
    from rule_samples import ATTRIBUTE_SAMPLES, METHOD_SAMPLES, SAMPLES

    rng = np.random.default_rng(0)
    wrong = []
    rules = {rule.qualname: rule for rule in registry.rules()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cases in SAMPLES.items():
            rule = rules.get(name)
            for case in cases if rule is not None else []:
                args, kwargs = case.draw(rng)
                if _shares_an_argument(rule.func(*args, **kwargs), args, kwargs) and not call_shares(
                        rule.func, [_node(a) for a in args], {k: _node(v) for k, v in kwargs.items()}):
                    wrong.append(f"{name}{case!r}")
        for name, cases in METHOD_SAMPLES.items():
            for case in cases:
                (obj, *args), kwargs = case.draw(rng)
                result = getattr(obj, name)(*args, **kwargs)
                if _shares_an_argument(result, [obj, *args], kwargs) and not call_shares(
                        name, [_node(a) for a in args], {k: _node(v) for k, v in kwargs.items()}, method=True):
                    wrong.append(f"x.{name}{case!r}")
        for name, cases in ATTRIBUTE_SAMPLES.items():
            for case in cases:
                (obj,), _ = case.draw(rng)
                if _shares_an_argument(getattr(obj, name), [obj], {}) \
                        and not call_shares(registry.attribute_primitive(name)):
                    wrong.append(f"x.{name}")
    assert not wrong, "calls whose result shares an argument, which aliasing.py takes for new: " + ", ".join(wrong)


@pytest.mark.parametrize("call,shares", [
    ("np.array(x)", False), ("np.array(x, copy=True)", False), ("np.array(x, copy=False)", True),
    ("np.array(x, copy=None)", True), ("np.array(x, None, copy=flag)", True), ("np.array(*xs)", True),
    ("np.asarray(x)", True), ("np.asarray(x, copy=True)", False), ("np.nan_to_num(x)", False),
    ("np.nan_to_num(x, False)", True), ("x.astype(float)", False), ("x.astype(float, copy=False)", True),
    ("np.diff(x)", False), ("np.diff(x, n=0)", True), ("np.sum(x)", False), ("np.exp(x)", False),
    ("np.dot(x, x)", False), ("x.sum()", False), ("x.reshape(3)", True), ("x.conj()", True),
    ("x.get('w')", True), ("f(x)", True), ("same(x)", True), ("doubled(x)", False), ("len(x)", False),
    ("max(x, x)", True), ("np.float64(x)", True), ("np.linalg.solve(x, x)", False),
])
def test_call_shares_spellings(call, shares):
    from adsrc.frontend.aliasing import Aliasing
    from adsrc.frontend.parse import parse_function
    from sources import function_from_source

    func = function_from_source(f"def probe(x, xs, f, flag):\n    return {call}\n", "probe", "probe_call.py")
    func.__globals__.update(same=same, doubled=doubled)
    aliasing = Aliasing(parse_function(func))
    assert aliasing.call_shares(aliasing.parsed.node.body[0].value) is shares
