"""A seeded generator of random programs over models, structures and functions as values.

``ObjectsGenerator(rng, k, args)`` writes the source of one program
``prog_k(x, W, s, n)`` (``x`` a float vector of length 3, ``W`` a 3x3 float
matrix, ``s`` a float, ``n`` a small int: tests/diffgen.py's signature) and of
the module-level classes and helpers it uses, all named with the suffix
``_k`` so that a batch of programs shares one module (:data:`HEADER` first).
Each program starts with ``_tick()`` and returns a float. At random it uses

* a dataclass or NamedTuple model built inside the program from x, W and s
  (``m = Model_k(np.tanh(W), x, s)``), whose methods call methods and read
  attributes, with a ``__call__``;
* functions passed as values to module-level helpers (``apply_k(f, v)``, an
  RK4 stepper run ``n`` times): np.tanh, np.sin, a module-level function, a
  bound method ``m.h1``, the model itself, a module-level functools.partial,
  a lambda;
* functions held in a list or a dict and called in a loop;
* ``*args`` and ``**kwargs`` forwarding helpers, a functools.wraps-decorated
  helper, a NamedTuple returned by a helper and read by field;
* sorted, min and max with ``key=`` (a lambda, a builtin, a NumPy function or
  a module-level function) over a list of scalars;
* ``adsrc.grad(inner_k)`` called inside the program;
* rarely, constructs adsrc refuses (a partial built inside the program, a
  differentiable keyword given to a ``**kw`` helper called by name).

Every expression is smooth and bounded at any input. The generator knows the
program's arguments, and marks a program non-smooth (``self.smooth``) when
two keys of a sorted/min/max are closer than :data:`GAP` or an ``abs`` key's
item is that close to its kink, so that finite differences stay a fair
reference. ``self.tags`` names the constructs a program uses.
"""
from __future__ import annotations

import itertools
import random
from typing import ClassVar

import numpy as np

HEADER = ("import dataclasses\nimport functools\nimport math\nfrom typing import NamedTuple\n\n"
          "import numpy as np\n\nimport adsrc\nfrom diffgen import tick as _tick\n\n\n")
GAP = 1e-3

# Keys of sorted/min/max, with a Python evaluator of each for the smoothness guard (s is the program's s).
KEYS = {
    "None": lambda v, s: v,
    "abs": lambda v, s: abs(v),
    "np.tanh": lambda v, s: np.tanh(v),
    "lambda v: (v - 0.1) ** 2": lambda v, s: (v - 0.1) ** 2,
    "lambda v: -v": lambda v, s: -v,
    "lambda v: (v - s) ** 2": lambda v, s: (v - s) ** 2,
    "key_{k}": lambda v, s: np.sin(3.0 * v),
}
ITEMS = ["x[0]", "x[1] * 2.0", "s", "W[0, 1]", "x[2] - 0.3", "np.sin(s)", "W[2, 2] * x[0]", "np.tanh(x[1])"]


