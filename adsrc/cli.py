"""The ``adsrc`` command line: print a function's adjoint code, or evaluate its gradient.

    adsrc dump FILE.py:FUNC [--wrt 0,1|name] [--eager] [--no-optimize] [--args EXPR]
                            [--mode reverse|forward] [--forward-sweep-only | --backward-sweep-only]
    adsrc grad FILE.py:FUNC --args EXPR [--wrt 0,1|name] [--eager]

``adsrc dump`` prints the generic adjoint, and with ``--args`` the one
specialized for those arguments' kinds, which ``grad`` runs for them; the
second line of what it prints says which.

``python -m adsrc`` is the same program. Bad input (a missing file or
function, a syntax error, an unsupported construct, a missing gradient rule,
a bad ``--wrt`` or ``--args``, an exception raised by the user's code) exits
with status 2 and one line on stderr, never a traceback; ``--traceback``
shows the full traceback instead, for bug reports.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import os
import sys
import textwrap
import traceback
from types import ModuleType
from typing import Any, Callable, NoReturn, Sequence

from .errors import AdsrcError

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


class UsageError(Exception):
    """Bad input, reported as one line on stderr with exit status 2."""


class InternalError(Exception):
    """An unexpected exception inside adsrc itself (exit status 1)."""


# -- loading the user's file ---------------------------------------------------

def load_module(path: str) -> ModuleType:
    """Import FILE.py as a module (its ``if __name__ == "__main__":`` block does not run)."""
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module_name = "adsrc_cli_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # The file may import its neighbours; they stay importable while its functions run.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        line = f"{error.lineno}:" if error.lineno else ""
        raise UsageError(f"{error.filename or path}:{line} syntax error: {error.msg}") from None
    except (Exception, SystemExit) as error:
        raise UsageError(f"importing {path} raised {_describe(error)}") from error
    return module


def load_function(target: str) -> tuple[Callable, ModuleType]:
    """The function FUNC of ``FILE.py:FUNC`` (unwrapped if decorated) and its module; FUNC may be dotted,
    ``Class.method`` (the function, with ``self`` as a parameter) or ``model.loss`` (a bound method)."""
    path, sep, func_name = target.rpartition(":")
    if not sep or not path or not func_name:
        raise UsageError(f"expected FILE.py:FUNC, got {target!r}")
    module = load_module(path)
    func: Any = module
    for depth, part in enumerate(func_name.split(".")):  # FILE.py:Class.method, FILE.py:model.loss
        owner_obj, func = func, getattr(func, part, None)
        if func is None:
            owner = path if depth == 0 else ".".join(func_name.split(".")[:depth])
            raise UsageError(f"{owner} has no {'function' if depth == 0 else 'attribute'} named {part!r}"
                             + _did_you_mean(part, owner_obj, depth == 0))
    from .api.derivative import Derivative

    if isinstance(func, Derivative):  # grad(f) defined in the file: differentiated as it is, not unwrapped
        return func, module
    return getattr(func, "__wrapped__", func), module


def _did_you_mean(name: str, owner: Any, in_module: bool) -> str:
    """``; did you mean 'func'?`` for the name of ``owner`` closest to a misspelt one, or ""."""
    if in_module:  # what FILE.py defines or imports, but modules
        names = [n for n, v in vars(owner).items() if not n.startswith("__") and not isinstance(v, ModuleType)]
    else:
        names = [n for n in dir(owner) if not n.startswith("__")]
    close = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


# -- options -----------------------------------------------------------------------

def parse_wrt(text: str | None) -> int | str | tuple:
    """``--wrt``: positions or parameter names, comma-separated; default 0."""
    if text is None:
        return 0
    items: list[int | str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise UsageError(f"bad --wrt {text!r}: expected positions or names separated by commas")
        if part.lstrip("-").isdigit():
            items.append(int(part))
        elif part.isidentifier():
            items.append(part)
        else:
            raise UsageError(f"bad --wrt {text!r}: {part!r} is neither a position nor a parameter name")
    return items[0] if len(items) == 1 else tuple(items)


_COLLECT = "__adsrc_collect_args__"


def parse_call_args(text: str, namespace: dict[str, Any]) -> tuple[tuple, dict]:
    """Evaluate ``--args``, written as the inside of a call: ``np.ones(3), 2.0, y=1.5``."""
    try:
        tree = ast.parse(f"{_COLLECT}({text}\n)", mode="eval")
    except SyntaxError as error:
        raise UsageError(f"bad --args {text!r}: {error.msg}") from None
    body = tree.body
    if not (isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.func.id == _COLLECT):
        raise UsageError(f"bad --args {text!r}: expected comma-separated arguments, as inside a call")
    scope = dict(namespace)
    scope[_COLLECT] = lambda *args, **kwargs: (args, kwargs)
    try:
        return eval(compile(tree, "<--args>", "eval"), scope)
    except Exception as error:
        raise UsageError(f"bad --args {text!r}: {_describe(error)}") from None


def _describe(error: BaseException) -> str:
    """``Name: message`` on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# -- the two halves of an adjoint ------------------------------------------------------

