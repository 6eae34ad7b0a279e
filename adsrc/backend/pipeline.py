"""The pipeline and its cache: parse, fence, desugar, activity, ANF, reverse, codegen.

``get_adjoint(f, wrt, eager)`` returns the compiled adjoint of ``f`` with
respect to the parameter positions ``wrt``, compiling it on first use. The
cache is keyed by (function, code object, wrt, mode). An entry is reused only
while every global and closure value the function reads is still the same
object, so redefining a function, or rebinding a global it calls, gives a
fresh adjoint rather than a stale one.

Running out of Python stack while compiling (the passes recurse over the
syntax tree) is reported as UnsupportedSyntax, not as a RecursionError from
inside the compiler.

Compiling an adjoint also compiles the adjoints of the user functions it calls
(recursion stops at a function already being compiled), so an unsupported
construct or a missing rule in a callee is reported before any code runs,
not halfway through the forward sweep.
"""
from __future__ import annotations

import inspect
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from .. import rules  # noqa: F401  (registers the built-in rules)
from ..frontend.activity import analyze
from ..frontend.anf import CalleeResolver, local_names, to_anf
from .codegen import load, module_source
from ..frontend.desugar import desugar
from ..errors import UnsupportedSyntax
from ..frontend.fence import check_syntax
from ..ir.naming import Namer
from ..optimize import Context
from ..optimize import optimize as run_passes
from ..frontend.parse import _MISSING, Parsed, closure_values, parse_function, resolve_outside
from ..transforms.reverse import Reverse

_RUNTIME = ["Thunk", "accumulate", "unthunk", "zero", "part", "drop_last", "with_item", "rebinding",
            "rule_vjp", "adjoint_of"]


@dataclass
class Adjoint:
    """A compiled adjoint: ``function(*args) -> (value, pullback)`` and its source."""

    function: Callable
    source: str
    params: list[str]
    wrt: tuple[int, ...]
    eager: bool
    reads: list[tuple[str, Any]] = field(default_factory=list)

    def current(self, func: Callable, closure: dict[str, Any]) -> bool:
        """True while every outside value the function read at compile time is unchanged."""
        return all(resolve_outside(func, closure, key) is obj for key, obj in self.reads)


def _free_names(node: gast.AST, locals_: set[str]) -> list[str]:
    seen: dict[str, None] = {}
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and child.id not in locals_:
            seen[child.id] = None
    return list(seen)


