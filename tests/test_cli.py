"""The ``adsrc`` command line, end to end in subprocesses.

Every command runs as ``python -m adsrc``; a few also run through the
``adsrc`` console script (its entry point, ``adsrc.cli:main``). Bad input
must exit with status 2 and exactly one line on stderr, never a traceback.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adsrc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60

USER_FILE = '''
import math
import numpy as np
import adsrc

SCALE = 2.0


def helper(v):
    return np.sum(np.sin(v)) * SCALE


def f(x, y):
    return np.sum(x * x) * y + helper(x)


def loop(W, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(W @ x))
    return total


def keyword(x, scale=3.0):
    return np.sum(x) * scale


def shaky(x):
    return np.sum(np.log(x))


def vector(x):
    return np.sin(x)


def ints(n):
    return n * 2


def uses_try(x):
    y = x
    try:
        y = x * 2.0
    except ValueError:
        pass
    return np.sum(y)


opaque = np.frompyfunc(math.sin, 1, 1)  # a ufunc made at run time: no rule, no source


def uses_nextafter(x):
    return np.sum(opaque(x))


def pullback(x):
    pullback = x * 2.0
    return np.sum(pullback)


@np.vectorize
def not_a_function(x):
    return x


NOT_CALLABLE = 3.0


def broken_rule(x):
    return x * 2.0


# A rule whose vjp fails when the pullback runs it (wrong shape on purpose).
adsrc.register_adjoint(broken_rule, lambda g, ans, x: np.ones((5, 7)) @ g)


def uses_broken_rule(x):
    return np.sum(broken_rule(x) * x)
'''


def run(*args, cwd=None, env=None, console=False):
    command = ["adsrc"] if console else [sys.executable, "-m", "adsrc"]
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=cwd or ROOT, env=env)


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli")
    (directory / "user.py").write_text(USER_FILE)
    (directory / "syntax.py").write_text("import numpy as np\n\n\ndef f(x):\n    return x +\n")
    (directory / "raises.py").write_text("import numpy as np\n\nraise RuntimeError('broken at import')\n\n"
                                         "def f(x):\n    return x\n")
    (directory / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (directory / "imports_neighbour.py").write_text("from user import helper\n\n\n"
                                                    "def g(x):\n    return helper(x) * 3.0\n")
    (directory / "prints.py").write_text("print('hello from import')\n\n\ndef f(x):\n    return x * x\n")
    return directory


def target(directory, name):
    return f"{directory / 'user.py'}:{name}"


def assert_one_line_error(out, *fragments):
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(("adsrc: error: ", "adsrc dump: error: ", "adsrc grad: error: ")), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert out.stdout == "", out.stdout
    return lines[0]


def parses(source):
    ast.parse(source)
    return True


# -- dump ------------------------------------------------------------------------------------

def test_dump_lazy_is_the_adjoint_source(user):
    out = run("dump", target(user, "f"))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout.startswith("# Adjoint of f (")
    assert "lazy accumulation" in out.stdout and "with respect to x;" in out.stdout
    assert "def f_adjoint(x, y):" in out.stdout and "def pullback(" in out.stdout
    assert re.search(r"# line \d+: return np\.sum\(x \* x\) \* y \+ helper\(x\)", out.stdout)
    assert parses(out.stdout)


def test_dump_matches_adjoint_source_of_the_api():
    out = run("dump", "examples/loop_accumulate.py:f")
    assert out.returncode == 0, out.stderr
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import loop_accumulate
    finally:
        sys.path.pop(0)
    expected = adsrc.adjoint_source(loop_accumulate.f)
    # Only the file name in the title may differ (the CLI imports the file under its own name).
    assert out.stdout.splitlines()[1:] == expected.splitlines()[1:]


def test_dump_says_which_adjoint_grad_runs(user):
    generic = run("dump", target(user, "loop")).stdout.splitlines()
    assert generic[1].startswith("# The generic form. Where that changes anything, grad(loop) of floats, ints")
    special = run("dump", target(user, "loop"), "--args", "np.ones((2, 3)), [np.ones(3)] * 4").stdout.splitlines()
    assert "specialized for W: float64[2, 3], xs: list[4 x float64[3]]" in special[0]
    assert special[1] == "# What grad(loop) runs for arguments of these kinds; it runs the generic adjoint for others."


def test_the_readme_examples_of_args_work_for_dump_and_grad():
    with open(os.path.join(ROOT, "README.md")) as file:
        readme = file.read()
    examples = set(re.findall(r"--args ['\"]([^'\"]+)['\"]", readme))
    assert examples
    for example in examples:
        dumped = run("dump", "examples/regression.py:f", "--wrt", "w", "--args", example)
        assert dumped.returncode == 0 and "specialized for w: float64" in dumped.stdout, dumped.stderr
        evaluated = run("grad", "examples/regression.py:f", "--args", example)
        assert evaluated.returncode == 0 and evaluated.stdout.startswith("value = "), evaluated.stderr


def test_dump_eager(user):
    out = run("dump", target(user, "loop"), "--eager")
    assert out.returncode == 0, out.stderr
    assert "eager unthunking" in out.stdout
    assert "Thunk(" not in out.stdout.split("def loop_adjoint", 1)[1]
    assert parses(out.stdout)


@pytest.mark.parametrize("wrt,names", [("0,1", "x, y"), ("y", "y"), ("-1", "y"), ("0, y", "x, y")])
def test_dump_wrt_positions_and_names(user, wrt, names):
    out = run("dump", target(user, "f"), "--wrt", wrt)
    assert out.returncode == 0, out.stderr
    assert f"with respect to {names};" in out.stdout


def test_dump_no_optimize_shows_the_raw_form(user):
    optimized = run("dump", target(user, "loop"))
    raw = run("dump", target(user, "loop"), "--no-optimize")
    assert optimized.returncode == 0 and raw.returncode == 0, raw.stderr
    assert "not optimized" in raw.stdout and "not optimized" not in optimized.stdout
    assert len(raw.stdout.splitlines()) > len(optimized.stdout.splitlines())
    assert parses(raw.stdout)


def test_sweep_only_options_split_the_module(user):
    full = run("dump", target(user, "loop"), "--wrt", "0,1").stdout
    forward = run("dump", target(user, "loop"), "--wrt", "0,1", "--forward-sweep-only")
    backward = run("dump", target(user, "loop"), "--wrt", "0,1", "--backward-sweep-only")
    assert forward.returncode == 0 and backward.returncode == 0, (forward.stderr, backward.stderr)
    # The forward sweep: header and adjoint function, the pullback replaced by one comment.
    assert "def loop_adjoint(W, xs):" in forward.stdout and "tape.append(" in forward.stdout
    assert not re.search(r"^\s*def pullback", forward.stdout, re.MULTILINE) and "tape.pop()" not in forward.stdout
    assert "# def pullback(" in forward.stdout and "return (total, pullback)" in forward.stdout
    assert parses(forward.stdout)
    # The backward sweep: the nested def alone, dedented, with its line comments.
    assert backward.stdout.startswith("def pullback(")
    assert "tape.pop()" in backward.stdout and "# line " in backward.stdout
    assert "def loop_adjoint" not in backward.stdout and "rule_vjp" not in backward.stdout
    assert parses(backward.stdout)
    # Together they hold every line of the full module.
    for line in full.splitlines():
        stripped = line.strip()
        if stripped:
            assert stripped in forward.stdout or stripped in backward.stdout, line


def test_sweep_only_with_a_user_variable_named_pullback(user):
    out = run("dump", target(user, "pullback"), "--backward-sweep-only")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("def pullback") and parses(out.stdout)
    forward = run("dump", target(user, "pullback"), "--forward-sweep-only")
    assert forward.returncode == 0 and parses(forward.stdout)
    assert "pullback = x * 2.0" in forward.stdout


def test_sweep_only_options_exclude_each_other(user):
    out = run("dump", target(user, "f"), "--forward-sweep-only", "--backward-sweep-only")
    assert_one_line_error(out, "not allowed with")


def test_dump_of_a_file_that_prints_at_import(user):
    out = run("dump", f"{user / 'prints.py'}:f")
    assert out.returncode == 0, out.stderr
    assert "def f_adjoint" in out.stdout


def test_dump_of_a_file_importing_its_neighbour(user):
    out = run("dump", f"{user / 'imports_neighbour.py'}:g", cwd=str(user.parent))
    assert out.returncode == 0, out.stderr
    assert "adjoint_of(helper" in out.stdout


def test_dump_relative_path_from_another_directory(user):
    out = run("dump", "user.py:f", cwd=str(user))
    assert out.returncode == 0, out.stderr
    assert "def f_adjoint" in out.stdout


def test_dump_unwraps_decorated_functions(tmp_path):
    (tmp_path / "decorated.py").write_text(textwrap.dedent('''
        import numpy as np
        import adsrc

        @adsrc.differentiate(wrt="x")
        def loss(x):
            return np.sum(x ** 3)
    '''))
    out = run("dump", f"{tmp_path / 'decorated.py'}:loss")
    assert out.returncode == 0, out.stderr
    assert "def loss_adjoint(x):" in out.stdout


# -- grad ------------------------------------------------------------------------------------

def parse_grad_output(text):
    """{label: value text} from the grad command's output."""
    entries, label = {}, None
    for line in text.splitlines():
        match = re.match(r"^(value|d\w+/d\w+) =(.*)$", line)
        if match:
            label = match.group(1)
            entries[label] = match.group(2).strip()
        else:
            entries[label] += " " + line.strip()
    return entries