class ObjectsGenerator:
    def __init__(self, rng: random.Random, k: int | str, args: tuple):
        self.rng, self.k, self.args = rng, k, args
        self.name = f"prog_{k}"
        self.tags: list[str] = []
        self.smooth = True
        self.defs: dict[str, str] = {}  # helper name -> source, in the order first needed
        self.model: str | None = None  # "dataclass" or "namedtuple", once the program builds m
        self.pending: list[str] = []  # statements a feature needs before its own (lambdas named)
        self.model_name, self.layer, self.c_source, self.rebound = "", False, "s", 0
        self.methods: set[str] = set()  # the model's methods beyond h1, h2 and __call__

    # -- expressions (smooth, bounded) ------------------------------------------------------------
    def vec(self, scope: dict, depth: int = 0) -> str:
        r = self.rng
        if depth >= 2 or (depth and r.random() < 0.3):
            return r.choice(scope["vec"])
        e = lambda: self.vec(scope, depth + 1)
        options = [
            lambda: f"np.tanh({e()})",
            lambda: f"np.sin({e()})",
            lambda: f"({e()} * {self.scal(scope, depth + 1)})",
            lambda: f"({e()} {r.choice(['+', '-', '*'])} {e()})",
            lambda: f"np.exp(0.3 * np.tanh({e()}))",
            lambda: f"(np.cos({e()}) * 0.5)",
        ]
        if scope["mat"]:
            options.append(lambda: f"({r.choice(scope['mat'])} @ {e()})")
        return r.choice(options)()

    def scal(self, scope: dict, depth: int = 0) -> str:
        r = self.rng
        if depth >= 2 or (depth and r.random() < 0.3):
            return r.choice(scope["scal"])
        v = lambda: self.vec(scope, depth + 1)
        e = lambda: self.scal(scope, depth + 1)
        return r.choice([
            lambda: f"np.sum({v()})",
            lambda: f"({v()} @ {v()})",
            lambda: f"{v()}[{r.randrange(3)}]",
            lambda: f"np.tanh({e()})",
            lambda: f"np.sin({e()})",
            lambda: f"({e()} {r.choice(['+', '-', '*'])} {e()})",
            lambda: f"np.exp(-{e()} ** 2)",
        ])()

    def using(self, kind: str, scope: dict, names: tuple) -> str:
        """An expression of ``kind`` that mentions each of ``names`` (drawn again a few times, then added)."""
        for _ in range(8):
            source = getattr(self, kind)(scope)
            if all(name in source for name in names):
                return source
        names = [name + "b" if name.endswith(".") else name for name in names]  # "self." means any attribute
        extra = " + ".join(f"np.sum({name}) * 0.1" if kind == "scal" or name in scope["mat"] else f"np.tanh({name})"
                           for name in names)
        return f"({source} + {extra})"

    # -- module-level definitions -------------------------------------------------------------------
    def need(self, name: str) -> str:
        """The helper's name with this program's suffix, its source written on first use."""
        full = f"{name}_{self.k}"
        if full not in self.defs:
            source = getattr(self, f"def_{name}")(full)  # helpers it needs are written first
            self.defs[full] = source
        return full

    # -- the model: fields W, b, c (and a layer, and k), methods drawn as the features ask for them ----
    def model_class(self) -> str:
        name, kind = self.model_name, self.model
        s = {"vec": ["v", "self.b"] + (["self.layer(v)"] if self.layer else []), "mat": ["self.W"],
             "scal": ["self.c", "0.5"]}
        s2 = {**s, "vec": s["vec"] + ["self.h1(v)"], "scal": ["self.c", "0.7"]}
        methods = [("h1", self.using("vec", s, ("v", "self."))), ("h2", self.using("scal", s2, ("self.h1(v)",))),
                   ("__call__", self.using("vec", s2, ("v", "self.")))]
        if kind == "dataclass":
            head = f"@dataclasses.dataclass{'(frozen=True)' if self.rng.random() < 0.3 else ''}\nclass {name}:\n"
            methods[1] = ("h2", f"{methods[1][1]} + 0.1 * self.k * self.c")
        elif kind == "namedtuple":
            head = f"class {name}(NamedTuple):\n"
        else:  # registered: adsrc differentiates it as a parameter, and refuses building it in the program
            head = f"class {name}:\n"
        fields = "    W: np.ndarray\n    b: np.ndarray\n    c: float\n"
        fields += f"    layer: {self.need('Dense')}\n" if self.layer else ""
        fields += "    k: int = 2\n" if kind == "dataclass" else ""
        if kind == "registered":
            names = "W, b, c" + (", layer" if self.layer else "")
            fields = (f"    def __init__(self, {names}):\n        " + ", ".join(f"self.{f}" for f in names.split(", "))
                      + f" = {names}\n")
        extra = {
            "h3": ("h3", "self.h2(v) * np.tanh(self.h2(v * 0.5)) + self.c"),
            "via": ("via", f"{self.need('loss') if 'via' in self.methods else ''}(self, v) * self.c"),
            "dec": ("dec", self.using("scal", s, ("v", "self."))),
            "parts": ("parts", (f"{self.need('Out') if 'parts' in self.methods else ''}"
                                "(np.sum(self.h1(v)) * self.c, b=self.h1(v) * 0.5)")),
            "scaled": ("scaled", "np.sum(np.tanh(v) * k) * self.c"),
            "score": ("score", "(v - self.c) ** 2"),
            "many": ("many", "sum(np.sum(self.h1(u)) for u in vs) * self.c"),
            "static": ("uses_static", "np.sum(self.st(v) * self.b)"),
        }
        methods += [extra[m] for m in sorted(self.methods)]
        text = head + fields
        for method, body in methods:
            if method == "dec":
                text += f"\n    @{self.need('twice')}"
            if method == "uses_static":
                text += "\n    @staticmethod\n    def st(v):\n        return np.tanh(v) * 2.0\n"
            params = {"scaled": "self, v, k=2.0", "many": "self, *vs"}.get(method, "self, v")
            text += f"\n    def {method}({params}):\n        return {body}\n"
        if kind == "registered":
            children = "m.W, m.b, m.c" + (", m.layer" if self.layer else "")
            text += (f"\n\nadsrc.register_pytree({name}, lambda m: (({children}), None), "
                     f"lambda aux, children: {name}(*children))\n")
        return text

    def construct(self) -> str:
        """A call of the model's class with arguments made of x, W and s (the layer's weights too)."""
        r = self.rng
        parts = [r.choice(["W", "W * 0.5", "np.tanh(W)", "W.T"]), r.choice(["x", "np.sin(x)", "x * s"]), self.c_source]
        if self.layer:
            parts.append(f"{self.need('Dense')}({r.choice(['W.T', 'W * s', 'np.sin(W)'])})")
        if r.random() < 0.4:
            parts = [f"{f}={p}" for f, p in zip(("W", "b", "c", "layer"), parts)]
        return f"{self.model_name}({', '.join(parts)})"

    def def_Dense(self, name: str) -> str:
        body = self.using("vec", {"vec": ["v"], "mat": ["self.W"], "scal": ["0.5"]}, ("v", "self.W"))
        return f"@dataclasses.dataclass\nclass {name}:\n    W: np.ndarray\n\n    def __call__(self, v):\n" \
               f"        return {body}\n"

    def def_loss(self, name: str) -> str:
        return f"def {name}(model, v):\n    return np.sum(model.h1(v) * model.b) + model.c\n"

    def def_build(self, name: str) -> str:
        return f"def {name}(W, x, s):\n    return {self.construct()}\n"

    def def_smooth(self, name: str) -> str:
        return f"def {name}(v):\n    return {self.using('vec', {'vec': ['v'], 'mat': [], 'scal': ['0.5', '1.5']}, ('v',))}\n"

    def def_scale(self, name: str) -> str:
        scope = {'vec': ['v', '(v * c)'], 'mat': [], 'scal': ['c', '0.5']}
        return f"def {name}(v, c):\n    return {self.using('vec', scope, ('v', 'c'))}\n"

    def def_inner(self, name: str) -> str:
        return f"def {name}(v):\n    return {self.using('scal', {'vec': ['v', 'np.sin(v)'], 'mat': [], 'scal': ['v[0]']}, ('v',))}\n"

    def def_apply(self, name: str) -> str:
        return f"def {name}(f, v):\n    return f(v) * 0.5 + f(v * 0.3)\n"

    def def_rk(self, name: str) -> str:
        return (f"def {name}(f, y, h):\n    k1 = f(y)\n    k2 = f(y + h / 2 * k1)\n    k3 = f(y + h / 2 * k2)\n"
                f"    k4 = f(y + h * k3)\n    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)\n")

    def def_spread(self, name: str) -> str:
        return f"def {name}(f, *args):\n    return f(*args)\n"

    def def_forward(self, name: str) -> str:
        return f"def {name}(f, v, **kw):\n    return f(v, **kw)\n"

    def def_twice(self, name: str) -> str:
        return (f"def {name}(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
                f"        return 2.0 * fn(*args, **kwargs)\n    return wrapper\n")

    def def_decorated(self, name: str) -> str:
        body = self.using("scal", {"vec": ["v", "(v * c)"], "mat": [], "scal": ["c", "0.5"]}, ("v",))
        return f"@{self.need('twice')}\ndef {name}(v, c=1.0):\n    return {body}\n"

    def def_Out(self, name: str) -> str:
        return f"class {name}(NamedTuple):\n    a: float\n    b: np.ndarray\n"

    def def_pair(self, name: str) -> str:
        out = self.need("Out")
        scope = {"vec": ["v"], "mat": [], "scal": ["c"]}
        return f"def {name}(v, c):\n    return {out}({self.scal(scope)}, b={self.vec(scope)})\n"

    def def_total(self, name: str) -> str:
        return f"def {name}(*vs):\n    t = 0.0\n    for u in vs:\n        t = t + np.sum(np.tanh(u))\n    return t\n"

    def def_named(self, name: str) -> str:
        return (f"def {name}(**kw):\n    t = 0.0\n    for key in kw:\n        t = t + np.sum(np.sin(kw[key]))\n"
                f"    return t\n")

    def def_HALF(self, name: str) -> str:
        return f"{name} = functools.partial({self.need('scale')}, np.full(3, 0.5))  # a stored positional argument\n"

    def def_key(self, name: str) -> str:
        return f"def {name}(v):\n    return np.sin(3.0 * v)\n"

    def def_PART(self, name: str) -> str:
        return f"{name} = functools.partial({self.need('scale')}, c=0.7)\n"

    # -- functions as values ------------------------------------------------------------------------
    def function_value(self) -> str:
        """A vector -> vector callable, as source; tagged."""
        r = self.rng
        choices = ["np.tanh", "np.sin", "smooth", "partial", "lambda"]
        if self.model:
            choices += ["method", "model"] * 2 + (["layer"] if self.layer else [])
        kind = r.choice(choices)
        self.tags.append(f"value:{kind}")
        if kind == "smooth":
            return self.need("smooth")
        if kind == "partial":
            return self.need(r.choice(["PART", "HALF"]))
        if kind == "layer":
            return "m.layer"
        if kind == "lambda":  # assigned to a name first: adsrc refuses a lambda written inside a call
            name = f"lam{sum(tag == 'value:lambda' for tag in self.tags)}"
            self.pending.append(f"{name} = {r.choice(['lambda v: np.tanh(v) * s', 'lambda v: np.sin(v * 0.5)'])}")
            return name
        if kind == "method":
            return "m.h1"
        if kind == "model":
            return "m"
        return kind

    # -- statements, each adding a scalar to t -------------------------------------------------------
    MODEL_FEATURES: ClassVar[list[str]] = ["method", "method", "call", "attribute", "method3", "via", "helper_model", "dec_method",
                      "parts", "getattr", "unbound", "static", "defaults", "models", "star_method"]

    def feature(self, kind: str | None = None) -> list[str]:
        r = self.rng
        options = ["apply", "list", "dict", "spread", "forward", "decorated", "pair", "order", "order", "grad", "rk",
                   "variadic"]
        if self.model:
            options += self.MODEL_FEATURES + ["layer"] * self.layer + ["index"] * (self.model == "namedtuple")
        kind = kind or r.choice(options)
        if r.random() < 0.04:  # constructs adsrc refuses, before running anything
            kind = r.choice(["partial_inside", "forward_by_name"] + ["grad_method", "key_method"] * bool(self.model))
        self.tags.append(kind)
        top = {"vec": ["x", "np.tanh(x)"], "mat": ["W"], "scal": ["s"]}
        v = self.vec(top)
        method = {"method3": "h3", "via": "via", "dec_method": "dec", "static": "uses_static"}
        if kind in method:
            self.methods.add({"method3": "h3", "dec_method": "dec"}.get(kind, kind))
            return [f"t = t + m.{method[kind]}({v})"]
        if kind == "method":
            return [f"t = t + m.h2({v})"]
        if kind == "call":
            return [f"t = t + np.sum(m({v}))"]
        if kind == "attribute":
            return [f"t = t + m.c * np.sum(m.b) + m.W[{r.randrange(3)}, {r.randrange(3)}]"]
        if kind == "layer":
            return [f"t = t + np.sum(m.layer({v})) + np.sum(m.layer.W) * 0.1"]
        if kind == "index":
            return ["t = t + np.sum(m[1]) * m[2]"]
        if kind == "helper_model":
            return [f"t = t + {self.need('loss')}(m, {v})"]
        if kind == "parts":
            self.methods.add("parts")
            return [f"r = m.parts({v})", f"t = t + {r.choice(['r.a + np.sum(r.b)', 'r[0] * r.b[1]'])}"]
        if kind == "star_method":  # a *vs method, called by name or as a value
            self.methods.add("many")
            call = r.choice(["m.many", f"{self.need('spread')}(m.many, "])
            return [f"t = t + {call}{'(' if call == 'm.many' else ''}x, {v})"]
        if kind == "getattr":
            return [f"t = t + getattr(m, 'h2')({v})"]
        if kind == "unbound":
            return [f"t = t + {self.model_name}.h2(m, {v})"]
        if kind == "defaults":
            self.methods.add("scaled")
            return [f"t = t + m.scaled({v}) + m.scaled(x, k=s) + m.scaled(x, 0.5)"]
        if kind == "models":
            return [f"ms = [m, {self.construct()}]", "for mk in ms:", "    t = t + mk.h2(x) * 0.5"]
        if kind == "grad_method":  # refused: adsrc.grad of a method of an object the function built
            return ["g = adsrc.grad(m.h2)", f"t = t + np.sum(g({v}))"]
        if kind == "key_method":  # refused: a differentiable key=
            self.methods.add("score")
            return ["xs = [x[0], x[1] * 2.0]", "t = t + min(xs, key=m.score)"]
        if kind == "apply":
            return [f"t = t + np.sum({self.need('apply')}({self.function_value()}, {self.vec(top)}))"]
        if kind == "list":
            fs = ", ".join(self.function_value() for _ in range(r.randint(2, 3)))
            return [f"fs = [{fs}]", "for f in fs:", "    t = t + np.sum(f(x)) * 0.3"]
        if kind == "dict":
            fs = ", ".join(f"'{c}': {self.function_value()}" for c in "abc"[:r.randint(2, 3)])
            loop = r.choice(["for key in fs:\n    t = t + np.sum(fs[key](x))",
                             "for key, f in fs.items():\n    t = t + f(x)[1]"])
            return [f"fs = {{{fs}}}"] + loop.split("\n")
        if kind == "spread":
            f, args = self.need("scale"), r.choice(["x, s", "*(x, s)", "np.sin(x), s * 0.5"])
            if self.model and r.random() < 0.4:
                f, args = r.choice(["m.h1", "m"]), v
            return [f"t = t + np.sum({self.need('spread')}({f}, {args}))"]
        if kind == "forward":
            return [f"fw = {self.need('forward')}", f"t = t + np.sum(fw({self.need('scale')}, x, c=s))"]
        if kind == "forward_by_name":  # refused: a differentiable keyword into a **kw helper called by name
            return [f"t = t + np.sum({self.need('forward')}({self.need('scale')}, x, c=s))"]
        if kind == "partial_inside":  # refused: a partial built in the differentiated function
            return [f"t = t + np.sum({self.need('apply')}(functools.partial({self.need('scale')}, c=s), x))"]
        if kind == "variadic":  # functions with *vs or **kw parameters, called as values
            if r.random() < 0.5:
                return [f"t = t + {self.need('spread')}({self.need('total')}, x, {v}, s)"]
            return [f"fw = {self.need('named')}", f"t = t + fw(a=x, b={v}, c=s)"]
        if kind == "decorated":
            return [f"t = t + {self.need('decorated')}({self.vec(top)}{r.choice(['', ', c=s', ', 0.5'])})"]
        if kind == "pair":
            read = r.choice(["r.a + np.sum(r.b)", "r.a * r.b[0]", "r[0] + r.b @ x"])
            return [f"r = {self.need('pair')}({self.vec(top)}, s)", f"t = t + {read}"]
        if kind == "grad":
            return [f"g = adsrc.grad({self.need('inner')})", f"t = t + np.sum(g({self.vec(top)}) * 0.5)"]
        if kind == "rk":
            field = self.function_value()
            return ["y = x", "for _ in range(n):", f"    y = {self.need('rk')}({field}, y, 0.1)", "t = t + np.sum(y)"]
        return self.order()

    def order(self) -> list[str]:
        """sorted/min/max, with the smoothness guard evaluated at the program's arguments."""
        r = self.rng
        items = r.sample(ITEMS, r.randint(2, 4))
        key = r.choice(list(KEYS) + ["lambda v: (v - m.c) ** 2"] * bool(self.model))
        which = r.choice(["sorted", "min", "max"])
        self.tags.append(f"{which}(key={'lambda' if key.startswith('lambda') else key.split('_')[0]})")
        x, W, s, _ = self.args
        values = [float(eval(item, {"np": np, "x": x, "W": W, "s": s})) for item in items]
        c = float(eval(self.c_source, {"np": np, "s": s})) + 0.1 * self.args[3] * self.rebound if self.model else 0
        evaluate = (lambda v, s: (v - c) ** 2) if "m.c" in key else KEYS[key]
        keys = sorted(evaluate(v, s) for v in values)
        if any(b - a < GAP for a, b in itertools.pairwise(keys)) or (key == "abs" and min(map(abs, values)) < GAP):
            self.smooth = False
        key_src = "" if key == "None" else ", key=" + (self.need("key") if key == "key_{k}" else key)
        lines = [f"xs = [{', '.join(items)}]"]
        if which == "sorted":
            reverse = r.choice(["", ", reverse=True"])
            pick = r.choice(["[0]", "[-1] * 2.0", f"[{len(items) - 1}]"])
            lines.append(f"t = t + sorted(xs{key_src}{reverse}){pick}")
        else:
            lines.append(f"t = t + {which}(xs{key_src}) * {r.choice(['1.5', '0.5'])}")
        return lines

    # -- the program ----------------------------------------------------------------------------------
    def program(self) -> str:
        r = self.rng
        body = ["_tick()"]
        if r.random() < 0.7:
            self.model = r.choice(["dataclass", "namedtuple"] * 3 + ["registered"])
            self.model_name, self.layer = f"Model_{self.k}", r.random() < 0.4
            self.c_source = r.choice(["s", "s * 0.5", "np.tanh(s)"])
            self.tags += [self.model] + ["layer field"] * self.layer
            built = r.choice(["inline", "inline", "helper", "rebound"])
            self.tags.append(f"built:{built}")
            body.append(f"m = {self.need('build')}(W, x, s)" if built == "helper" else f"m = {self.construct()}")
            if built == "rebound":
                self.rebound = 1
                fields = "m.W * 0.9, m.b, m.c + 0.1" + (", m.layer" if self.layer else "")
                body += ["for _ in range(n):", f"    m = {self.model_name}({fields})"]
        body.append(f"t = {self.scal({'vec': ['x'], 'mat': ['W'], 'scal': ['s']})}")
        for j in range(r.randint(1, 3)):
            lines = self.feature(r.choice(self.MODEL_FEATURES) if self.model and not j else None)
            body += self.pending + lines
            self.pending = []
        body.append("return t")
        if self.model:
            self.defs[self.model_name] = self.model_class()  # last: it may need helpers the features added
        defs = "\n\n".join(source for source in self.defs.values())
        main = f"def {self.name}(x, W, s, n):\n" + "".join(f"    {line}\n" for line in body)
        return (defs + "\n\n" if defs else "") + main
