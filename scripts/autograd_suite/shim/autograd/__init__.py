"""A fake ``autograd`` package that runs autograd's test suite on adsrc (scripts/autograd_suite).

``autograd.numpy`` is NumPy itself (adsrc differentiates plain NumPy);
the differential operators map onto adsrc's; autograd-only APIs (primitive,
vspace, flatten, tracers, its SciPy wrappers...) are stand-ins that skip the
test using them. Never imported by adsrc itself.
"""
import builtins as _builtins
import os as _os
import sys as _sys

import numpy as _numpy
import numpy.fft
import numpy.linalg
import numpy.random

from . import _only
from .differential_operators import (checkpoint, deriv, elementwise_grad, grad, grad_and_aux, grad_named, hessian,
                                     hessian_tensor_product, hessian_vector_product, holomorphic_grad, jacobian,
                                     make_ggnvp, make_hvp, make_jvp, make_vjp, multigrad_dict,
                                     tensor_jacobian_product, value_and_grad, vector_jacobian_product)

# autograd.numpy is NumPy: the same module object, so adsrc sees np.sin as numpy.sin.
numpy = _numpy
for _name, _module in [("numpy", _numpy), ("numpy.random", _numpy.random), ("numpy.linalg", _numpy.linalg),
                       ("numpy.fft", _numpy.fft)]:
    _sys.modules[f"{__name__}.{_name}"] = _module

_autograd_only = ["autograd.misc", "autograd.util", "autograd.numpy.numpy_boxes",
                  "autograd.numpy.numpy_vspaces", "autograd.numpy.numpy_wrapper", "autograd.numpy.numpy_vjps",
                  "autograd.numpy.numpy_jvps"]
if _os.environ.get("ADSRC_AUTOGRAD_SCIPY") == "1":
    import scipy as _scipy  # autograd.scipy.X is scipy.X: adsrc's SciPy rules are measured too
    import scipy.integrate, scipy.linalg, scipy.signal, scipy.special, scipy.stats  # noqa: E401,F401
    scipy = _scipy
    for _name in ["integrate", "linalg", "signal", "special", "stats"]:
        _sys.modules[f"{__name__}.scipy.{_name}"] = getattr(_scipy, _name)
    _sys.modules[f"{__name__}.scipy"] = _scipy
    for _name in ["multivariate_normal", "norm", "beta", "chi2", "dirichlet", "gamma", "poisson", "t"]:
        _sys.modules[f"{__name__}.scipy.stats.{_name}"] = getattr(_scipy.stats, _name)
else:
    _autograd_only.append("autograd.scipy")
_sys.meta_path.insert(0, _only.AutogradOnlyFinder(tuple(_autograd_only)))

primitive = _only.AutogradOnly("autograd.primitive")

# autograd.builtins' containers are Python's own under adsrc.
from .builtins import dict, isinstance, list, tuple, type  # noqa: E402,A004
del _builtins

__all__ = ["checkpoint", "deriv", "elementwise_grad", "grad", "grad_and_aux", "grad_named", "hessian",
           "hessian_tensor_product", "hessian_vector_product", "holomorphic_grad", "jacobian", "make_ggnvp",
           "make_hvp", "make_jvp", "make_vjp", "multigrad_dict", "tensor_jacobian_product", "value_and_grad",
           "vector_jacobian_product", "primitive", "numpy", "dict", "isinstance", "list", "tuple", "type"]
