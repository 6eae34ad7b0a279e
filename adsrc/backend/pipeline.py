"""The one compile path: ``compile(func, wrt, mode)`` for reverse and forward mode.

    parse -> fence -> desugar (+ inline) -> activity -> ANF -> activity
          -> Reverse (adjoint) or Forward (JVP) -> optimize (reverse) -> codegen -> link callees

Both modes share the front end and the back end; they differ in the
transform, in what "active" means (forward mode counts every varied variable
as useful) and in the optimizer, which only the adjoint's regular form needs.
Generated modules of both modes import from one runtime module,
``adsrc.runtime``, whose names are reserved once per module (:data:`RUNTIME_NAMES`).

``compile`` is cached (cache.py): an entry is reused only while every global,
closure value and default the function read is the same object, and while
no rule was registered since. Compiling a function also compiles the
derivatives of the user functions it calls (recursion stops at one already
being compiled), so an unsupported construct or a missing rule in a callee
is reported before any code runs.

Running out of Python stack while compiling (the passes recurse over the
syntax tree) is reported as UnsupportedSyntax, not as a RecursionError.
"""
from __future__ import annotations

import builtins
import contextlib
import copy
import functools
import gc
import inspect
import operator
import sys
import threading
import weakref
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import AdsrcError, UnsupportedSyntax
from ..frontend.activity import analyze
from ..frontend.anf import to_anf
from ..frontend.callees import CalleeResolver, local_names
from ..frontend.desugar import desugar
from ..frontend.assignments import lower_assignments
from ..frontend.aliasing import Aliasing
from ..frontend.effects import check_effects
from ..frontend.fence import check_syntax
from ..frontend.view_writes import lower_view_writes
from ..frontend.generators import lower_generators
from ..frontend.module_functions import inline_module_functions
from ..frontend.maps import rewrite_maps
from ..frontend.partials import rewrite_partials
from ..frontend.receivers import ReceiverKinds
from ..frontend.parse import _MISSING, Parsed, bound_parts, parse_function, resolve_outside
from ..frontend.writes import refuse_updates_seen_through_views, write_aliases
from ..ir import annotations as anno
from ..ir.build import call, comment, const, copy_tree, located
from ..values.arrays import receives
from ..ir.dataflow import names
from ..ir.naming import Namer, free_names
from ..ir.stopwatch import phase
from ..optimize import Context
from ..optimize import copy_adjoint, finish, optimize as run_passes
from ..rules import registry
from ..rules.checkpoint import compiled_as, compiled_with
from ..rules.closures import lifted_from
from ..transforms.forward import Forward
from ..transforms.reverse import Reverse
from .cache import CompileCache
from .codegen import load, module_source, original_lines

# What generated code imports from adsrc.runtime, in both modes (runtime.__all__ is this list).
RUNTIME_NAMES = ("Thunk", "Stack", "OuterStack", "accumulate", "unthunk", "zero", "part", "drop_last", "rebinding",
                 "written_part", "cleared", "owned", "cleared_in_place", "added_into", "drop_last_in_place",
                 "written_tangent", "detached", "loop_length", "unpacked", "zipped_star", "zip_star",
                 "TangentTuple", "TangentList", "TangentDict", "append_tangent",
                 "rule_vjp", "rule_jvp", "adjoint_of", "jvp_of", "adjoint_of_call", "jvp_of_call", "index_concatenate",
                 "ufunc_at", "dict_with", "local_function", "is_array", "is_number", "is_dict",
                 "written_arguments", "in_place", "updated_in_place")


@dataclass(frozen=True)
class Mode:
    """What to generate.

    ``direction`` is ``"reverse"`` (an adjoint: ``f(*args) -> (value, pullback)``)
    or ``"forward"`` (a JVP: ``f(*args, *tangents) -> (value, tangent)``);
    ``eager`` picks eager accumulation in an adjoint; ``optimize=False``
    shows an adjoint as the reverse pass emitted it.
    """

    direction: str = "reverse"
    eager: bool = False
    optimize: bool = True

    def __post_init__(self) -> None:
        if self.direction not in ("reverse", "forward"):
            raise ValueError(f"direction must be 'reverse' or 'forward', not {self.direction!r}")

    @property
    def forward(self) -> bool:
        return self.direction == "forward"

    def describe(self) -> str:
        if self.forward:
            return "forward mode (JVP)"
        return ("eager unthunking" if self.eager else "lazy accumulation") + ("" if self.optimize else ", not optimized")


