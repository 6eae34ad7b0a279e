"""Libraries are primitives: which called functions adsrc never traces into.

adsrc transforms the source of the user's own functions (and of its own
package). A function that comes from an installed library (a file in
site-packages or dist-packages, the standard library, a frozen module) is a
primitive, like a C function or a ufunc: it has a gradient rule, or its call
is refused with ``NoGradientRule`` naming the call site. Tracing into a
library's source would differentiate its implementation details (``with``
statements, caches, type dispatch) and break on the first one adsrc does not
support, far from the user's code.

:func:`is_library_function` decides it from the file the function's code
object was compiled from; :func:`library_remedy` is the remedy a refusal
names, spelled as the user's own call spells the function.
"""
from __future__ import annotations

import functools
import inspect
import os
import site
import sys
import sysconfig
from typing import Any

_OWN_PACKAGE = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """The folders installed code lives in: the standard library and the site-packages of this Python."""
    folders = set()
    for scheme_paths in (sysconfig.get_paths(), sysconfig.get_paths(vars={"base": sys.base_prefix,
                                                                            "platbase": sys.base_exec_prefix})):
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if scheme_paths.get(key):
                folders.add(scheme_paths[key])
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    user_site = getattr(site, "getusersitepackages", lambda: None)()
    if user_site:
        folders.add(user_site)
    return tuple(sorted({os.path.realpath(f) + os.sep for f in folders}))


@functools.lru_cache(maxsize=4096)
def _is_library_file(filename: str) -> bool:
    if filename.startswith("<frozen "):  # a frozen standard-library module (os, importlib...)
        return True
    if filename.startswith("<"):  # the REPL, exec'd or generated code: the user's own
        return False
    path = os.path.realpath(filename)
    if path.startswith(_OWN_PACKAGE):
        return False
    if _PACKAGE_FOLDERS.intersection(path.split(os.sep)):
        return True
    return path.startswith(_library_roots())


def is_library_function(func: Any) -> bool:
    """True for a Python function defined in an installed library or the standard library.

    adsrc's own package and every other file (the user's scripts, modules and
    notebooks) are not libraries: their functions are traced as usual.
    """
    code = getattr(func, "__code__", None)
    if not inspect.isfunction(func) or code is None:
        return False
    return _is_library_file(code.co_filename)


# Library functions whose refusal says more than the general remedy, by module and name.
_WHY_NO_RULE = {
}


def library_remedy(func: Any, spelling: str) -> str:
    """What a user can do about a library function with no rule, naming it as their call does."""
    module = getattr(func, "__module__", None) or "its library"
    why = _WHY_NO_RULE.get((module, getattr(func, "__name__", "")), "")
    return (f"adsrc.register_adjoint({spelling}, vjp) with vjp(g, ans, *args) returning the contribution "
            f"to each argument (see docs/rules.md), or adsrc.register_nondifferentiable({spelling}) if its "
            f"gradient is zero. {spelling} is defined in {module}, a library (the standard library or an "
            f"installed package): adsrc treats library functions as primitives and does not differentiate "
            f"their source{why}")
