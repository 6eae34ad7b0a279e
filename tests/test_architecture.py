"""The package's structure and the contracts that keep it: layers, one compile path, Derivative, caches."""
from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adsrc
from adsrc.api.derivative import Derivative
from adsrc.backend import codegen, pipeline
from adsrc.errors import InvalidArgument
from adsrc.ir import annotations as anno

PACKAGE = os.path.join(os.path.dirname(__file__), "..", "adsrc")

# Bottom to top; a module may import modules of its own layer or of layers below it.
LAYERS = [
    {"adsrc.errors", "adsrc.config"},
    {"adsrc.values", "adsrc.ir"},
    {"adsrc.rules"},
    {"adsrc.frontend"},
    {"adsrc.transforms"},
    {"adsrc.optimize"},
    {"adsrc.backend"},
    {"adsrc.runtime", "adsrc.calls", "adsrc.recompute"},
    {"adsrc.second_order"},
    {"adsrc.api", "adsrc.optimizers"},
    {"adsrc.cli", "adsrc.__main__", "adsrc"},
]


def _modules() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
                found[module.removesuffix(".__init__")] = path
    return found


def _imports(module: str, path: str, known: set[str]) -> set[str]:
    """The adsrc modules ``module`` imports, function-level imports included."""
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != module:
                out.add(target)
    return out


def _layer(module: str) -> int:
    for level, members in enumerate(LAYERS):
        if module in members or any(module.startswith(m + ".") for m in members if m != "adsrc"):
            return level
    raise AssertionError(f"{module} belongs to no layer; add it to LAYERS in this test")


def test_every_import_points_down_or_sideways_and_nothing_cycles():
    modules = _modules()
    assert len(modules) > 40
    graph = {m: _imports(m, p, set(modules)) for m, p in modules.items()}
    upward = [f"{m} -> {t}" for m, targets in graph.items() for t in targets
              if t != "adsrc" and _layer(t) > _layer(m)]
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)
    # No cycle: a depth-first search finds no back edge.
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_the_layer_check_catches_an_upward_import(tmp_path):
    assert _layer("adsrc.values.thunks") < _layer("adsrc.backend.pipeline")
    path = tmp_path / "probe.py"
    path.write_text("from ..backend.pipeline import compile\n")
    assert _imports("adsrc.values.probe", str(path), set(_modules())) == {"adsrc.backend.pipeline"}


def _helpers():
    def helper(a, b):  # a loop: not copied in (frontend/module_functions.py), so it keeps its call
        for _ in range(1):
            b = np.sin(a) * b
        return b

    def f(x, y):
        s = 0.0
        for i in range(3):
            s = s + helper(x, y[i])
        return np.sum(s)

    return helper, f


def test_both_modes_compile_through_one_path_and_import_one_runtime_module():
    assert set(pipeline.RUNTIME_NAMES) <= set(adsrc.runtime.__all__)
    _, f = _helpers()
    for mode in (pipeline.REVERSE, pipeline.EAGER, pipeline.FORWARD):
        source = pipeline.compile(f, (0,), mode).source
        imports = [line for line in source.splitlines() if line.startswith("from adsrc")]
        assert imports and all(line.startswith("from adsrc.runtime import ") for line in imports), imports
        assert " as zero_" not in source
    assert "jvp_of(helper" in pipeline.compile(f, (0,), pipeline.FORWARD).source
    assert "adjoint_of(helper" in pipeline.compile(f, (0,), pipeline.REVERSE).source