def numbers(text):
    return np.array([float(t) for t in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", text)])


def test_grad_prints_value_and_gradient(user):
    out = run("grad", target(user, "f"), "--args", "np.ones(3), 2.0", "--wrt", "0,1")
    assert out.returncode == 0, out.stderr
    entries = parse_grad_output(out.stdout)
    assert set(entries) == {"value", "df/dx", "df/dy"}
    x, y = np.ones(3), 2.0
    value = np.sum(x * x) * y + np.sum(np.sin(x)) * 2.0
    np.testing.assert_allclose(float(entries["value"]), value)
    np.testing.assert_allclose(numbers(entries["df/dx"]), 2 * x * y + 2.0 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(float(entries["df/dy"]), np.sum(x * x))


def test_grad_multiline_arrays_and_module_globals(user):
    # SCALE is the user's module global; the expression sees it.
    out = run("grad", target(user, "loop"), "--args", "np.eye(2) * SCALE, [np.ones(2), np.arange(2.0)]")
    assert out.returncode == 0, out.stderr
    assert "dloop/dW =\n[[" in out.stdout
    W, xs = np.eye(2) * 2.0, [np.ones(2), np.arange(2.0)]
    expected = sum(np.outer(1 - np.tanh(W @ x) ** 2, x) for x in xs)
    np.testing.assert_allclose(numbers(parse_grad_output(out.stdout)["dloop/dW"]), expected.ravel(), rtol=1e-6)


def test_grad_keyword_arguments_and_eager(user):
    lazy = run("grad", target(user, "keyword"), "--args", "np.arange(3.0), scale=4.0", "--wrt", "x,scale")
    eager = run("grad", target(user, "keyword"), "--args", "np.arange(3.0), scale=4.0", "--wrt", "x,scale",
                "--eager")
    assert lazy.returncode == 0 and eager.returncode == 0, (lazy.stderr, eager.stderr)
    assert lazy.stdout == eager.stdout
    entries = parse_grad_output(lazy.stdout)
    np.testing.assert_allclose(numbers(entries["dkeyword/dx"]), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(float(entries["dkeyword/dscale"]), 3.0)


def test_grad_negative_literal_needs_equals_form(user):
    out = run("grad", target(user, "keyword"), "--args=-1.0 * np.ones(2)")
    assert out.returncode == 0, out.stderr
    np.testing.assert_allclose(float(parse_grad_output(out.stdout)["value"]), -6.0)


def test_grad_through_the_console_script(user):
    if shutil.which("adsrc") is None:
        pytest.skip("the adsrc console script is not installed")
    out = run("grad", target(user, "f"), "--args", "np.ones(2), 1.0", console=True)
    if out.returncode != 0 and "No module named" in out.stderr:
        pytest.skip("the installed console script belongs to another environment")
    assert out.returncode == 0, out.stderr
    assert "df/dx = [" in out.stdout


def test_console_script_dump(user):
    if shutil.which("adsrc") is None:
        pytest.skip("the adsrc console script is not installed")
    out = run("dump", target(user, "f"), console=True)
    assert out.returncode == 0, out.stderr
    assert "def f_adjoint" in out.stdout


@pytest.fixture
def in_process(monkeypatch):
    """Undo what loading a user file in this process does to sys.path and sys.modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("adsrc_cli_"):
            del sys.modules[name]


def test_main_entry_point_in_process(user, capsys, in_process):
    from adsrc.cli import main

    assert main(["dump", target(user, "f"), "--backward-sweep-only"]) == 0
    assert capsys.readouterr().out.startswith("def pullback(")
    assert main(["dump", target(user, "nope")]) == 2
    assert "no function named 'nope'" in capsys.readouterr().err


# -- help -----------------------------------------------------------------------------------

def test_help_documents_every_command():
    out = run("--help")
    assert out.returncode == 0
    for text in ("dump", "grad", "--traceback", "exits with status 2"):
        assert text in out.stdout


def test_top_level_help_lists_every_option_of_every_command():
    out = run("--help")
    assert out.returncode == 0
    for command in ("dump", "grad"):
        listed = run(command, "--help").stdout
        for option in set(re.findall(r"^\s+(--[\w-]+)", listed, re.MULTILINE)) - {"--help"}:
            assert option in out.stdout, (command, option)


@pytest.mark.parametrize("command,options", [
    ("dump", ["FILE.py:FUNC", "--wrt", "--eager", "--no-optimize", "--forward-sweep-only",
              "--backward-sweep-only", "--traceback"]),
    ("grad", ["FILE.py:FUNC", "--args", "--wrt", "--eager", "--traceback"]),
])
def test_subcommand_help_documents_every_option(command, options):
    out = run(command, "--help")
    assert out.returncode == 0
    parser_options = re.findall(r"^\s+(--[\w-]+|FILE\.py:FUNC)", out.stdout, re.MULTILINE)
    for option in options:
        assert option in parser_options, (option, out.stdout)
    # Every listed option carries a help string (argparse prints it after the option name).
    for option in set(parser_options) - {"--help"}:
        block = out.stdout.split(option, 2)[-1]
        assert re.search(r"\w{3,}", block.splitlines()[0] + " " + block.splitlines()[1]), option


# -- errors: exit status 2, one line on stderr, never a traceback -------------------------------

def test_missing_file():
    assert_one_line_error(run("dump", "examples/missing.py:f"), "no such file: examples/missing.py")


def test_missing_function(user):
    assert_one_line_error(run("dump", target(user, "nope")), "has no function named 'nope'")


def test_misspelt_function_gets_did_you_mean(user):
    assert_one_line_error(run("dump", target(user, "lopo")), "has no function named 'lopo'; did you mean 'loop'?")
    assert_one_line_error(run("grad", target(user, "helpr"), "--args", "np.ones(2)"), "did you mean 'helper'?")


def test_misspelt_parameter_gets_did_you_mean(user):
    assert_one_line_error(run("dump", target(user, "keyword"), "--wrt", "scael"),
                          "no parameter named 'scael'; did you mean 'scale'?")


def test_target_without_function():
    assert_one_line_error(run("dump", "examples/regression.py"), "expected FILE.py:FUNC")


def test_not_a_python_function(user):
    assert_one_line_error(run("dump", target(user, "NOT_CALLABLE")), "cannot read the source of")
    assert_one_line_error(run("dump", target(user, "not_a_function")), "not a Python function")


def test_syntax_error_names_its_line(user):
    line = assert_one_line_error(run("dump", f"{user / 'syntax.py'}:f"), "syntax error")
    assert re.search(r"syntax\.py:5:", line), line


def test_unsupported_construct_names_file_line_column(user):
    line = assert_one_line_error(run("dump", target(user, "uses_try")), "try/except", "not supported")
    number = USER_FILE.splitlines().index("    try:") + 1
    assert f"user.py:{number}:5:" in line, line


def test_unsupported_construct_in_grad(user):
    assert_one_line_error(run("grad", target(user, "uses_try"), "--args", "np.ones(2)"), "try/except")


def test_missing_gradient_rule_names_it_and_how_to_register(user):
    line = assert_one_line_error(run("dump", target(user, "uses_nextafter")), "no gradient rule for opaque",
                                 "adsrc.register_adjoint")
    number = next(i for i, text in enumerate(USER_FILE.splitlines(), 1) if "opaque(x)" in text)
    assert f"user.py:{number}:" in line


@pytest.mark.parametrize("wrt,fragment", [
    ("q", "no parameter named 'q'"),
    ("0,,1", "bad --wrt '0,,1'"),
    ("", "bad --wrt ''"),
    ("7", "out of range"),
    ("1.5", "bad --wrt '1.5'"),
    ("x y", "bad --wrt 'x y'"),
])
def test_bad_wrt(user, wrt, fragment):
    assert_one_line_error(run("dump", target(user, "f"), "--wrt", wrt), fragment)


def test_bad_wrt_in_grad(user):
    assert_one_line_error(run("grad", target(user, "f"), "--args", "np.ones(2), 1.0", "--wrt", "z"),
                          "no parameter named 'z'")


@pytest.mark.parametrize("args,fragment", [
    ("np.ones(3", "bad --args 'np.ones(3'"),
    ("1)+(2", "expected comma-separated arguments"),
    ("undefined_name", "NameError: name 'undefined_name' is not defined"),
    ("1 // 0", "ZeroDivisionError: integer division or modulo by zero"),
    ("np.ones(2), 1.0, 2.0", "too many positional arguments"),
])
def test_bad_args(user, args, fragment):
    assert_one_line_error(run("grad", target(user, "f"), "--args", args), fragment)


def test_missing_args_option(user):
    assert_one_line_error(run("grad", target(user, "f")), "--args")


def test_integer_argument(user):
    assert_one_line_error(run("grad", target(user, "ints"), "--args", "3"), "integers")


def test_non_scalar_output(user):
    assert_one_line_error(run("grad", target(user, "vector"), "--args", "np.ones(3)"), "grad needs a scalar")


def test_exception_while_evaluating_the_gradient(user):
    line = assert_one_line_error(run("grad", target(user, "loop"), "--args", "np.ones((2, 3)), [np.ones(2)]"),
                                 "evaluating the gradient of loop raised ValueError", "matmul")
    assert "\n" not in line


def test_exception_inside_the_pullback_names_its_original_line(user):
    line = assert_one_line_error(run("grad", target(user, "uses_broken_rule"), "--args", "np.ones(3)"),
                                 "evaluating the gradient of uses_broken_rule raised ValueError")
    number = next(i for i, text in enumerate(USER_FILE.splitlines(), 1) if "broken_rule(x) * x" in text)
    assert f"user.py:{number}" in line, line


def test_exception_while_importing_the_file(user):
    assert_one_line_error(run("dump", f"{user / 'raises.py'}:f"),
                          "importing", "raises.py", "RuntimeError: broken at import")
    assert_one_line_error(run("dump", f"{user / 'exits.py'}:f"), "SystemExit")


def test_unknown_option_and_command():
    assert_one_line_error(run("dump", "examples/regression.py:f", "--bogus"), "unrecognized arguments: --bogus")
    assert_one_line_error(run("frobnicate"), "invalid choice")
    assert_one_line_error(run(), "required")


def test_traceback_option_shows_the_traceback(user):
    out = run("--traceback", "dump", target(user, "uses_try"))
    assert out.returncode == 2
    assert "Traceback" in out.stderr and "UnsupportedSyntax" in out.stderr
    out = run("dump", target(user, "uses_try"), "--traceback")
    assert out.returncode == 2 and "Traceback" in out.stderr


def test_errors_from_an_eager_environment_are_one_line_too(user):
    env = {**os.environ, "ADSRC_EAGER_UNTHUNK": "1"}
    assert_one_line_error(run("grad", target(user, "loop"), "--args", "np.ones((2, 3)), [np.ones(2)]", env=env),
                          "ValueError")


def test_an_adsrc_bug_is_reported_as_an_internal_error(user, capsys, monkeypatch, in_process):
    import adsrc.api.gradients
    from adsrc.cli import main

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(adsrc.api.gradients, "adjoint_source", broken)
    assert main(["dump", target(user, "f")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error in adsrc" in err[0] and "KeyError" in err[0]
    assert main(["grad", target(user, "f"), "--args", "np.ones(2), 1.0"]) == 1
