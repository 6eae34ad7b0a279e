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

import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import check

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


def parameter(x):
    x *= 2.0
    return np.sum(x)


def parameter_seen_through_another(x, y):
    x *= 2.0
    return np.sum(y)


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
    (parameter, (np.array([0.5, 1.5]),)),
    (parameter_seen_through_another, (np.array([0.5, 1.5]), np.array([0.5, 1.5]))),
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
