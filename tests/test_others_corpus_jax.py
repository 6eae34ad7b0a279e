"""The corpus of programs written by others (tests/others/) against JAX, where JAX is installed.

Each program's own source is run with ``np`` (and the globals it names in JAX_NAMES) taken from JAX;
JAX's gradient must agree with adsrc's to near rounding. Slow (conftest.py): JAX runs them op by op.
"""
from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import adsrc
import others
from test_others_corpus import leaves, positions


def under_jax(program, jax):
    """The program's functions and classes-free helpers, run with ``np`` (and JAX_NAMES) taken from JAX."""
    namespace = dict(vars(program))
    namespace["np"] = jax.numpy
    for key, path in getattr(program, "JAX_NAMES", {}).items():
        module, attr = path.rsplit(".", 1)
        namespace[key] = getattr(importlib.import_module(module), attr)
    for key, value in vars(program).items():
        if isinstance(value, types.FunctionType) and value.__module__ == program.__name__:
            namespace[key] = types.FunctionType(value.__code__, namespace, value.__name__, value.__defaults__,
                                                value.__closure__)
    return namespace["loss"]


@pytest.mark.parametrize("name", [n for n in others.NAMES if getattr(others.load(n), "JAX", True)
                                  and not getattr(others.load(n), "XFAIL", None)])
def test_gradient_matches_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    program = others.load(name)
    wrt = positions(program)
    ours = adsrc.grad(program.loss, wrt=wrt)(*program.ARGS)
    theirs = jax.grad(under_jax(program, jax), argnums=wrt)(*program.ARGS)
    for k in range(len(wrt)):
        for a, b in zip(leaves(ours[k]), jax.tree_util.tree_leaves(theirs[k])):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-9, atol=1e-11)
