"""What a new user meets in the first hour: which adjoint ``adjoint_source`` and ``adsrc dump`` show (the
one ``grad`` runs, and a line saying so), error messages whose remedies can be pasted, "did you mean"
for misspelt names, and the package's metadata (LICENSE, py.typed, the SPDX license)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import adsrc
from gradcheck import numerical_grad
from adsrc import errors
from adsrc.backend.specialized import MAX_SIGNATURES
from sources import function_from_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * 0.5 + x
    return y


def weights_loss(weights, x):
    return np.sum(np.tanh(weights @ x))


def cubes(x):
    return np.sum(x ** 3)


def determinant(x):
    return np.linalg.det(x)


def two_cubes(x, y):
    return np.sum(x ** 3) * y


def vectorized_lambda(x):
    return np.sum(np.vectorize(lambda t: t * 2.0)(x))


def many_shapes(x):
    return np.sum(np.tanh(x) * x)


def second_line(source):
    return source.splitlines()[1]


# -- which adjoint grad runs ---------------------------------------------------------------------

def test_the_generic_adjoint_says_calls_with_arrays_run_a_specialized_form():
    line = second_line(adsrc.adjoint_source(weights_loss))
    assert line.startswith("# The generic form.")
    assert "grad(weights_loss) of floats, ints or NumPy arrays" in line
    assert "adjoint_source(weights_loss, args=...)" in line and "adsrc dump --args" in line


def test_with_args_the_specialized_adjoint_says_grad_runs_it():
    source = adsrc.adjoint_source(weights_loss, args=(np.ones((2, 3)), np.ones(3)))
    assert "specialized for weights: float64[2, 3], x: float64[3]" in source.splitlines()[0]
    assert second_line(source) == ("# What grad(weights_loss) runs for arguments of these kinds; it runs the "
                                   "generic adjoint for others.")


def test_with_args_that_change_nothing_the_generic_adjoint_says_so():
    generic = adsrc.adjoint_source(determinant, args=(np.eye(2),))
    assert second_line(generic) == ("# The generic form, which grad(determinant) runs for these arguments: "
                                    "specializing it for their kinds changes nothing.")
    assert "specialized" not in generic.splitlines()[0]
    # Arguments of no kind: grad runs the generic adjoint, and the line says why.
    source = adsrc.adjoint_source(cubes, args=({"a": 1.0},))
    assert second_line(source) == ("# The generic form, which grad(cubes) runs for these arguments: none of them "
                                   "is a float, an int or a NumPy array (or a list of them).")
    # Only the second line differs from the generic adjoint: line numbers stay those pdb shows.
    plain = adsrc.adjoint_source(cubes).splitlines()
    assert source.splitlines()[2:] == plain[2:] and source.splitlines()[0] == plain[0]


def test_with_specialization_off_adjoint_source_shows_the_generic_adjoint():
    saved = adsrc.config.specialize
    adsrc.config.specialize = False
    try:
        source = adsrc.adjoint_source(weights_loss, args=(np.ones((2, 3)), np.ones(3)))
    finally:
        adsrc.config.specialize = saved
    assert "specialized" not in source.splitlines()[0]
    assert second_line(source).endswith("adsrc.config.specialize is off.")


def test_the_raw_form_says_grad_runs_the_optimized_adjoint():
    line = second_line(adsrc.adjoint_source(cubes, optimize=False))
    assert line.startswith("# Not optimized: grad(cubes) runs the optimized adjoint")


def test_the_specialized_source_is_what_runs():
    """The note is in the generated module itself, so pdb and tracebacks show the lines dump prints."""
    import linecache

    x = np.linspace(0.1, 1.0, 3)
    adsrc.grad(cubes)(x)
    shown = adsrc.adjoint_source(cubes, args=(x,))
    loaded = [name for name in linecache.cache if name.startswith("<adsrc adjoint") and "cubes" in name]
    assert any("".join(linecache.cache[name][2]) == shown for name in loaded)


def test_past_the_most_signatures_the_line_says_why():
    for n in range(MAX_SIGNATURES):  # each a new kind for this function, specialized or not
        adsrc.adjoint_source(many_shapes, args=(np.ones(n + 1),))
    source = adsrc.adjoint_source(many_shapes, args=(np.ones(MAX_SIGNATURES + 1),))
    assert second_line(source) == (f"# The generic form, which grad(many_shapes) runs for these arguments: it has "
                                   f"been specialized for {MAX_SIGNATURES} other kinds of arguments already, the "
                                   f"most it keeps.")


# -- error messages ------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [np.sum, np.linalg.norm, np.prod])
def test_grad_of_a_primitive_differentiates_it(func):
    """A function with a rule, given to grad itself, is differentiated as a call of it (tests/test_primitives.py)."""
    x = np.array([1.0, -2.0, 2.5])
    np.testing.assert_allclose(adsrc.grad(func)(x), numerical_grad(func, (x,), 0), rtol=1e-6)


def test_grad_of_a_library_function_without_a_rule_says_what_to_do():
    with pytest.raises(errors.SourceUnavailable) as info:
        adsrc.grad(np.argsort)(np.ones(3))
    message = str(info.value)
    assert "np.argsort is a library function with no gradient rule" in message
    assert "adsrc.register_adjoint(np.argsort, ...)" in message


def test_the_suggested_wrapper_works():
    wrapped = function_from_source("f = lambda x: np.sum(x)\n", "f", "<test_first_hour wrapper>")
    assert adsrc.grad(wrapped)(np.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_a_vectorized_lambda_is_named_as_written():
    with pytest.raises(errors.NoGradientRule) as info:
        adsrc.grad(vectorized_lambda)(np.ones(3))
    message = str(info.value)
    assert "local_function" not in message and "lambda_code" not in message
    assert "`f = np.vectorize(lambda t: t * 2.0)`" in message


def test_hvp_takes_v_by_keyword():
    x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    assert adsrc.hvp(cubes)(x, v=v).tolist() == adsrc.hvp(cubes)(x, v).tolist() == [6.0, 0.0]
    assert adsrc.hvp(two_cubes)(x, 2.0, v=v).tolist() == [12.0, 0.0]


@pytest.mark.parametrize("call,fragment", [
    (lambda h: h(np.ones(2), w=np.ones(2)), "it got w="),
    (lambda h: h(), "it got no arguments"),
])
def test_hvp_refuses_other_keywords_clearly(call, fragment):
    with pytest.raises(errors.InvalidArgument) as info:
        call(adsrc.hvp(cubes))
    assert "hvp(cubes) takes cubes's arguments by position, then the direction v" in str(info.value)
    assert fragment in str(info.value)


def test_a_misspelt_wrt_gets_did_you_mean():
    with pytest.raises(errors.InvalidArgument, match="no parameter named 'weight'; did you mean 'weights'?"):
        adsrc.grad(weights_loss, wrt="weight")(np.ones((2, 3)), np.ones(3))
    with pytest.raises(errors.InvalidArgument) as info:  # nothing close: no guess
        adsrc.grad(weights_loss, wrt="zzz")(np.ones((2, 3)), np.ones(3))
    assert "did you mean" not in str(info.value) and "its parameters are weights, x" in str(info.value)


# -- the package ---------------------------------------------------------------------------------

def project():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as file:
        return tomllib.load(file)


def test_license_and_typing_marker():
    project_ = project()
    assert project_["project"]["license"] == "MIT"
    assert "LICENSE" in project_["project"]["license-files"]
    assert "py.typed" in project_["tool"]["setuptools"]["package-data"]["adsrc"]
    requires = project_["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in requires)
    with open(os.path.join(ROOT, "LICENSE")) as file:
        text = file.read()
    assert text.startswith("MIT License") and "Copyright (c) the adsrc authors" in text
    assert os.path.isfile(os.path.join(ROOT, "adsrc", "py.typed"))


def test_the_test_extra_and_markers():
    project_ = project()
    assert any(r.startswith("sybil") for r in project_["project"]["optional-dependencies"]["test"])
    pytest_options = project_["tool"]["pytest"]["ini_options"]
    assert {"tests", "README.md", "docs"} <= set(pytest_options["testpaths"])
    markers = {m.split(":")[0] for m in pytest_options["markers"]}
    assert {"slow", "docs"} <= markers


def test_python_m_adsrc_from_the_root_runs():
    out = subprocess.run([sys.executable, "-m", "adsrc", "--help"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0 and "adsrc dump" in out.stdout


def test_the_main_example_prints_the_adjoint_grad_ran():
    """README: the main example "prints the gradient of a 512-step loop and the adjoint code that grad ran"."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "loop_accumulate.py")], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    title, note = [line for line in out.stdout.splitlines() if line.startswith("# ")][:2]
    assert "specialized for W: float64[10, 10], x: list[512 x float64[10]]" in title
    assert note.startswith("# What grad(f) runs for arguments of these kinds")


def test_the_readme_set_up_commands_are_venv_safe():
    with open(os.path.join(ROOT, "README.md")) as file:
        readme = file.read()
    for command in ('python3 -m venv .venv && .venv/bin/python -m pip install . && '
                    '.venv/bin/python examples/loop_accumulate.py',
                    'python3 -m venv .venv && .venv/bin/python -m pip install ".[test]" && .venv/bin/python -m pytest'):
        assert f"\n{command}\n" in readme
    assert "source .venv/bin/activate" in readme and '-m "not slow"' in readme
