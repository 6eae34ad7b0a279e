"""Stand-ins for autograd-only APIs (tracer internals, vspaces, flatten, its SciPy wrappers...).

adsrc has no boxes, vspaces or primitives: it differentiates plain NumPy by
rewriting source. A test that uses one of these APIs measures autograd, not
adsrc, so the harness skips it. A stand-in can be imported, decorated with
and looked into at import time (autograd's test modules do that at their top
level); using it inside a test records the name, and calling it skips the
test with the reason "autograd-only API: <name>".
"""
from __future__ import annotations

import sys
import types

REASON = "autograd-only API"
touched: list[str] = []        # the autograd-only names a running test used (conftest resets it)
in_test = [False]              # set by the conftest while a test runs
capped: list[str] = []         # derivative orders above MAX_ORDER that a test asked for (test_util)
BEYOND = "beyond second order"
derivative_calls: list[int] = []  # the order of each call of a derivative the shim made (to see a function
#                                    that differentiates inside, and how deep)


def skip(name: str):
    import pytest
    pytest.skip(f"{REASON}: {name}")


def skip_beyond(what: str):
    import pytest
    pytest.skip(f"{BEYOND}: {what} (issue 13 asks for first and second order)")


class AutogradOnly:
    """An autograd-only object: attributes give more stand-ins, calling one skips the running test."""

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attribute: str) -> "AutogradOnly":
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if in_test[0]:
            touched.append(self._name)
        return AutogradOnly(f"{self._name}.{attribute}")

    def __call__(self, *args, **kwargs):
        if in_test[0]:
            touched.append(self._name)
            skip(self._name)
        return AutogradOnly(f"{self._name}(...)")   # a decorator at a test module's top level

    def __repr__(self) -> str:
        return f"<autograd-only {self._name}>"

    def _refuse(self, *args, **kwargs):
        if in_test[0]:
            touched.append(self._name)
            skip(self._name)
        return AutogradOnly(f"{self._name}(...)")   # a test module's top level: the test using it skips

    __getitem__ = __setitem__ = __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = _refuse
    __truediv__ = __rtruediv__ = __neg__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _refuse

    def __iter__(self):
        return iter([self._refuse()]) if not in_test[0] else self._refuse()

    def __bool__(self):
        return bool(self._refuse())

    def __len__(self):
        self._refuse()
        return 1

    def __array__(self, *args, **kwargs):
        self._refuse()
        raise TypeError(f"{self!r} is not an array")


class AutogradOnlyModule(types.ModuleType):
    """A module of autograd-only names (autograd.scipy.special, autograd.tracer...)."""

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        full = f"{self.__name__}.{attribute}"
        if full in sys.modules:
            return sys.modules[full]
        if in_test[0]:
            touched.append(full)
        return AutogradOnly(full)


def install(name: str) -> types.ModuleType:
    """Register ``name`` (and its parents) as autograd-only modules unless already present."""
    parts = name.split(".")
    for i in range(2, len(parts) + 1):
        full = ".".join(parts[:i])
        if full not in sys.modules:
            module = AutogradOnlyModule(full)
            module.__path__ = []  # a package: submodules import through the finder below
            sys.modules[full] = module
            parent = sys.modules[".".join(parts[:i - 1])]
            setattr(parent, parts[i - 1], module)
    return sys.modules[name]


class AutogradOnlyFinder:
    """Imports any module under the given prefixes as an autograd-only module."""

    def __init__(self, prefixes: tuple[str, ...]):
        self.prefixes = prefixes

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(self.prefixes):
            import importlib.machinery
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = AutogradOnlyModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass
