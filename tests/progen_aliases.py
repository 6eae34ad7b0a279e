"""A seeded generator of programs that write through a name which may be an argument's array.

``AliasGenerator(rng, name, dim)`` writes the source of one function
``name(x, W, s, n)`` (``x`` a vector of length ``dim``, ``W`` a ``dim`` by
``dim`` matrix, ``s`` a float, ``n`` a small int) that binds a name to an
argument through one of the spellings that may give back the argument's own
array or a view of it (``np.asarray(x)``, ``np.array(x, copy=False)``,
``x.view()``, ``x[...]``, ``x.reshape(...)``, ``np.atleast_1d(x)``, ``W.T``, a
helper that returns its argument...), or through one that makes a new array
(``np.array(x)``, ``x.copy()``, ``np.zeros_like(x)`` then ``y[:] = x``...),
sometimes through a second spelling of the first, and then writes into it:
an item, an item from other items, a slice, a slice or an item updated in
place (``y[a:b] += v``), an in-place operator (``y *= c``), ``np.add.at``, and
more rarely ``out=``, ``.fill``, ``.sort()``, ``np.copyto``; at the top of the
body, in a loop or in a branch. Some programs write into an array of their
own instead and read it back through a name that may share it (``v =
np.asarray(y)``; ``y[0] = ...``; ``... v ...``). The result reads the
arguments after the writes, so that Python's effect shows in the value.

Plain Python changes the caller's array in most of them. adsrc must either
refuse such a program before anything runs (``UnsupportedSyntax`` naming the
line; ``RefusedWhenRun`` right before the statement, for ``y op= e`` where
only the value shows the array is shared), or run it as Python does: the
same value, the arguments changed exactly as the plain call changes them, and
the gradient at their values on entry (tests/test_random_aliases.py checks
each program with tests/diffgen.py's ``check_program(..., effects=True)``).
After :meth:`AliasGenerator.program`, ``tags`` names its constructs.
"""
from __future__ import annotations

import random

HEADER = '''import numpy as np
from diffgen import tick as _tick


def same(a):
    return a


def first(a, b):
    return a


def doubled(a):
    b = a * 2.0
    return b
'''

# Spellings of a name for the array ``{b}`` (an argument, or an array of the function's own), by the kind
# of ``{b}`` ("vec" of length d, "mat" d by d), each with the kind it gives ("vec", "mat", "part": a 1-D
# array of another length, "flat": d * d) and whether it may share ``{b}``'s memory.
SHARING = {
    "vec": [
        ("np.asarray({b})", "vec"), ("np.array({b}, copy=False)", "vec"), ("np.array({b}, copy=None)", "vec"),
        ("{b}.view()", "vec"), ("{b}[...]", "vec"), ("{b}[:]", "vec"), ("{b}.reshape({d})", "vec"),
        ("{b}.reshape(-1)", "vec"), ("np.atleast_1d({b})", "vec"), ("np.asanyarray({b})", "vec"),
        ("np.ascontiguousarray({b})", "vec"), ("np.ravel({b})", "vec"), ("np.squeeze({b})", "vec"),
        ("{b}.T", "vec"), ("np.transpose({b})", "vec"), ("np.real({b})", "vec"), ("{b}.real", "vec"),
        ("{b}.astype(np.float64, copy=False)", "vec"), ("{b}[::-1]", "vec"), ("{b}[1:]", "part"),
        ("same({b})", "vec"), ("first({b}, s)", "vec"), ("({b}, s)[0]", "vec"), ("[{b}][0]", "vec"),
        ("{b} if n >= 0 else {b} * 0.0", "vec"), ("np.expand_dims({b}, 0)[0]", "vec"),
        ("np.atleast_2d({b})[0]", "vec"), ("np.require({b})", "vec"), ("np.asarray({b}).reshape({d})", "vec"),
    ],
    "mat": [
        ("np.asarray({b})", "mat"), ("np.array({b}, copy=False)", "mat"), ("{b}.view()", "mat"),
        ("{b}[...]", "mat"), ("{b}.T", "mat"), ("{b}.reshape({d}, {d})", "mat"), ("{b}.reshape(-1)", "flat"),
        ("np.transpose({b})", "mat"), ("np.swapaxes({b}, 0, 1)", "mat"), ("np.atleast_2d({b})", "mat"),
        ("{b}[0]", "vec"), ("{b}[:, 1]", "vec"), ("{b}.ravel()", "flat"), ("np.asarray({b}, dtype=np.float64)", "mat"),
        ("same({b})", "mat"), ("np.moveaxis({b}, 0, 1)", "mat"), ("{b}[:2]", "part_mat"),
    ],
}
FRESH = {
    "vec": ["np.array({b})", "{b}.copy()", "np.copy({b})", "{b} * 1.0", "np.asarray({b}, copy=True)",
            "np.array({b}, copy=True)", "{b}.astype(np.float64)", "np.asarray({b}).copy()", "np.exp({b})",
            "doubled({b})", "{b} + 0.0", "np.concatenate([{b}])", "np.multiply({b}, 1.0)"],
    "mat": ["np.array({b})", "{b}.copy()", "np.copy({b})", "{b} * 1.0", "{b}.T.copy()", "np.exp({b})"],
}


class AliasGenerator:
    def __init__(self, rng: random.Random, name: str, dim: int = 3):
        self.rng = rng
        self.name = name
        self.dim = dim
        self.tags: list[str] = []
        self.smooth = True
        self.counter = 0

    def tag(self, text: str) -> None:
        if text not in self.tags:
            self.tags.append(text)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- values -----------------------------------------------------------------------
    def scalar(self) -> str:
        r, d = self.rng, self.dim
        return r.choice(["s", "0.5", "s * s", "np.sin(s)", f"x[{r.randrange(d)}] * s", f"np.sum(W[{r.randrange(d)}])",
                         "1.5", f"np.cos(x[{r.randrange(d)}])"])

    def length(self, kind: str) -> int:
        return {"vec": self.dim, "part": self.dim - 1, "flat": self.dim * self.dim}[kind]

    # -- statements ---------------------------------------------------------------------
    def spelling(self, base: str, kind: str, sharing: bool) -> tuple[str, str, str]:
        """(expression, the kind it gives, its tag) of a name for ``base``."""
        r, d = self.rng, self.dim
        if sharing:
            template, out = r.choice(SHARING[kind])
            tag = "alias " + template.replace("{b}", "x").replace("{d}", "d")
        else:
            template, out = r.choice(FRESH[kind]), kind
            tag = "fresh " + template.replace("{b}", "x")
        return template.format(b=base, d=d), out, tag

    def write(self, y: str, kind: str, lines: list, indent: str) -> None:
        """One write into ``y`` of ``kind``."""
        r, d = self.rng, self.dim
        E = self.scalar
        if kind in ("vec", "part", "flat"):
            size = self.length(kind)
            i, j, k = r.randrange(size), r.randrange(size), r.randrange(size)
            a = r.randrange(size)
            b = r.randint(a + 1, size)
            forms = [
                ("item", f"{y}[{i}] = {E()}"),
                ("item from items", f"{y}[{i}] = {y}[{j}] * {y}[{k}]"),
                ("slice", f"{y}[{a}:{b}] = {E()}"),
                ("slice op=", f"{y}[{a}:{b}] {r.choice('+-*')}= {E()}"),
                ("item op=", f"{y}[{i}] {r.choice('+-*')}= {E()}"),
                ("op=", f"{y} {r.choice('+-*')}= {E()}"),
                ("op= array", f"{y} += s * {y}"),
                ("np.add.at", f"np.add.at({y}, [{i}, {i}], {E()})"),
                ("np.subtract.at", f"np.subtract.at({y}, [{i}, {j}], {E()})"),
                ("whole slice", f"{y}[:] = {y} * {E()}"),
            ]
            rare = [
                ("out=", f"np.multiply({y}, {E()}, out={y})"),
                ("fill", f"{y}.fill({E()})"),
                ("copyto", f"np.copyto({y}, {E()})"),
                ("positional out", f"np.sin({y}, {y})"),
            ]
            if not self.smooth or r.random() < 0.3:
                rare.append(("sort", f"{y}.sort()"))
        else:
            size = 2 if kind == "part_mat" else d
            i, j = r.randrange(size), r.randrange(d)
            forms = [
                ("item", f"{y}[{i}, {j}] = {E()}"),
                ("row op=", f"{y}[{i}] += {E()}"),
                ("column op=", f"{y}[:, {j}] *= {E()}"),
                ("op=", f"{y} {r.choice('+-*')}= {E()}"),
                ("np.add.at", f"np.add.at({y}, ([{i}, {i}], [{j}, {j}]), {E()})"),
                ("row", f"{y}[{i}] = {y}[{i}] * {E()}"),
            ]
            rare = [("out=", f"np.add({y}, {E()}, out={y})"), ("fill", f"{y}.fill({E()})")]
        label, line = r.choice(rare) if r.random() < 0.08 else r.choice(forms)
        if label == "sort":
            self.smooth = False
        lines.append(indent + line)
        self.tag("write " + label)

    def context(self, lines: list) -> str:
        """Where the writes go: the body, a loop or a branch (the indent of its body)."""
        r = self.rng
        where = r.choices(["top", "loop", "branch"], weights=[6, 2, 2])[0]
        self.tag("in " + where)
        if where == "loop":
            lines.append(f"    for t{self.fresh('')} in range({r.choice(['2', 'n + 1'])}):")
            return "        "
        if where == "branch":
            lines.append(f"    if n {r.choice(['>=', '<'])} {r.randrange(3)}:")
            return "        "
        return "    "

    def reads(self, names: list[str]) -> str:
        """The result: reads the arguments (after the writes) and the written names."""
        r = self.rng
        terms = ["np.sum(x * x)", "np.sum(np.sin(W) * W)", "s * np.sum(W @ x)", "np.sum(np.cos(x))"]
        terms = r.sample(terms, r.randint(1, 3))
        for v in names:
            terms.append(r.choice([f"np.sum(np.sin({v}))", f"np.sum({v} * {v})", f"np.sum({v}) * s"]))
        r.shuffle(terms)
        return " + ".join(terms)

    def argument_program(self, lines: list) -> list[str]:
        """A name for an argument (or a second name for it), written."""
        r = self.rng
        base, kind = r.choice([("x", "vec")] * 3 + [("W", "mat")])
        self.tag("argument " + base)
        sharing = r.random() < 0.75
        expression, out, tag = self.spelling(base, kind, sharing)
        self.tag(tag)
        y = self.fresh("y")
        if not sharing and r.random() < 0.15:  # np.zeros_like(x), then y[:] = x
            lines += [f"    {y} = np.zeros_like({base})", f"    {y}[:] = {base}"]
            self.tag("fresh np.zeros_like(x) then y[:] = x")
            out = kind
        else:
            lines.append(f"    {y} = {expression}")
        target, target_kind = y, out
        if out in SHARING and r.random() < 0.25:  # a second spelling of the first
            second = r.random() < 0.6
            expression, target_kind, tag = self.spelling(y, out, second)
            target = self.fresh("z")
            lines.append(f"    {target} = {expression}")
            self.tag("chained " + tag)
        indent = self.context(lines)
        for _ in range(r.choice([1, 1, 2])):
            self.write(target, target_kind, lines, indent)
        return [target] if r.random() < 0.7 else []

    def local_program(self, lines: list) -> list[str]:
        """An array of the function's own, a name that may share it, a write into one, a read of the other."""
        r = self.rng
        base, kind = r.choice([("x", "vec"), ("x", "vec"), ("W", "mat")])
        y = self.fresh("a")
        lines.append(f"    {y} = {base} * {self.scalar()}")
        self.tag("local array")
        expression, out, tag = self.spelling(y, kind, r.random() < 0.8)
        v = self.fresh("v")
        lines.append(f"    {v} = {expression}")
        self.tag("local " + tag)
        indent = self.context(lines)
        if r.random() < 0.5:
            self.write(y, kind, lines, indent)
            self.tag("written: the local array")
        else:
            self.write(v, out, lines, indent)
            self.tag("written: its other name")
        return [y, v]

    def program(self) -> str:
        lines = [f"def {self.name}(x, W, s, n):", "    _tick()"]
        if self.rng.random() < 0.2:
            lines.append("    c0 = np.sum(x) * s")
        names = self.local_program(lines) if self.rng.random() < 0.25 else self.argument_program(lines)
        lines.append(f"    return {self.reads(names)}" + (" + c0" if "    c0 = np.sum(x) * s" in lines else ""))
        return "\n".join(lines) + "\n"