def compile_adjoint(func: Callable, wrt: tuple[int, ...], eager: bool, optimize: bool = True) -> Adjoint:
    try:
        return _compile_adjoint(func, wrt, eager, optimize)
    except RecursionError:
        # The passes recurse over the syntax tree; Python's own parser accepts deeper nesting.
        code = getattr(func, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(func)
        raise UnsupportedSyntax(
            "code nested too deeply for adsrc's passes (a very long chain like x + x + ... + x, "
            "or the compile began deep inside a recursion)", where,
            "split the expression into several statements") from None


def _compile_adjoint(func: Callable, wrt: tuple[int, ...], eager: bool, optimize: bool) -> Adjoint:
    parsed: Parsed = parse_function(func)
    check_syntax(parsed)
    node = parsed.node
    params = [a.id for a in node.args.args + node.args.kwonlyargs]
    wrt_names = [params[i] for i in wrt]
    user_names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(params)
    namer = Namer(user_names)
    free = _free_names(node, local_names(node))
    runtime = {r: namer.fresh(r) for r in _RUNTIME}
    node = desugar(parsed, namer, runtime)
    locals_ = local_names(node)
    anf = CalleeResolver(parsed, locals_)
    activity = analyze(node, set(wrt_names), anf.resolve)
    node = to_anf(parsed, node, namer, activity, runtime)
    locals_ = local_names(node)
    activity = analyze(node, set(wrt_names), anf.resolve)
    reverse = Reverse(parsed, namer, activity, eager, wrt_names, runtime, locals_)
    adjoint_name = namer.fresh(f"{func.__name__}_adjoint".replace("<lambda>", "lambda"))
    function = reverse.function(node, adjoint_name)
    if optimize:
        context = Context(zero=runtime["zero"], accumulate=runtime["accumulate"], unthunk=runtime["unthunk"],
                          tape=reverse.tape, thunk=runtime["Thunk"], part=runtime["part"],
                          drop_last=runtime["drop_last"], pure_calls={runtime["unthunk"], runtime["Thunk"],
                                                         *reverse.vjp_names.values()})
        run_passes(function, context)
    used = {n.id for n in gast.walk(function) if isinstance(n, gast.Name)} | \
        {r for r in ("rule_vjp", "adjoint_of") if any(runtime[r] + "(" in line for line in reverse.header)}
    imports = ", ".join(f"{r} as {n}" if r != n else r for r, n in runtime.items() if n in used or r in used)
    reads = [(key, parsed.resolve(key)) for key in free]
    reads = [(key, obj) for key, obj in reads if obj is not _MISSING]
    header = outside_imports(reads, parsed)
    header += [f"from adsrc.runtime import {imports}"] if imports else []
    header += reverse.header
    mode = ("eager unthunking" if eager else "lazy accumulation") + ("" if optimize else ", not optimized")
    title = (f"Adjoint of {func.__name__} ({parsed.filename}:{parsed.first_line}) with respect to "
             f"{', '.join(wrt_names) or 'nothing'}; {mode}. Generated by adsrc.")
    source = module_source(header, function, title)
    namespace: dict[str, Any] = {"__name__": f"adsrc_adjoint_{func.__name__}", **dict(reads)}
    compiled = load(source, f"{func.__name__} ({parsed.filename}:{parsed.first_line})", namespace,
                    adjoint_name, parsed.filename)
    _compile_callees((func, wrt, eager), namespace)
    return Adjoint(compiled, source, params, wrt, eager, reads)


_compiling = threading.local()


def compile_callees(own: tuple, namespace: dict[str, Any], stub: type,
                    key: Callable[[Any], tuple], compile_one: Callable[[Any], Any]) -> None:
    """Compile now what the generated code would compile at its first call of a callee.

    An unsupported construct or a missing rule in a helper is then reported
    before any of the caller's code runs. ``stub`` is the lazily compiling
    callable the generated module holds (runtime.adjoint_of, forward_runtime.jvp_of);
    functions already being compiled up the stack (recursion) are skipped.
    """
    busy: set = _compiling.__dict__.setdefault("keys", set())
    fresh = own not in busy
    busy.add(own)
    try:
        for value in list(namespace.values()):
            if isinstance(value, stub) and key(value) not in busy:
                compile_one(value)
    finally:
        if fresh:
            busy.discard(own)


def _compile_callees(own: tuple, namespace: dict[str, Any]) -> None:
    from ..runtime import adjoint_of

    compile_callees(own, namespace, adjoint_of, lambda v: (v.func, v.wrt, v.eager),
                    lambda v: get_adjoint(v.func, v.wrt, v.eager))


def outside_imports(reads: list[tuple[str, Any]], parsed: Parsed) -> list[str]:
    """Header lines that bind the outside names the function reads, so that the
    printed module runs on its own: imports where the object can be imported,
    a comment naming anything else (a closure value, a global of ``__main__``)."""
    import builtins
    import sys

    lines = []
    for key, obj in reads:
        if getattr(builtins, key, _MISSING) is obj:
            continue
        if inspect.ismodule(obj):
            module = obj.__name__
            lines.append(f"import {module}" if module == key else f"import {module} as {key}")
            continue
        module = getattr(obj, "__module__", None)
        name = getattr(obj, "__name__", None)
        home = sys.modules.get(module) if isinstance(module, str) else None
        if home is not None and module != "__main__" and name and getattr(home, name, None) is obj:
            lines.append(f"from {module} import {name}" + ("" if name == key else f" as {key}"))
            continue
        own = getattr(parsed.func, "__module__", None)
        if own not in (None, "__main__") and key not in parsed.closure \
                and getattr(sys.modules.get(own), key, _MISSING) is obj:
            lines.append(f"from {own} import {key}")
            continue
        source = "a closure value" if key in parsed.closure else f"a global of {parsed.filename}"
        lines.append(f"# {key}: {source} ({type(obj).__name__}), bound by adsrc when it runs this module")
    return lines


class CompileCache:
    """Compiled code per (function, its code object, options), thread-safe.

    An entry is reused only while ``entry.current(func, closure)`` holds: every
    global and closure value the function read at compile time is still the
    same object. Redefining a function or rebinding what it reads recompiles.
    """

    def __init__(self) -> None:
        self._entries: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
        self._lock = threading.RLock()

    def get(self, func: Callable, options: tuple, build: Callable[[], Any]) -> Any:
        try:
            entries = self._entries.get(func)
        except TypeError:
            entries = None
        key = (getattr(func, "__code__", None), *options)
        closure = closure_values(func) if getattr(func, "__closure__", None) else {}
        if entries is not None:
            entry = entries.get(key)
            if entry is not None and entry.current(func, closure):
                return entry
        with self._lock:
            entry = build()
            try:
                self._entries.setdefault(func, {})[key] = entry
            except TypeError:
                pass
        return entry

    def entries(self, func: Callable) -> dict:
        """The compiled entries kept for ``func`` (for tests and debugging)."""
        return self._entries.get(func, {})

    def forget(self, func: Callable) -> None:
        self._entries.pop(func, None)


_cache = CompileCache()


def get_adjoint(func: Callable, wrt: tuple[int, ...], eager: bool, optimize: bool = True) -> Adjoint:
    """The cached adjoint of ``func``, recompiled if anything it read has changed."""
    return _cache.get(func, (wrt, eager, optimize), lambda: compile_adjoint(func, wrt, eager, optimize))
