"""Errors raised while a derivative runs name the user's line; misuses name their remedy.

An exception in the forward sweep of any adjoint (specialized for the
arguments' kinds or generic, lazy or eager) carries a note naming the
original file:line it runs; ``grad`` of a function returning ``(loss, aux)``
suggests ``has_aux=True``.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import adsrc


def out_of_bounds(y):
    z = np.sin(y)
    w = z[np.array([0, 5])]
    return np.sum(w)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("args", [(np.ones(3),), ([1.0, 2.0, 3.0],)], ids=["specialized", "generic"])
def test_a_forward_sweep_error_names_the_users_line(eager, args):
    line = inspect.getsourcelines(out_of_bounds)[1] + 2
    with pytest.raises(IndexError) as info:
        adsrc.grad(out_of_bounds, eager=eager)(*args)
    notes = getattr(info.value, "__notes__", [])
    assert any(f"{__file__}:{line}: w = z[np.array([0, 5])]" in note for note in notes), notes


def test_a_pair_returned_to_grad_suggests_has_aux():
    def f(x):
        return np.sum(x ** 2), x

    def g(x):
        return np.sum(x ** 2), 3.0

    for func in (f, g):
        with pytest.raises(adsrc.errors.NonScalarOutput, match="has_aux=True"):
            adsrc.grad(func)(np.ones(3))
    gradient, aux = adsrc.grad(g, has_aux=True)(np.ones(3))
    np.testing.assert_allclose(gradient, 2 * np.ones(3))
    assert aux == 3.0