def test_a_printed_forward_module_runs_on_its_own(tmp_path):
    module = tmp_path / "user_mod.py"
    module.write_text(textwrap.dedent("""
        import numpy as np

        def g(x):
            return np.tanh(x) * x
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import user_mod

        source = adsrc.jvp_source(user_mod.g)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("user_mod", None)
    script = tmp_path / "run_jvp.py"
    script.write_text(source + "\nimport numpy as np\nv, t = g_jvp(0.5, 1.0)\nprint(repr(float(t)))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    expected = (1 - np.tanh(0.5) ** 2) * 0.5 + np.tanh(0.5)
    assert float(out.stdout) == pytest.approx(expected, rel=1e-12)


# ---- Derivative ---------------------------------------------------------------------------
def cubic(x, y):
    return np.sum(x ** 3 * y) + np.sum(np.sin(x) * y ** 2)


def test_grad_returns_a_derivative_that_knows_what_it_differentiates():
    g = adsrc.grad(cubic, wrt=(0, 1))
    assert isinstance(g, Derivative) and g.root is cubic and g.order == 1 and g.wrt == (0, 1) and g.many
    assert g.__name__ == "cubic" and "grad(cubic)" in repr(g)
    gg = adsrc.grad(adsrc.grad(lambda x: x ** 4))
    assert gg.order == 2 and gg(2.0) == pytest.approx(48.0)


def test_vjp_of_a_gradient_is_a_hessian_vector_product():
    x, y, v = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -0.7]), np.array([1.0, -2.0, 0.5])
    H = adsrc.hessian(cubic, wrt=(0, 1))(x, y)
    value, pullback = adsrc.vjp(adsrc.grad(cubic), x, y, wrt=(0, 1))
    np.testing.assert_allclose(value, adsrc.grad(cubic)(x, y), rtol=1e-14)
    dx, dy = pullback(v)
    # d/dx (v . grad_x f) = H_xx v and d/dy (v . grad_x f) = H_yx v (H is symmetric).
    np.testing.assert_allclose(dx, H[0][0] @ v, rtol=1e-10)
    np.testing.assert_allclose(dy, H[1][0] @ v, rtol=1e-10)
    # Against central differences of v . grad_x f.
    eps = 1e-6
    fd = np.array([(v @ adsrc.grad(cubic)(x + eps * e, y) - v @ adsrc.grad(cubic)(x - eps * e, y)) / (2 * eps)
                   for e in np.eye(3)])
    np.testing.assert_allclose(dx, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call", [
    lambda g: adsrc.adjoint_source(g),
    lambda g: adsrc.jvp_source(g),
])
def test_what_a_derivative_cannot_do_is_refused_naming_the_users_function(call):
    def quartic(x):
        return x ** 4

    g = adsrc.grad(quartic)
    with pytest.raises(InvalidArgument) as info:
        call(g)
    message = str(info.value)
    assert "quartic" in message and f"{__file__}:" in message and "adsrc/api/" not in message


def test_a_derivative_of_a_second_derivative_is_a_third_derivative():
    def quartic(x):
        return x ** 4

    g = adsrc.grad(quartic)
    assert adsrc.grad(adsrc.grad(g))(1.0) == pytest.approx(24.0, rel=1e-12)
    assert adsrc.jvp(adsrc.grad(g), (1.0,), (1.0,))[1] == pytest.approx(24.0, rel=1e-12)
    value, pullback = adsrc.vjp(adsrc.grad(g), 1.0)
    assert value == pytest.approx(12.0) and pullback(1.0) == pytest.approx(24.0, rel=1e-12)


def test_the_cli_refuses_to_dump_a_derivative_and_differentiates_one(tmp_path, capsys):
    from adsrc.cli import main

    path = tmp_path / "model.py"
    path.write_text("import numpy as np\nimport adsrc\n\ndef f(x):\n    return np.sin(x) * x\n\ng = adsrc.grad(f)\n")
    assert main(["dump", f"{path}:g"]) == 2
    assert f"adsrc dump {path}:f" in capsys.readouterr().err
    assert main(["grad", f"{path}:g", "--args", "0.5"]) == 0
    out = capsys.readouterr().out
    second = 2 * np.cos(0.5) - 0.5 * np.sin(0.5)
    assert f"= {second!r}" in out or float(out.split("= ")[-1]) == pytest.approx(second, rel=1e-14)


# ---- caches -------------------------------------------------------------------------------
def test_registering_a_rule_recompiles_the_adjoints_that_used_the_old_one():
    def scale(x):
        return 2.0 * x

    def loss(x):
        return scale(x) * 1.0

    adsrc.register_adjoint(scale, lambda g, ans, x: g * 2.0)
    assert adsrc.grad(loss)(1.0) == 2.0
    adsrc.register_adjoint(scale, lambda g, ans, x: g * 5.0)  # a corrected (here: different) rule
    assert adsrc.grad(loss)(1.0) == 5.0


def test_changed_defaults_recompile():
    def f(x, a=2.0):
        return a * x

    assert adsrc.grad(f)(1.0) == 2.0
    f.__defaults__ = (3.0,)
    assert adsrc.grad(f)(1.0) == 3.0


def test_closures_sharing_code_keep_a_bounded_number_of_entries():
    def make(k):
        def f(x):
            return k * x
        return f

    fs = [make(float(k)) for k in range(12)]
    for k, f in enumerate(fs):
        assert adsrc.grad(f)(1.0) == float(k)
    assert len(pipeline.cache.entries(fs[0])) <= 4


def test_entries_and_line_maps_go_when_the_function_does():
    import linecache

    source = "def temporary(x):\n    return np.sin(x) * x\n"
    linecache.cache["<temporary>"] = (len(source), None, source.splitlines(True), "<temporary>")
    namespace: dict = {"np": np}
    exec(compile(source, "<temporary>", "exec"), namespace)
    func = namespace.pop("temporary")
    adsrc.grad(func)(0.3)
    code = func.__code__
    generated = [name for name in codegen._origins if "temporary" in name]
    assert generated and pipeline.cache._entries.get(code)
    del func, code, namespace
    for _ in range(3):  # the first pass frees the function, whose cache entry then frees the adjoint's cycle
        gc.collect()
    assert not [name for name in codegen._origins if "temporary" in name]


def test_annotations_are_named():
    import gast

    node = gast.Pass()
    anno.set(node, anno.PUSHES, [1])
    assert anno.get(node, anno.PUSHES) == [1] and anno.has(node, anno.PUSHES)
    assert anno.get(node, anno.PRIM, None) is None
    with pytest.raises(KeyError):
        anno.get(node, anno.PRIM)
    with pytest.raises(KeyError):
        anno.set(node, "pushes_typo", 1)


def test_a_rebound_or_reloaded_module_function_recompiles(tmp_path, monkeypatch):
    import importlib

    (tmp_path / "stale_helpers.py").write_text("import numpy as np\n\ndef act(x):\n    return np.tanh(x)\n")
    (tmp_path / "stale_model.py").write_text(
        "import numpy as np\nimport stale_helpers\n\ndef loss(x):\n    return np.sum(stale_helpers.act(x))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import stale_helpers
    import stale_model

    x = np.array([0.5, -0.2])
    np.testing.assert_allclose(adsrc.grad(stale_model.loss)(x), 1 - np.tanh(x) ** 2, rtol=1e-12)
    monkeypatch.setattr(stale_helpers, "act", np.sin)  # the notebook edit: rebind the helper
    np.testing.assert_allclose(adsrc.grad(stale_model.loss)(x), np.cos(x), rtol=1e-12)
    (tmp_path / "stale_helpers.py").write_text("import numpy as np\n\ndef act(x):\n    return x ** 3\n\n\n")
    importlib.reload(stale_helpers)  # ... or edit the file and reload it
    np.testing.assert_allclose(adsrc.grad(stale_model.loss)(x), 3 * x ** 2, rtol=1e-12)
    assert adsrc.value_and_grad(stale_model.loss)(x)[0] == stale_model.loss(x)