REVERSE = Mode("reverse")
EAGER = Mode("reverse", eager=True)
FORWARD = Mode("forward")


_building = threading.RLock()  # a deferred generic adjoint is built once


@dataclass
class Compiled:
    """A compiled derivative: the live function, its source, and what it was compiled against.

    Reverse: ``function(*args) -> (value, pullback)``, ``pullback(d_value)``
    returning one gradient per ``wrt`` position. Forward: ``function(*args,
    *tangents_of_wrt) -> (value, tangent)``.
    """

    function: Callable
    source: str
    params: list[str]
    wrt: tuple[int, ...]
    mode: Mode
    reads: list[tuple[str, Any]] = field(default_factory=list)
    defaults: tuple = ()
    rules_version: int = 0
    attributes: list[tuple[Any, Callable, Any]] = field(default_factory=list)  # (root, getter, object)
    generic: Any = None  # an optimized adjoint's Generic, for backend/specialized.py
    specialized: dict = field(default_factory=dict)  # signature -> Compiled or None (backend/specialized.py)
    # parameters whose given arrays the function writes: name -> (kind, returned, where) (frontend/fence.py)
    written: dict = field(default_factory=dict)

    def defer(self, build: Callable[[], tuple[str, Callable]]) -> None:
        """``function`` and ``source`` made by ``build()`` when either is first read."""
        del self.function, self.source
        self.__dict__["_build"] = build

    def __getattr__(self, name: str) -> Any:
        # Only for an attribute not set: a deferred function and source (see ``defer``).
        if name not in ("function", "source") or "_build" not in self.__dict__:
            raise AttributeError(name)
        with _building:
            build = self.__dict__.get("_build")
            if build is not None:  # not built by another thread meanwhile
                self.source, self.function = build()
                del self.__dict__["_build"]
        return self.__dict__[name]

    def same_defaults(self, func: Callable) -> bool:
        """The defaults are the objects compiled against (``f.__defaults__ = ...`` makes a new tuple)."""
        positional, keywords = self.defaults
        if getattr(func, "__defaults__", None) is not positional:
            return False
        current = getattr(func, "__kwdefaults__", None)
        return current is None and not keywords or current is not None and _same(tuple(current.values()), keywords)

    @property
    def eager(self) -> bool:
        return self.mode.eager

    def current(self, func: Callable, closure: dict[str, Any]) -> bool:
        """True while everything read at compile time is unchanged: outside values, defaults, the rules."""
        if self.rules_version != registry.version() or not self.same_defaults(func):
            return False
        if not all(resolve_outside(func, closure, key) is obj for key, obj in self.reads):
            return False
        # Each chain's root is one of the reads, just checked to be the same object: look down from it.
        try:
            return all(get(root) is obj for root, get, obj in self.attributes)
        except Exception:  # an attribute that is gone
            return False

    def why_stale(self, func: Callable, closure: dict[str, Any]) -> str | None:
        """What ``current`` found changed, in words (None if nothing): the cause of a compile-cache miss."""
        if self.rules_version != registry.version():
            return "a gradient rule was registered or replaced since it was compiled"
        if not self.same_defaults(func):
            return "its default argument values are other objects than when it was compiled"
        for key, obj in self.reads:
            now = resolve_outside(func, closure, key)
            if now is not obj:
                return (f"'{key}', which it reads from outside, is another object than when it was compiled "
                        f"({type(obj).__name__} then, {type(now).__name__} now)")
        for root, get, obj in self.attributes:
            try:
                same = get(root) is obj
            except Exception:
                same = False
            if not same:
                path = getattr(get, "path", None) or get.__reduce__()[1][0]  # an attrgetter's
                return f"the dotted name '.{path}' it reads names another object than when it was compiled"
        return None


