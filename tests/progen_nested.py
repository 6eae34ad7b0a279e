"""A seeded generator of random programs over objects that hold objects.

``NestedGenerator(rng, k).program()`` writes a module: classes ``Leaf*_k`` and
``Node*_k`` (suffix ``_k``), a module-level ``model_k`` built from them, and
``prog_k(w, model)`` (``w`` a float vector of length 3) returning a float. The
classes are made of what a model of a user's own looks like:

* a node holds its children in an attribute, a list, a dict, behind a
  property, or as a class attribute; nodes nest 1 to 3 levels deep, and a
  method calls a child's method through them (``self.inner.layer.get(v)``,
  ``for layer in self.layers: v = layer.dot(v)``, ``self.parts["a"].sum(v)``);
* methods are named like an array's or a dict's (``get``, ``sum``, ``dot``,
  ``mean``, ``copy``, ``values``, ``reshape``, ``max``, ``T`` as an attribute)
  as often as not, so that a rule of that name must not be taken for them;
* class attributes hold numbers, and an object stores a callable (NumPy's
  ``np.tanh``, a module-level function, a callable object) that it calls;
* leaves hold a float array ``W`` and a float ``k``.

Every expression is smooth and bounded, so central finite differences are a
fair reference. ``tags`` names the constructs a program uses.
"""
from __future__ import annotations

import random

HEADER = "import numpy as np\n\n\n"
# Method names: those of an array's or a dict's rule, and plain ones.
NAMES = ["get", "sum", "dot", "mean", "copy", "values", "reshape", "max", "items", "apply", "forward", "step"]


class NestedGenerator:
    def __init__(self, rng: random.Random, k: int | str):
        self.rng, self.k = rng, k
        self.name = f"prog_{k}"
        self.defs: list[str] = []
        self.tags: set[str] = set()
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}_{self.k}"

    def method_name(self) -> str:
        name = self.rng.choice(NAMES)
        self.tags.add(f"named {name}")
        return name

    # -- leaves --------------------------------------------------------------------------------------------
    def leaf(self) -> tuple[str, str]:
        """A leaf class and its one method's name: ``(class name, method)``."""
        r = self.rng
        cls, method = self.fresh("Leaf"), self.method_name()
        body = r.choice([
            "np.tanh(self.W @ v) * self.k",
            "np.sin(v) * self.k + self.W @ v * 0.3",
            "v * self.k",
            "np.exp(-0.5 * v ** 2) * self.k + v * 0.2",
        ])
        text = (f"class {cls}:\n    def __init__(self, k):\n        self.k = k\n"
                f"        self.W = np.linspace(-0.5, 0.5, 9).reshape(3, 3) * k\n\n"
                f"    def {method}(self, v):\n        return {body}\n")
        if r.random() < 0.3:  # an attribute named like an array's
            text += "\n    @property\n    def T(self):\n        return self.k * 2.0\n"
            self.tags.add("property T")
        self.defs.append(text)
        return cls, method

    def callable_value(self) -> str:
        """What an object stores to call: a NumPy function, a module-level function, a callable object."""
        r = self.rng
        choice = r.randrange(3)
        if choice == 0:
            self.tags.add("stores np.tanh")
            return "np.tanh"
        if choice == 1:
            fn = self.fresh("act")
            self.defs.append(f"def {fn}(v):\n    return np.sin(v) * 0.5 + v * 0.5\n")
            self.tags.add("stores a function")
            return fn
        cls = self.fresh("Act")
        self.defs.append(f"class {cls}:\n    def __init__(self):\n        self.a = 0.7\n\n"
                         f"    def __call__(self, v):\n        return np.tanh(v * self.a)\n")
        self.tags.add("stores a callable object")
        return f"{cls}()"

    # -- nodes ---------------------------------------------------------------------------------------------
    def node(self, depth: int) -> tuple[str, str, str]:
        """A class whose method reaches its children's: ``(class name, method, constructor call)``."""
        r = self.rng
        cls, method = self.fresh("Node"), self.method_name()
        children = []
        for _ in range(r.randint(1, 2)):
            if depth <= 1 or r.random() < 0.3:
                child_cls, child_method = self.leaf()
                children.append((f"{child_cls}({r.choice(['0.5', '1.5', '-0.8', '1.1'])})", child_method))
            else:
                child_cls, child_method, construct = self.node(depth - 1)
                children.append((construct, child_method))
        shared, init, uses, properties = [], [], [], ""
        for i, (construct, child_method) in enumerate(children):
            how = r.choice(["attribute", "list", "dict", "property", "class attribute"])
            self.tags.add(how)
            if how == "attribute":
                init.append(f"self.c{i} = {construct}")
                uses.append(f"v = self.c{i}.{child_method}(v)")
            elif how == "list":
                init.append(f"self.layers{i} = [{construct}, {construct}]")
                uses.append(f"for layer in self.layers{i}:\n            v = layer.{child_method}(v)")
            elif how == "dict":
                init.append(f"self.parts{i} = {{'a': {construct}}}")
                uses.append(f"v = self.parts{i}['a'].{child_method}(v)")
            elif how == "property":
                init.append(f"self._c{i} = {construct}")
                properties += f"\n    @property\n    def p{i}(self):\n        return self._c{i}\n"
                uses.append(f"v = self.p{i}.{child_method}(v) * 0.5 + v * 0.5")
            else:  # an object shared by every instance, and a number
                shared += [f"shared{i} = {construct}", f"scale{i} = 0.9"]
                uses.append(f"v = self.shared{i}.{child_method}(v) * self.scale{i}")
        if r.random() < 0.4:
            init.append(f"self.act = {self.callable_value()}")
            uses.append("v = self.act(v)")
        if r.random() < 0.3:
            init.append("self.b = np.array([0.1, -0.2, 0.3])")
            uses.append("v = v + self.b")
        text = f"class {cls}:\n" + "".join(f"    {line}\n" for line in shared) \
            + "    def __init__(self):\n        " + ("\n        ".join(init) or "pass") + "\n" + properties \
            + f"\n    def {method}(self, v):\n        " + "\n        ".join(uses) + "\n        return v\n"
        self.defs.append(text)
        return cls, method, f"{cls}()"

    def program(self) -> str:
        r = self.rng
        depth = r.randint(1, 3)
        self.tags.add(f"depth {depth}")
        cls, method, construct = self.node(depth)
        model = f"model_{self.k}"
        reduce = r.choice(["np.sum(({}) ** 2)", "np.sum(np.tanh({}))", "np.sum(({}) * w)"])
        call = f"model.{method}(w)"
        if r.random() < 0.3:  # the loss reads the model through another attribute read
            call = f"model.{method}(w * 0.5) + model.{method}(w)"
            self.tags.add("two calls")
        body = f"def {self.name}(w, model):\n    return {reduce.format(call)}\n"
        return HEADER + "\n\n".join(self.defs) + f"\n\n{model} = {construct}\n\n\n" + body
