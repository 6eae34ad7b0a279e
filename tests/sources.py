"""Functions made from source text in memory, for tests that generate programs.

``function_from_source(text, name, path)`` compiles ``text`` under the file
name ``path`` (which ``inspect``, and so adsrc, can then read through
``linecache``) with NumPy as ``np`` and ``math`` in its globals, and returns
the function ``name`` it defines.
"""
from __future__ import annotations

import linecache
import math
from typing import Callable

import numpy as np


def function_from_source(text: str, name: str, path: str) -> Callable:
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    namespace = {"np": np, "math": math}
    exec(compile(text, path, "exec"), namespace)
    return namespace[name]