def _resolve_chain(func: Callable, closure: dict[str, Any], chain: tuple[str, ...]) -> Any:
    """What ``a.b.c`` means inside ``func`` now (_MISSING if it cannot be resolved)."""
    obj = resolve_outside(func, closure, chain[0])
    for attr in chain[1:]:
        try:
            obj = getattr(obj, attr)
        except Exception:
            return _MISSING
    return obj


def _attribute_chains(node: gast.AST, free: list[str], func: Callable, closure: dict[str, Any]) -> list:
    """The dotted names rooted outside the function (``helpers.act``, ``np.linalg.norm``) that name a
    function, class or module, with what they name now: compiling resolved them, so rebinding one
    (``helpers.act = other``, ``importlib.reload(helpers)``) must compile again. Data attributes are
    read when the code runs and need no check."""
    chains: dict[tuple[str, ...], Any] = {}
    for child in gast.walk(node):
        if not isinstance(child, gast.Attribute) or not isinstance(child.ctx, gast.Load):
            continue
        parts, root = [], child
        while isinstance(root, gast.Attribute):
            parts.append(root.attr)
            root = root.value
        if isinstance(root, gast.Name) and root.id in free:
            chain = (root.id, *reversed(parts))
            obj = _resolve_chain(func, closure, chain)
            if obj is not _MISSING and (callable(obj) or inspect.ismodule(obj)):
                chains[chain] = obj
    checks = []
    for chain, obj in chains.items():
        root = resolve_outside(func, closure, chain[0])
        owner = _bound_to(obj)
        if owner is None:
            checks.append((root, operator.attrgetter(".".join(chain[1:])), obj))
            continue
        # A bound method (``rs.randn``, ``model.energy``) is a new object at each read: check what it
        # is made of instead, the object it is bound to and the function it binds.
        if len(chain) > 2:
            checks.append((root, operator.attrgetter(".".join(chain[1:-1])), owner))
        checks.append((root, _BoundFunction(".".join(chain[1:])), _bound_function(obj)))
    return checks


def _bound_to(obj: Any) -> Any:
    """The object a bound method is bound to (not a module: ``math.sin`` is a function), or None."""
    owner = getattr(obj, "__self__", None)
    if owner is None or inspect.ismodule(owner) or not (inspect.ismethod(obj) or inspect.isbuiltin(obj)):
        return None
    return owner


def _bound_function(method: Any) -> Any:
    """What a bound method calls: its function, or for a builtin method its class's descriptor; an
    object that is not a bound method (a function set on the instance) stands for itself."""
    if inspect.ismethod(method):
        return method.__func__
    owner = _bound_to(method)
    if owner is None:
        return method
    return inspect.getattr_static(owner if isinstance(owner, type) else type(owner), method.__name__, method)


class _BoundFunction:
    """A getter of the function a dotted name's bound method binds (``_bound_function``)."""

    __slots__ = ("_get", "path")

    def __init__(self, path: str):
        self._get = operator.attrgetter(path)
        self.path = path

    def __call__(self, root: Any) -> Any:
        return _bound_function(self._get(root))


def _defaults(func: Callable) -> tuple:
    """The positional defaults tuple itself, and the keyword-only defaults' values."""
    kwdefaults = getattr(func, "__kwdefaults__", None) or {}
    return getattr(func, "__defaults__", None), tuple(kwdefaults.values())


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


