"""Scalar test functions after Tangent's (google/tangent, tests/functions.py), rewritten for adsrc.

Tangent tests its transformer, and its grad of grad, on small functions of
a scalar ``a`` (and ``b``, an integer ``n``) that stress what source
transformation must get right: names rebound in branches and loops, nested
and chained conditions, loops whose count is an argument, helpers called in
branches and loops, a function defined inside, while loops, tuples, dicts
and lists of scalars. These are the same kinds of programs, written again
here with other constants, and they are differentiated to order 4
(tests/test_orders.py).
"""
from __future__ import annotations

import numpy as np


def negated(a):
    return -a * a


def scaled_and_shifted(a, b):
    return a * b + 2.5 * a


def _times(u, v):
    return u * v


def _plus(u, v):
    return u + v


def through_helpers(a, b):
    return _plus(_times(a, b), _times(a, a))


def rebound_in_a_branch(a):
    if a > 0:
        a = a * 2.5
    else:
        a = a * 1.5
    return a * a


def nested_branches(a):
    if a > 0:
        if a < 5:
            a = a * a * a
    else:
        a = 2.0 * a
    return a


def chained_conditions(a):
    if a * a / 2.0 > 0:
        b = 2.0
    else:
        b = 5.0
    a = a * b
    if a < b - a * b:
        a = a * a
    elif a > b + 2.0 * a:
        a = a / b
    else:
        a = a * a * a
    return a


def loops_in_sequence(a, n=2):
    for _ in range(n):
        a = a * a
    a = 1.5 * a
    for _ in range(n + 1):
        a = a * 1.2
    return a


def branch_then_loop(a, n=2):
    if a > 0:
        a = a * a
    a = 0.5 * a
    for _ in range(n):
        a = a * a
    return a


def counted_power(a):
    out = 1.0
    for _ in range(4):
        out = out * a
    return out


def conditional_power(a):
    for _ in range(3):
        if a < 15.0:
            a = a * a
    return a


def nested_loop_power(a):
    for _ in range(2):
        for _ in range(2):
            a = a * a
    return a


def exp_of_exp(a):
    return np.exp(np.exp(0.5 * a))


def square_root_chain(a):
    return np.sqrt(a * a + 1.0) * np.sqrt(a)


def helper_in_branches(a, b):
    if a > b:
        out = _times(a, b)
    else:
        out = _times(b, a * a)
    return out


def helper_in_a_loop(a, n=2):
    for _ in range(n):
        a = _times(a, a)
    return a


def defined_inside(a, n=2):
    def shrink(u, v):
        return u * v * 0.5

    for _ in range(n):
        a = shrink(a, a)
    return a


def halving_while(a):
    while np.abs(a) > 0.1:
        a = a * 0.5
    return a * a * a


def unpacked_tuple(a):
    p, q, r = a, a * a, 3.0
    return p * q + r * p


def dict_of_scalars(a):
    d = dict(u=a, v=a * a, w=0.5)
    return d["u"] * d["v"] + d["w"] * d["u"]


def list_of_scalars(a):
    xs = [2.0, a * a, a]
    return np.sum(xs) * xs[2]


def chain_of_products(a):
    b = a
    b = a * a
    c = b * b
    return c * b


def augmented(a):
    x = a * a
    x *= x
    x += a
    return x


def trig_mix(a):
    return np.sin(a) * np.cos(a * a) + np.tanh(a) ** 2


FUNCTIONS = [negated, scaled_and_shifted, through_helpers, rebound_in_a_branch, nested_branches, chained_conditions,
             loops_in_sequence, branch_then_loop, counted_power, conditional_power, nested_loop_power, exp_of_exp,
             square_root_chain, helper_in_branches, helper_in_a_loop, defined_inside, halving_while, unpacked_tuple,
             dict_of_scalars, list_of_scalars, chain_of_products, augmented, trig_mix]
OTHER_ARGUMENTS = {scaled_and_shifted: (0.8,), through_helpers: (0.8,), helper_in_branches: (0.4,)}