def split_sweeps(source: str) -> tuple[str, str]:
    """Split an adjoint module into (forward sweep, backward sweep).

    The forward sweep is the module with the nested ``def pullback`` replaced
    by a one-line placeholder comment; the backward sweep is that nested
    definition alone, dedented. Works on the text, so the ``# line N:``
    comments survive.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for adjoint in reversed(tree.body):
        if not isinstance(adjoint, ast.FunctionDef) or not adjoint.body:
            continue
        final = adjoint.body[-1]
        if not (isinstance(final, ast.Return) and isinstance(final.value, ast.Tuple)
                and len(final.value.elts) == 2 and isinstance(final.value.elts[1], ast.Name)):
            continue
        name = final.value.elts[1].id
        for stmt in adjoint.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                start, end = stmt.lineno - 1, stmt.end_lineno
                indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
                before = lines[:start]
                while before and not before[-1].strip():
                    before.pop()
                args = ", ".join(a.arg for a in stmt.args.args)
                placeholder = f"{indent}# def {name}({args}): the backward sweep (--backward-sweep-only)\n"
                forward = "".join(before + [placeholder] + lines[end:])
                backward = textwrap.dedent("".join(lines[start:end]))
                return forward, backward
    raise UsageError("this adjoint has no nested pullback to split off")


# -- commands ------------------------------------------------------------------------

def run_dump(args: argparse.Namespace) -> int:
    from .api.gradients import adjoint_source

    from .api.derivative import Derivative

    func, module = load_function(args.target)
    if isinstance(func, Derivative):
        path = args.target.rpartition(":")[0]
        raise UsageError(f"{args.target} is {func.describe()}, a derivative, whose code is generated at call time; "
                         f"dump the function itself: adsrc dump {path}:{func.root.__name__} --eager shows the "
                         f"adjoint that second order differentiates")
    wrt = parse_wrt(args.wrt)
    if args.mode == "forward":
        if args.eager or not args.optimize or args.forward_sweep_only or args.backward_sweep_only:
            raise UsageError("--mode forward takes none of --eager, --no-optimize and the sweep options")
        from .api.forward import jvp_source

        source = _compiling(lambda: jvp_source(func, wrt))
        print(source, end="" if source.endswith("\n") else "\n")
        return 0
    example = None
    if args.args is not None:
        if not args.optimize:
            raise UsageError("--args shows the adjoint specialized for those arguments, made from the optimized "
                             "one: leave out --no-optimize")
        import numpy as np

        namespace = dict(vars(module))
        namespace.setdefault("np", np)
        call_args, call_kwargs = parse_call_args(args.args, namespace)
        if call_kwargs:
            raise UsageError("--args for dump takes the arguments by position")
        example = call_args
    source = _compiling(lambda: adjoint_source(func, wrt, eager=args.eager, optimize=args.optimize, args=example))
    if args.forward_sweep_only or args.backward_sweep_only:
        forward, backward = split_sweeps(source)
        source = forward if args.forward_sweep_only else backward
    print(source, end="" if source.endswith("\n") else "\n")
    return 0


def run_grad(args: argparse.Namespace) -> int:

    import numpy as np

    from .api.arguments import parameter_names, positions as wrt_positions
    from .api.gradients import adjoint_source, value_and_grad
    from .config import resolve_eager

    from .api.derivative import Derivative

    func, module = load_function(args.target)
    plain = not isinstance(func, Derivative)
    wrt = parse_wrt(args.wrt)
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    positions, _ = wrt_positions(func if plain else func.root, wrt)
    eager = True if args.eager else None
    if plain:  # compile first, so that an adsrc bug is told apart from an error in the user's code
        _compiling(lambda: adjoint_source(func, wrt, eager=resolve_eager(eager)))
    namespace = dict(vars(module))
    namespace.setdefault("np", np)
    call_args, call_kwargs = parse_call_args(args.args, namespace)
    try:
        value, grads = value_and_grad(func, wrt if plain else positions, eager=eager)(*call_args, **call_kwargs)
    except AdsrcError:
        raise
    except Exception as error:
        notes = "; ".join(" ".join(n.split()) for n in getattr(error, "__notes__", []))
        where = f" ({notes})" if notes else ""
        raise UsageError(f"evaluating the gradient of {func.__name__} raised {_describe(error)}{where}") from error
    names = parameter_names(func if plain else func.root)
    _show("value", value)
    label = getattr(func, "__name__", "f") if plain else f"[{func.describe()}]"
    for i, g in zip(positions, grads):
        _show(f"d{label}/d{names[i]}", g)
    return 0


def _show(label: str, value: Any) -> None:
    import numpy as np

    from .values.pytrees import attributes, holds_floats, is_object

    if is_object(value):  # a model's gradient: one block per attribute that holds floats
        for name, part in attributes(value).items():
            if holds_floats(part):
                _show(f"{label}.{name}", part)
        return

    text = np.array2string(value) if isinstance(value, np.ndarray) else str(value)
    print(f"{label} =\n{text}" if "\n" in text else f"{label} = {text}")


def _compiling(compile_: Callable[[], Any]) -> Any:
    """Run the compiler; an exception other than an AdsrcError is a bug in adsrc."""
    try:
        return compile_()
    except AdsrcError:
        raise
    except Exception as error:
        raise InternalError(f"internal error in adsrc while compiling: {_describe(error)} "
                            f"(run with --traceback for details and report it)") from error


# -- the parser ---------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``adsrc: error: ... (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_TARGET_HELP = "the Python file and the function in it, e.g. examples/regression.py:f"
_WRT_HELP = ("the parameters to differentiate with respect to: positions or names, "
             "comma-separated, e.g. 0,1 or w (default: 0, the first parameter)")
_TRACEBACK_HELP = "on an error, show the full Python traceback instead of one line (for bug reports)"


def _add_common(command: argparse.ArgumentParser) -> None:
    command.add_argument("target", metavar="FILE.py:FUNC", help=_TARGET_HELP)
    command.add_argument("--wrt", metavar="0,1|NAME", help=_WRT_HELP)
    # Also accepted after the command; SUPPRESS keeps the top-level value otherwise.
    command.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS, help=_TRACEBACK_HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="adsrc", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill("Source-transformation automatic differentiation for Python and NumPy: "
                                  "print the adjoint code adsrc generates for a function, or evaluate its "
                                  "gradient."))
    parser.add_argument("--traceback", action="store_true", help=_TRACEBACK_HELP)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    dump = commands.add_parser(
        "dump", help="print the generated adjoint code of FILE.py:FUNC",
        description="Print the adjoint module adsrc generates for FILE.py:FUNC: a forward sweep "
                    "that runs the function and keeps what the backward sweep needs, and a nested "
                    "pullback that computes the gradients. The module's own `if __name__ == "
                    "\"__main__\":` block does not run.")
    _add_common(dump)
    dump.add_argument("--eager", action="store_true",
                      help="show the eager-unthunking form, where every contribution is added at once, "
                           "instead of the lazy one (the default)")
    dump.add_argument("--no-optimize", dest="optimize", action="store_false",
                      help="show the raw output of the reverse pass, before the optimizer removes dead "
                           "code, zero contributions and unread tape entries")
    dump.add_argument("--args", metavar="EXPR", default=None,
                      help="example arguments, as inside a call (e.g. '0.3, 1000' or 'np.ones((2, 10)), 2.0'): "
                           "show the adjoint specialized for their types, dtypes and shapes, which grad runs "
                           "for such arguments")
    dump.add_argument("--mode", choices=("reverse", "forward"), default="reverse",
                      help="reverse (default): the adjoint; forward: the forward-mode (JVP) code, "
                           "tangents beside values")
    sweep = dump.add_mutually_exclusive_group()
    sweep.add_argument("--forward-sweep-only", action="store_true",
                       help="print only the forward sweep: the module without its nested pullback")
    sweep.add_argument("--backward-sweep-only", action="store_true",
                       help="print only the backward sweep: the nested `def pullback` and its body")
    dump.set_defaults(run=run_dump)

    grad = commands.add_parser(
        "grad", help="evaluate the gradient of FILE.py:FUNC at given arguments",
        description="Evaluate FUNC and its gradient at the arguments given by --args, and print "
                    "both: a quick check from the shell.")
    _add_common(grad)
    grad.add_argument("--args", required=True, metavar="EXPR",
                      help="the arguments, written as inside a call, e.g. \"np.ones(3), 2.0\" or "
                           "\"np.eye(2), y=1.5\"; evaluated with the file's globals and numpy as np. "
                           "Write --args=EXPR when EXPR starts with '-'")
    grad.add_argument("--eager", action="store_true",
                      help="use eager unthunking instead of lazy accumulation (both give the same "
                           "gradient; default: lazy unless ADSRC_EAGER_UNTHUNK=1)")
    grad.set_defaults(run=run_grad)
    # Every command's options, in the top-level help too; `adsrc COMMAND --help` says what each does.
    usages = "\n".join(command.format_usage().strip().replace("usage: ", "  ", 1) for command in (dump, grad))
    parser.epilog = (f"commands and their options (adsrc COMMAND --help explains each):\n{usages}\n\n"
                     + textwrap.fill("Bad input exits with status 2 and one line on stderr. "
                                     "See docs/generated-code.md for how to read the generated code."))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (``adsrc dump ... | head``): not an error worth a traceback.
        sys.stdout = open(os.devnull, "w")
        return 0
    except (UsageError, AdsrcError, InternalError) as error:
        if args.traceback:
            traceback.print_exception(error)
        else:
            message = " ".join(str(error).split())
            print(f"adsrc: error: {message}", file=sys.stderr)
        return EXIT_INTERNAL if isinstance(error, InternalError) else EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