@contextlib.contextmanager
def collection_paused():
    """No cyclic garbage collection while compiling: the passes make and drop many small syntax nodes
    (no cycles among them), and the collections that triggers scan the whole heap again and again
    (about a tenth of the first call of straight200, measured). Collected as usual afterwards."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def compile_uncached(func: Callable, wrt: tuple[int, ...], mode: Mode, lifted: bool = False,
                     general: bool = False) -> Compiled:
    """Run the pipeline once, without the cache."""
    try:
        with collection_paused():
            try:
                return _compile(func, wrt, mode, lifted, general)
            except AdsrcError as error:
                assumed = getattr(error, "_adsrc_assumed", None)
                if general or not assumed:
                    raise
                # Refused as compiled for what the parameters were assumed to be (``model`` in
                # ``model.items(w)`` a dict): arguments that are that are refused on entry, before anything
                # runs; others run the derivative that assumes nothing.
                try:
                    result = _compile(func, wrt, mode, lifted, True)
                except AdsrcError:
                    raise error from None
                return _refusing(result, error, assumed)
    except RecursionError:
        # The passes recurse over the syntax tree; Python's own parser accepts deeper nesting.
        raise _too_deep(_where(func)) from None


def _refusing(general: Compiled, error: AdsrcError, assumed: list[tuple[int, str]]) -> Compiled:
    """``general``, for arguments that are not what a refused compile assumed; ``error`` for those that are."""
    run = general.function

    def refuse_or_run(*args: Any) -> Any:
        if all(receives(kind, args[i]) for i, kind in assumed if i < len(args)):
            raise error
        return run(*args)

    return dataclasses.replace(general, function=refuse_or_run, generic=None, specialized={})


def _where(func: Callable) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else repr(func)


def _too_deep(where: str) -> UnsupportedSyntax:
    return UnsupportedSyntax(
        "code nested too deeply for adsrc's passes (a very long chain like x + x + ... + x, "
        "or the compile began deep inside a recursion)", where,
        "split the expression into several statements")


def _compile(func: Callable, wrt: tuple[int, ...], mode: Mode, lifted: bool = False,
             general: bool = False) -> Compiled:
    version = registry.version()
    with phase("parse and check"):
        parsed: Parsed = parse_function(func, lifted)
        lower_generators(parsed, Namer({n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}))
        inline_module_functions(parsed, Namer({n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}))
        aliasing = Aliasing(parsed)
        lower_assignments(parsed, lambda value: aliasing.makes_fresh_array(value) or aliasing.makes_fresh_list(value))
        lower_view_writes(parsed, aliasing.makes_fresh_list, aliasing.makes_fresh_array)  # v = y[1:]; v[0] = e: y[1]
        check_syntax(parsed)
        check_effects(parsed)  # the user functions it calls change nothing they are given
        refuse_updates_seen_through_views(parsed)
    node = parsed.node
    params = [a.id for a in node.args.args + node.args.kwonlyargs]
    wrt_names = [params[i] for i in wrt]
    namer = Namer({n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(params))
    free = [key for key in free_names(node) if key not in local_names(node)]
    free += [key for key in parsed.copied if key not in free]  # functions copied in: what the code means
    runtime = {r: namer.fresh(r) for r in RUNTIME_NAMES}
    attributes = _attribute_chains(node, free, func, parsed.closure)  # before the passes rewrite the tree
    attributes += parsed.checked  # a copied function's defaults and outside names

    # The front end, shared by both modes.
    with phase("front end"):
        rewrite_partials(parsed, namer, node, local_names(node))
        rewrite_maps(parsed, namer, node, local_names(node))
        node = desugar(parsed, namer, runtime)
    # What methods and attributes are made on (x.sum() of an array, or a user object's own method):
    # parameters are assumed to be what the function uses them as, unless compiled ``general``.
    receivers = ReceiverKinds(node, parsed.resolve, assume=not general)
    try:
        return _transformed(func, wrt, mode, lifted, parsed, node, namer, runtime, params, wrt_names, free,
                            attributes, version, receivers, general)
    except AdsrcError as error:
        # compile_uncached tries again without them: (the parameters' positions, their kinds)
        error._adsrc_assumed = [(params.index(p), kind) for p, kind in receivers.assumed.items()]
        raise


def _transformed(func: Callable, wrt: tuple[int, ...], mode: Mode, lifted: bool, parsed: Parsed,
                 node: gast.FunctionDef, namer: Namer, runtime: dict[str, str], params: list[str],
                 wrt_names: list[str], free: list[str], attributes: list, version: int,
                 receivers: ReceiverKinds, general: bool) -> Compiled:
    """The rest of ``_compile``: ANF, the transform and the back end."""
    with phase("ANF and activity"):
        resolver = CalleeResolver(parsed, local_names(node), receivers)
        activity = analyze(node, set(wrt_names), resolver.resolve, mode.forward, resolver.inert_attribute)
        node = to_anf(parsed, node, namer, activity, runtime, receivers)
        after = ReceiverKinds(node, parsed.resolve, assume=not general)
        resolver = CalleeResolver(parsed, local_names(node), after)
        activity = analyze(node, set(wrt_names), resolver.resolve, mode.forward, resolver.inert_attribute)
    assumed = {**receivers.assumed, **after.assumed}
    aliases = write_aliases(node, parsed.where, parsed)

    written = {p: how for p, how in anno.get(parsed.node, anno.WRITTEN_PARAMS, {}).items() if p in params}

    # The transform.
    label = func.__name__.replace("<lambda>", "lambda").strip("_") or "function"
    unfinished = None  # the optimized adjoint before its last passes, kept to specialize
    if mode.forward:
        transform = Forward(parsed, namer, activity, wrt_names, runtime)
        transform.receivers = after
        generated_name = namer.fresh(f"{label}_jvp")
        function = transform.function(node, generated_name)
        _check_written(function, written, runtime, func)
        title = (f"Forward mode (JVP) of {func.__name__} ({parsed.filename}:{parsed.first_line}) with respect to "
                 f"{', '.join(wrt_names) or 'nothing'}; a variable v carries its tangent in dv. Generated by adsrc.")
    else:
        transform = Reverse(parsed, namer, activity, mode.eager, wrt_names, runtime, local_names(node), aliases)
        generated_name = namer.fresh(f"{label}_adjoint")
        with phase("reverse transform"):
            function = transform.function(node, generated_name)
        _check_written(function, written, runtime, func)
        context = None
        if mode.optimize:
            context = Context(
                accumulation=transform.acc, tape=transform.tape, part=runtime["part"], drop_last=runtime["drop_last"],
                pure_calls={runtime["unthunk"], runtime["Thunk"], runtime["written_part"], runtime["cleared"],
                            *transform.vjp_names.values()},
                write_aliases=aliases, runtime=runtime,
                vjps={label: vjp for vjp, label in transform.vjp_names.items()})
            run_passes(function, context, final=False)
            unfinished = function  # kept to specialize (backend/specialized.py); finished when first run
        title = (f"Adjoint of {func.__name__} ({parsed.filename}:{parsed.first_line}) with respect to "
                 f"{', '.join(wrt_names) or 'nothing'}; {mode.describe()}. Generated by adsrc.\n"
                 f"# {(generic_note if mode.optimize else raw_note)(func.__name__)}")

    # The back end: the module's source, compiled, linked to its callees.
    reads = [(key, parsed.resolve(key)) for key in free]
    reads = [(key, obj) for key, obj in reads if obj is not _MISSING]
    module = Module(outside_imports(reads, parsed), func.__name__, parsed.filename, parsed.first_line, runtime,
                    list(transform.header), title, generated_name, reads, mode,
                    {k: v for k, v in parsed.generated.items() if k not in runtime.values()})
    if assumed:  # checked on entry: arguments of other types run the derivative compiled without assuming
        variant = namer.fresh(f"{label}_general")
        module.generated[variant] = GeneralDerivative(func, wrt, mode, lifted)
        module.guard = _guard(assumed, runtime, variant, [a.id for a in function.args.args])
    if unfinished is None:
        with phase("assemble"):
            source, compiled = module.assemble(function)
    _compile_callees((func, wrt, mode), transform.callees, mode)
    reads = [(key, obj) for key, obj in reads if key not in parsed.helpers]  # what the cache checks
    if unfinished is None:
        return Compiled(compiled, source, params, wrt, mode, reads, _defaults(func), version, attributes,
                        written=written)
    # The generic adjoint is finished and loaded when first read: a call with argument kinds runs the
    # adjoint specialized for them (backend/specialized.py), and a long function need not pay for both.
    result = Compiled(None, "", params, wrt, mode, reads, _defaults(func), version, attributes, written=written)
    result.generic = Generic(unfinished, module, namer, dict(transform.vjp_names), transform.tape, context)
    result.defer(functools.partial(_finished, result.generic, _where(func)))
    return result


def _check_written(function: gast.FunctionDef, written: dict, runtime: dict[str, str], func: Callable) -> None:
    """A derivative that writes into an array it was given begins by refusing a call adsrc did not
    prepare (rules/given.py)."""
    if written:
        first = min(written.values(), key=lambda how: how[2])[2]
        check = gast.Expr(value=call(runtime["written_arguments"], const(func.__qualname__), const(first)))
        function.body.insert(0, located([check], function.body[0])[0])


# The second line of an adjoint's title says which adjoint grad runs (backend/specialized.py says it of a
# specialized one; api/gradients.py's adjoint_source of a generic one asked for arguments it runs for).
def generic_note(name: str) -> str:
    return (f"The generic form. Where that changes anything, grad({name}) of floats, ints or NumPy arrays (or lists "
            f"of them) runs it specialized for their kinds: see adjoint_source({name}, args=...) or adsrc dump --args.")


def raw_note(name: str) -> str:
    return (f"Not optimized: grad({name}) runs the optimized adjoint, specialized for its arguments' kinds where "
            f"that changes anything.")


def _finished(generic: "Generic", where: str) -> tuple[str, Callable]:
    """The generic adjoint's source and live function: its last passes (optimize.finish) on a copy of
    the kept adjoint, which stays as it is to be specialized."""
    try:
        with collection_paused(), phase("finish the generic adjoint"):
            function = copy_adjoint(generic.function)
            finish(function, copy.copy(generic.context))
            return generic.module.assemble(function)
    except RecursionError:
        raise _too_deep(where) from None


_CHECKS = {"array": "is_array", "number": "is_number", "dict": "is_dict"}


def _guard(assumed: dict[str, str], runtime: dict[str, str], variant: str, args: list[str]) -> list[gast.stmt]:
    """The first statements of a derivative that assumed what its parameters are (frontend/receivers.py):
    ``if not is_array(x): return f_general(x, ...)``, checked before anything runs."""
    tests = " and ".join(f"{runtime[_CHECKS[kind]]}({param})" for param, kind in sorted(assumed.items()))
    kinds = ", ".join(f"{param} {'a' if kind != 'array' else 'an'} {kind}" for param, kind in sorted(assumed.items()))
    code = f"if not ({tests}):\n    return {variant}({', '.join(args)})"
    guard = gast.parse(code).body
    note = comment(f"# compiled for {kinds}; other arguments run {variant}, which looks methods up as they run")
    return [note, *guard]


class GeneralDerivative:
    """The derivative of a function compiled without assuming what its parameters are (``general``),
    for the calls whose arguments a derivative's entry check turned away (see ``_guard``). It holds the
    function weakly: the compile cache must stay free to collect it."""

    __slots__ = ("func", "wrt", "mode", "lifted")

    def __init__(self, func: Callable, wrt: tuple[int, ...], mode: Mode, lifted: bool):
        self.func, self.wrt, self.mode, self.lifted = weakref.ref(func), wrt, mode, lifted

    def __call__(self, *args: Any) -> Any:
        return compile(self.func(), self.wrt, self.mode, self.lifted, general=True).function(*args)

    def __repr__(self) -> str:
        func = self.func()
        return f"the derivative of {getattr(func, '__qualname__', func)} for arguments of any type"


def _binds_used(line: str, used: set[str], header: list[str]) -> bool:
    """Whether an import line of a module binds a name its function or header reads (``from m import f``
    of one name; any other line is kept)."""
    if not line.startswith("from ") or "," in line or " import " not in line:
        return True
    bound = line.rsplit(" ", 1)[-1]
    return bound in used or any(bound in other for other in header)


@dataclass
class Module:
    """What a generated module is made of besides its function: the pieces ``assemble`` puts together.
    (Nothing here refers to the user's function, which the compile cache must be free to collect.)"""

    imports: list[str]  # the lines that bind the outside names it reads
    label: str  # the user's function's name
    filename: str
    first_line: int
    runtime: dict[str, str]
    header: list[str]  # the transform's lines: the vjps and callee adjoints it binds
    title: str
    generated_name: str
    reads: list[tuple[str, Any]]
    mode: Mode
    generated: dict[str, Any] = field(default_factory=dict)  # values adsrc binds itself (a local function's code)
    extra: list[str] = field(default_factory=list)  # imports a specialization added (backend/specialized.py)
    prune: bool = False  # leave out the header's bindings and imported names the function does not use
    guard: list = field(default_factory=list)  # the entry check of what the parameters were assumed to be

    def assemble(self, function: gast.FunctionDef) -> tuple[str, Callable]:
        """The module's source, and the live function it defines."""
        if self.guard:
            function = copy.copy(function)
            function.body = [*(copy_tree(stmt) for stmt in self.guard), *function.body]
        used = {n.id for n in names(function)}
        header = [line for line in self.header
                  if not self.prune or " = " not in line or line.split(" = ", 1)[0] in used]
        used |= {n for n in self.runtime.values() if any(n + "(" in line for line in header)}
        imported = [f"{r} as {n}" if r != n else r for r, n in self.runtime.items() if n in used]
        lines = [line for line in self.imports if not self.prune or _binds_used(line, used, header)] + self.extra
        lines += [f"# {key}: {obj!r}, bound by adsrc when it runs this module"
                  for key, obj in self.generated.items() if key in used]
        lines += [f"from adsrc.runtime import {', '.join(imported)}"] if imported else []
        lines += header
        source = module_source(lines, function, self.title)
        namespace: dict[str, Any] = {"__name__": f"adsrc_{'jvp' if self.mode.forward else 'adjoint'}_{self.label}",
                                     **dict(self.reads), **self.generated}
        compiled = load(source, f"{self.label} ({self.filename}:{self.first_line})", namespace,
                        self.generated_name, self.filename, original_lines(function, source))
        return source, compiled


@dataclass
class Generic:
    """An optimized adjoint kept beside its compiled form, to be specialized for argument kinds later."""

    function: gast.FunctionDef
    module: Module
    namer: Namer
    vjps: dict[Callable, str]
    tape: str | None
    context: Context


_compiling = threading.local()


def _compile_callees(own: tuple, callees: list[tuple[Any, tuple[int, ...]]], mode: Mode) -> None:
    """Compile now what the generated code would compile at its first call of each callee.

    Functions already being compiled up the stack (recursion) are skipped.
    """
    mode = Mode(mode.direction, mode.eager)  # what the generated code's adjoint_of / jvp_of will ask for
    busy: set = _compiling.__dict__.setdefault("keys", set())
    fresh = own not in busy
    busy.add(own)
    try:
        for callee, wrt in callees:
            callee = compiled_with(callee)  # a checkpointed function's own; None for checkpoint_loop
            if callee is not None and (callee, wrt, mode) not in busy:
                compile(callee, wrt, mode)
    finally:
        if fresh:
            busy.discard(own)


def outside_imports(reads: list[tuple[str, Any]], parsed: Parsed) -> list[str]:
    """Header lines that bind the outside names the function reads, so that the
    printed module runs on its own: imports where the object can be imported,
    a comment naming anything else (a closure value, a global of ``__main__``)."""
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


cache = CompileCache()


def compile(func: Callable, wrt: tuple[int, ...], mode: Mode = REVERSE, lifted: bool = False,  # noqa: A001
            general: bool = False) -> Compiled:
    """The cached derivative of ``func`` for ``wrt`` and ``mode``, recompiled if anything it read changed.

    ``lifted``: a closure compiled with the values of its cells (its ``co_freevars``) as leading
    parameters, so that they can be differentiated (a local function made by ``local_function``).

    A bound method, ``functools.partial`` or callable instance compiles as the function it runs; ``wrt``
    and the compiled function's parameters then count the arguments it binds first (frontend/parse.py).
    A checkpointed function (``adsrc.checkpoint(f)``) compiles as ``f``: recomputing is its callers' choice;
    ``checkpoint_loop`` as a function that calls it.
    """
    func = compiled_as(func)
    if not inspect.isfunction(func):
        func = bound_parts(func)[0]
    if lifted_from(func) is not None:  # a local function given its captured values first (rules/closures.py)
        func, lifted = lifted_from(func), True
    options = (wrt, mode) + ((True,) if lifted else ()) + (("general",) if general else ())
    return cache.get(func, options, lambda: compile_uncached(func, wrt, mode, lifted, general))
