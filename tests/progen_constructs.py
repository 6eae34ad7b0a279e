"""A seeded generator of random programs over the constructs users' own code is made of.

``ConstructsGenerator(rng, k, n, wanted).program()`` writes a module (after
:data:`HEADER`): module-level helpers, constants and derivatives named with
the suffix ``_k``, and ``prog_k(x, a)`` (``x`` a float vector of length
``n``, 4 to 6, ``a`` a float) that returns a float, or ``(float, list of
arrays)`` when ``aux`` is set (differentiated with ``has_aux=True``). Each
program adds two to four of these features to its result ``t``, with random
sizes and constants, and they share its loop counters and helpers:

* ``zip(*xs)``: in a for loop with two or three targets, one target per
  step, ``list(zip(*xs))``, a comprehension, an unzip ``us, vs = zip(*pairs)``
  (pairs written out, made by a comprehension or appended), ``xs`` made by a
  comprehension, the rows of a matrix, and ``zip(*pieces_k(x))`` over the
  program's own generator;
* derivatives called inside: ``adsrc.grad(h)(v)`` (of a module-level ``h``,
  of a local function or lambda capturing ``a``, with ``argnums``/``wrt``),
  ``value_and_grad``, ``adsrc.jvp`` (with ``has_aux=True`` too), steps of
  gradient descent in a loop, ``adsrc.hvp(h)(P_k, w)`` (in its direction
  only: its point is a constant), and ``grad``, ``hvp``, ``value_and_grad``
  held in module-level variables. ``h`` may itself write through a view,
  run a generator, zip, or call a helper with defaults; it never calls a
  derivative, so the program's gradient is second order at most (a third is
  refused, docs/fidelity.md);
* lists appended in a loop, returned with a float by a helper
  (``return parts, s``) and summed, or appended in the program;
* helpers whose defaults are module-level values (``scale=SCALE_k``,
  ``fn=np.tanh``, ``fn=act_k``, a tuple of weights), called with and
  without them, by position and by keyword;
* the program's generator functions (``yield`` statements, or yields in a
  for loop, with a module-level default) iterated in a for loop, ``sum``,
  ``list`` and a comprehension;
* ``functools.reduce`` with a lambda, a module-level function or a local
  def, ``sum(map(lambda ...))``, ``list(map(...))``, ``functools.partial``
  binding a differentiable value (in the program or at module level), and a
  local function called by its name;
* writes through views of arrays the program made: ``v = buf[i:]`` (or
  strided) written by item, slice, ``v[j] op= e`` and in a loop, then read
  with ``buf``; a view of that view; rows ``r = M[i]`` of a matrix (in a
  loop, and of a view ``M[1:]``), a column, a block; and double buffers (a
  shift, a Jacobi sweep, three rotated) swapped after the write.

Every expression is smooth and bounded, so central finite differences are a
fair reference; every program runs as plain Python. What docs/fidelity.md
says adsrc refuses is not generated (a view bound twice, ``v op= e`` on a
view, writes through ``.T`` or ``.reshape``, ``sorted(zip(*xs))``, a third
derivative). ``tags`` names the constructs a program uses, :data:`TAGS`
every tag; the program uses each tag in ``wanted`` (and others at random), so
that a few dozen seeds can reach every construct.
"""
from __future__ import annotations

import random
from collections.abc import Iterable

HEADER = "import functools\n\nimport numpy as np\n\nimport adsrc\n\n\n"

FEATURES = ["zip", "derivative", "lists", "defaults", "generator", "fold", "view"]
TAGS = frozenset(
    [f"zip:{k}" for k in ("for", "for3", "step", "list", "comprehension", "unzip", "generator", "built", "matrix",
                          "unzip literal", "unzip comprehension", "unzip appended")]
    + [f"derivative:{k}" for k in ("grad", "grad two args", "value_and_grad", "jvp", "jvp scalar", "hvp",
                                   "global grad", "global hvp", "global value_and_grad", "descent", "jvp aux",
                                   "local", "wrt")]
    + [f"inner h:{k}" for k in ("plain", "view", "generator", "zip", "defaults")]
    + [f"lists:{k}" for k in ("helper", "helper kept", "inline")] + ["aux"]
    + [f"defaults:{k}" for k in ("none", "position", "keyword", "fn", "module fn", "tuple")]
    + [f"generator:{k}" for k in ("yields", "loop", "default", "for", "sum", "list", "comprehension")]
    + [f"fold:{k}" for k in ("reduce lambda", "reduce vector", "reduce function", "reduce local", "sum map",
                             "list map", "partial keyword", "partial position", "partial global", "local call")]
    + [f"sequence:{k}" for k in ("literal", "generator", "appended", "comprehension")]
    + [f"view:{k}" for k in ("write", "view of view", "strided", "loop write", "row", "rows loop", "row of view",
                             "column", "block", "double buffer", "jacobi", "rotation", "full write", "item update",
                             "slice write", "read view")])


# The feature a tag's construct is made by, where its prefix does not say.
FAMILY = {"inner h": "derivative", "sequence": "fold", "aux": ""}


class ConstructsGenerator:
    def __init__(self, rng: random.Random, k: int | str, n: int, wanted: Iterable[str] = ()):
        self.rng, self.k, self.n = rng, k, n
        self.wanted = set(wanted)  # tags this program must use (drawn at random otherwise); met ones are removed
        self.name = f"prog_{k}"
        self.tags: set[str] = set()
        self.defs: dict[str, str] = {}  # module-level name -> source, helpers a definition needs first
        self.shapes: dict[str, tuple] = {}  # generator or helper -> (items it makes, their length (0: floats), ...)
        self.names = 0
        self.aux = False
        self.first: list[str] | None = None  # statements that go first in the program's body (buffers)

    def fresh(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    # -- choices, random or wanted ---------------------------------------------------------------------
    def pick(self, prefix: str, options: list[str]) -> str:
        """One of ``options`` (tagged ``prefix + option``): a wanted one, else one at random."""
        for option in options:
            if prefix + option in self.wanted:
                self.wanted.discard(prefix + option)
                return option
        return self.rng.choice(options)

    def chance(self, tag: str, p: float) -> bool:
        """True if ``tag`` is wanted, else with probability ``p``."""
        if tag in self.wanted:
            self.wanted.discard(tag)
            return True
        return self.rng.random() < p

    def wants(self, prefix: str) -> bool:
        return any(tag.startswith(prefix) for tag in self.wanted)

    def const(self, lo: float = 0.2, hi: float = 0.9) -> str:
        return f"{self.rng.uniform(lo, hi):.2f}"

    # -- expressions (smooth, bounded) --------------------------------------------------------------------
    def vec(self, leaves: list[str], scals: list[str], depth: int = 0) -> str:
        """A vector expression over ``leaves`` (all of one length) and the scalars ``scals``."""
        r = self.rng
        if depth >= 2 or (depth and r.random() < 0.35):
            return r.choice(leaves)
        e = lambda: self.vec(leaves, scals, depth + 1)
        return r.choice([
            lambda: f"np.sin({e()})",
            lambda: f"np.tanh({e()})",
            lambda: f"np.exp(-0.5 * {e()} ** 2)",
            lambda: f"({e()} {r.choice('+-*')} {e()})",
            lambda: f"({e()} * {self.scal(leaves, scals, depth + 1)})",
            lambda: f"(np.cos({e()}) * {self.const()})",
        ])()

    def scal(self, leaves: list[str], scals: list[str], depth: int = 0) -> str:
        r = self.rng
        if depth >= 2 or (depth and r.random() < 0.35):
            return r.choice(scals)
        v = lambda: self.vec(leaves, scals, depth + 1)
        s = lambda: self.scal(leaves, scals, depth + 1)
        return r.choice([
            lambda: f"np.sum({v()})",
            lambda: f"np.tanh({v()} @ {v()})",
            lambda: f"{v()}[{r.randrange(self.n)}]",
            lambda: f"np.sin({s()})",
            lambda: f"({s()} {r.choice('+-*')} {s()})",
            lambda: f"np.exp(-{s()} ** 2)",
        ])()

    def xvec(self) -> str:
        """A vector of length n made of x and a."""
        return self.vec(["x", "x[::-1]", "np.sin(x)", "(x * a)"], ["a", "x[0]", self.const()])

    def xscal(self) -> str:
        return self.scal(["x", "np.tanh(x)"], ["a", f"x[{self.rng.randrange(self.n)}]", self.const()])

    def elem(self, u: str, c: str = "a") -> str:
        """An elementwise function of the name (or item) ``u`` and the scalar ``c``."""
        return self.rng.choice([f"np.sin({u})", f"np.tanh({u}) * {c}", f"{u} * {c}", f"np.exp(-{u} ** 2)",
                                f"np.cos({u} * {c})", f"({u} + {c}) * {self.const()}"])

    def item(self, length: int, v: str = "x", c: str = "a") -> str:
        """An item of a sequence: a float (``length`` 0) or a vector of ``length`` taken from ``v``."""
        r = self.rng
        i = r.randrange(self.n - max(length, 1) + 1)
        e = f"{v}[{i}]" if length == 0 else f"{v}[{i}:{i + length}]"
        for _ in range(r.randint(0, 2)):
            e = r.choice([f"np.sin({e})", f"np.tanh({e})", f"({e} * {c})", f"({e} * {self.const()})",
                          f"np.exp(-{e} ** 2)", f"({e} + {c})"])
        return e

    def loop_item(self, length: int, v: str = "x", c: str = "a") -> str:
        """An item made in ``for i in range(m)`` (m + length <= n)."""
        e = f"{v}[i]" if length == 0 else f"{v}[i:i + {length}]"
        return self.rng.choice([e, f"np.sin({e}) * {c}", f"np.tanh({e} * {c})", f"{e} * {c}",
                                f"np.exp(-{e} ** 2) + {c}"])

    def length(self) -> int:
        return self.rng.choice([0, 0, 2, 3])

    def count(self, length: int) -> int:
        """How many items ``for i in range(count)`` can make with :meth:`loop_item` of ``length``."""
        return self.rng.randint(2, max(2, self.n - length))

    # -- module-level definitions -------------------------------------------------------------------------
    def need(self, name: str) -> str:
        """The module-level name with this program's suffix, its source written on first use."""
        full = f"{name}_{self.k}"
        if full not in self.defs:
            source = getattr(self, f"def_{name}")(full)  # what it needs is written first
            self.defs[full] = source
        return full

    def def_SCALE(self, name: str) -> str:
        return f"{name} = {self.const(0.3, 1.2)}\n"

    def def_WEIGHTS(self, name: str) -> str:
        return f"{name} = ({', '.join(self.const() for _ in range(self.rng.randint(2, 3)))})\n"

    def def_P(self, name: str) -> str:
        return f"{name} = np.array([{', '.join(self.const(-0.8, 0.8) for _ in range(self.n))}])\n"

    def def_act(self, name: str) -> str:
        return f"def {name}(v):\n    return {self.rng.choice(['np.sin(v) * 0.5 + v * 0.5', 'np.tanh(v * 1.3)'])}\n"

    def def_helper(self, name: str) -> str:
        fn = self.rng.choice(["np.tanh", "np.sin", self.need("act")])
        body = self.rng.choice(["fn(v * scale) + v * 0.1", "fn(v) * scale", "np.cos(v) * scale + fn(v * 0.5)"])
        return f"def {name}(v, scale={self.need('SCALE')}, fn={fn}):\n    return {body}\n"

    def def_mix(self, name: str) -> str:
        return (f"def {name}(v, weights={self.need('WEIGHTS')}):\n    s = 0.0\n    for c in weights:\n"
                f"        s = s + np.sum({self.elem('v', 'c')})\n    return s\n")

    def def_pair(self, name: str) -> str:
        return f"def {name}(w, v):\n    return np.sum(np.sin(w) * v) + np.sum(w * w) * 0.1\n"

    def def_pieces(self, name: str) -> str:
        """A generator of yield statements: 2 or 3 equal-length slices of v."""
        count = self.rng.randint(2, 3)
        length = self.rng.randint(1, self.n // count)
        self.shapes[name] = (count, length)
        yields = "".join(f"    yield {self.rng.choice(['{}', 'np.sin({})', '{} * 0.5'])}\n".format(
            f"v[{j * length}:{(j + 1) * length}]") for j in range(count))
        self.tags.add("generator:yields")
        return f"def {name}(v):\n{yields}"

    def def_stream(self, name: str) -> str:
        """A generator yielding in a for loop: m floats or vectors of v, scaled by c."""
        length = self.length()
        count = self.count(length)
        self.tags.add("generator:loop")
        default = f"={self.need('SCALE')}" if self.wants("generator:default") or self.rng.random() < 0.4 else ""
        self.shapes[name] = (count, length, bool(default))
        return (f"def {name}(v, c{default}):\n    for i in range({count}):\n"
                f"        yield {self.loop_item(length, 'v', 'c')}\n")

    def def_collect(self, name: str) -> str:
        """Appends in a loop; returns the list with a float (either order, as ``self.shapes`` says)."""
        length = self.length()
        count = self.count(length)
        order = self.rng.choice(["parts, s", "s, parts"])
        self.shapes[name] = (count, length, order)
        return (f"def {name}(v, c):\n    parts = []\n    s = 0.0\n    for i in range({count}):\n"
                f"        parts.append({self.loop_item(length, 'v', 'c')})\n"
                f"        s = s + {self.loop_item(0, 'v', 'c')}\n    return {order}\n")

    def def_comb(self, name: str) -> str:
        return f"def {name}(acc, u):\n    return acc * {self.const()} + np.sum({self.elem('u', '0.7')})\n"

    def def_PART(self, name: str) -> str:
        return f"{name} = functools.partial({self.need('helper')}, fn={self.rng.choice(['np.sin', 'np.tanh'])})\n"

    def def_h(self, name: str) -> str:
        """A scalar function of a length-n vector, made of one of the constructs too at times."""
        n = self.n
        kind = self.pick("inner h:", ["plain", "plain", "view", "generator", "zip", "defaults"])
        self.tags.add(f"inner h:{kind}")
        scal = self.scal(["v", "np.sin(v)", "v[::-1]"], ["v[0]", f"v[{n - 1}]", self.const()])
        if "v" not in scal:
            scal = f"({scal} + np.sum(v * v) * 0.3)"
        if kind == "view":
            body = (f"    buf = np.zeros({n})\n    w = buf[1:]\n    w[0] = v[0] * v[1]\n"
                    f"    w[1:] = np.sin(v[2:]) * v[1:-1]\n    return np.sum(buf * v) + {scal}\n")
        elif kind == "generator":
            gen = self.need("pieces")
            body = f"    t = {scal}\n    for p in {gen}(v):\n        t = t + np.sum(np.sin(p) * p)\n    return t\n"
        elif kind == "zip":
            body = (f"    cols = [v[:-1], np.tanh(v[1:])]\n    t = {scal}\n    for p, q in zip(*cols):\n"
                    f"        t = t + p * q\n    return t\n")
        elif kind == "defaults":
            body = f"    return np.sum({self.need('helper')}(v) * v) + {scal}\n"
        else:
            body = f"    return {scal}\n"
        return f"def {name}(v):\n{body}"

    def def_hc(self, name: str) -> str:
        return f"def {name}(v, c):\n    return np.sum({self.elem('v', 'c')} * v) + c * np.sum(np.sin(v))\n"

    def def_hf(self, name: str) -> str:
        body = self.vec(["v", "v[::-1]", "np.sin(v)"], ["v[0]", self.const()])
        return f"def {name}(v):\n    return {body} * v\n"

    def def_hfa(self, name: str) -> str:
        return f"def {name}(v):\n    return np.sum({self.elem('v', '0.6')}), {self.elem('v', '1.3')}\n"

    def def_DH(self, name: str) -> str:
        return f"{name} = adsrc.grad({self.need('h')})\n"

    def def_HV(self, name: str) -> str:
        return f"{name} = adsrc.hvp({self.need('h')})\n"

    def def_VG(self, name: str) -> str:
        return f"{name} = adsrc.value_and_grad({self.need('h')})\n"

    # -- sequences and their sums ---------------------------------------------------------------------------
    def sequence(self, lines: list[str]) -> tuple[str, int]:
        """A name bound to a list of floats or vectors, and their length (0: floats); its statements go to
        ``lines``."""
        r = self.rng
        seq = self.fresh("seq")
        kind = self.pick("sequence:", ["literal", "literal", "generator", "appended", "comprehension"])
        self.tags.add(f"sequence:{kind}")
        if kind == "generator":
            gen = self.need(r.choice(["stream", "pieces"]))
            args = "x, a" if gen.startswith("stream") else "x"
            lines.append(f"{seq} = list({gen}({args}))")
            return seq, self.shapes[gen][1]
        length = self.length()
        count = self.count(length)
        if kind == "literal":
            lines.append(f"{seq} = [{', '.join(self.item(length) for _ in range(count))}]")
        elif kind == "appended":
            lines += [f"{seq} = []", f"for i in range({count}):", f"    {seq}.append({self.loop_item(length)})"]
        else:
            lines.append(f"{seq} = [{self.loop_item(length)} for i in range({count})]")
        return seq, length

    def total(self, seq: str) -> str:
        """A float from the list ``seq`` of floats or of vectors of one length."""
        p = self.fresh("p")
        return self.rng.choice([f"sum(np.sum({self.elem(p)}) for {p} in {seq})", f"np.sum({seq}[0] * {seq}[-1])",
                                f"np.sum(sum({seq})) * {self.const()}", f"sum([np.sum({p}) * a for {p} in {seq}])",
                                f"np.sum(np.stack({seq}) ** 2) * {self.const()}"])

    # -- features: statements that add to t -----------------------------------------------------------------
    def f_zip(self) -> list[str]:
        r = self.rng
        kind = self.pick("zip:", ["unzip"] if self.wants("zip:unzip ") else
                         ["for", "for3", "step", "list", "comprehension", "unzip", "generator", "built", "matrix"])
        self.tags.add(f"zip:{kind}")
        cols, p, q = self.fresh("cols"), self.fresh("p"), self.fresh("q")
        length, count = self.length(), r.randint(2, 4)
        if kind == "built":  # as many sequences as targets, known only when the comprehension runs
            width = r.randint(2, 3)
            size = r.randint(2, self.n - width + 1)
            targets = [self.fresh("p") for _ in range(width)]
            return [f"{cols} = [{self.loop_item(size)} for i in range({width})]",
                    f"for {', '.join(targets)} in zip(*{cols}):", f"    t = t + {' * '.join(targets)}"]
        if kind == "matrix":  # the rows of a 2-d array
            rows = [self.xvec() for _ in range(r.randint(2, 3))]
            targets = [self.fresh("p") for _ in rows]
            return [f"{cols} = np.stack([{', '.join(rows)}])", f"for {', '.join(targets)} in zip(*{cols}):",
                    f"    t = t + {self.elem(targets[0], targets[1])}{' * ' + targets[2] if len(rows) == 3 else ''}"]
        if kind == "generator":
            gen = self.need("pieces")
            count, length = self.shapes[gen]
            targets = ", ".join(f"{p}{j}" for j in range(count))
            return [f"for {targets} in zip(*{gen}({r.choice(['x', 'np.sin(x)', 'x * a'])})):",
                    f"    t = t + {' * '.join(f'{p}{j}' for j in range(count))}"]
        if kind == "unzip":
            us, vs = self.fresh("us"), self.fresh("vs")
            how = self.pick("zip:unzip ", ["literal", "comprehension", "appended"])
            self.tags.add(f"zip:unzip {how}")
            if how == "literal":
                pairs = ", ".join(f"({self.item(length)}, {self.item(0)})" for _ in range(count))
                built = [f"{cols} = [{pairs}]"]
            elif how == "comprehension":
                built = [f"{cols} = [({self.loop_item(length)}, {self.loop_item(0)}) for i in range({self.count(length)})]"]
            else:
                built = [f"{cols} = []", f"for i in range({self.count(length)}):",
                         f"    {cols}.append(({self.loop_item(length)}, {self.loop_item(0)}))"]
            use = r.choice([f"np.sum(sum({us})) * {vs}[0] + sum({vs})", f"np.sum({us}[0] * {us}[-1]) + {vs}[-1]",
                            f"sum(np.sum({p}) * {q} for {p}, {q} in zip({us}, {vs}))"])
            return built + [f"{us}, {vs} = zip(*{cols})", f"t = t + {use}"]
        width = 3 if kind == "for3" else 2
        seqs = []
        for j in range(width):
            size = count if j == 0 or r.random() < 0.8 else r.randint(2, 4)  # zip stops at the shortest
            seqs.append("[" + ", ".join(self.item(length if j != 1 else 0) for _ in range(size)) + "]")
        lines = [f"{cols} = {r.choice(['[{}]', '({})'])}".format(", ".join(seqs))]
        if kind in ("for", "for3"):
            targets = [p, q] + ([self.fresh("w")] if width == 3 else [])
            lines += [f"for {', '.join(targets)} in zip(*{cols}):",
                      f"    t = t + np.sum({self.elem(p, q)}{' * ' + targets[2] if width == 3 else ''})"]
        elif kind == "step":
            step = self.fresh("step")
            lines += [f"for {step} in zip(*{cols}):", f"    t = t + np.sum({step}[0]) * {step}[-1]"]
        elif kind == "list":
            rows = self.fresh("rows")
            lines.append(f"{rows} = list(zip(*{cols}))")
            lines += r.choice([[f"for {p} in {rows}:", f"    t = t + np.sum({p}[0] * {p}[1])"],
                               [f"t = t + np.sum({rows}[0][0]) * {rows}[-1][1] + len({rows}) * 0.1"]])
        else:
            inner = f"np.sum({self.elem(p, q)})"
            lines.append(r.choice([f"t = t + sum([{inner} for {p}, {q} in zip(*{cols})])",
                                   f"t = t + sum({inner} for {p}, {q} in zip(*{cols}))"]))
        return lines

    def f_derivative(self) -> list[str]:
        r = self.rng
        of_h = ["grad", "value_and_grad", "jvp scalar", "hvp", "global grad", "global hvp", "global value_and_grad",
                "descent"]  # those that differentiate h
        kind = self.pick("derivative:", of_h if self.wants("inner h:") else
                         of_h + ["grad two args", "jvp", "jvp aux", "local", "wrt"])
        self.tags.add(f"derivative:{kind}")
        v, w = self.xvec(), self.xvec()
        g = self.fresh("g")
        if kind == "descent":  # steps of gradient descent inside
            y, step = self.fresh("y"), r.choice([f"adsrc.grad({self.need('h')})", self.need("DH")])
            return [f"{y} = {v}", f"for k in range({r.randint(1, 3)}):",
                    f"    {y} = {y} - {r.choice(['0.1', 'a * 0.2'])} * {step}({y})", f"t = t + np.sum(np.sin({y}))"]
        if kind == "jvp aux":
            y, aux = self.fresh("y"), self.fresh("aux")
            return [f"{y}, {g}, {aux} = adsrc.jvp({self.need('hfa')}, ({v},), ({w},), has_aux=True)",
                    f"t = t + {y} * {self.const()} + {g} + np.sum({aux} * {r.choice(['x', 'a', '0.5'])})"]
        if kind == "local":  # a local function or lambda, capturing a
            local = self.fresh("loc")
            body = f"np.sum({self.elem('u')} * u)"
            lines = r.choice([[f"def {local}(u):", f"    return {body}"], [f"{local} = lambda u: {body}"]])
            return lines + [f"{g} = adsrc.grad({local})({v})", f"t = t + np.sum({g} * {w})"]
        if kind == "wrt":
            if r.random() < 0.5:
                return [f"{g} = adsrc.grad({self.need('hc')}, argnums=1)({v}, a)", f"t = t + {g} * {self.const()}"]
            return [f"{g} = adsrc.grad({self.need('hc')}, wrt=(0, 1))({v}, a)",
                    f"t = t + np.sum({g}[0] * {w}) + {g}[1]"]
        if kind == "grad":
            return [f"{g} = adsrc.grad({self.need('h')})({v})", f"t = t + np.sum({g} * {w})"]
        if kind == "grad two args":
            return [f"{g} = adsrc.grad({self.need('hc')})({v}, a)", f"t = t + np.sum({g} * {w})"]
        if kind == "value_and_grad":
            val = self.fresh("val")
            return [f"{val}, {g} = adsrc.value_and_grad({self.need('h')})({v})",
                    f"t = t + {val} * {self.const()} + np.sum({g} * {w})"]
        if kind == "jvp":
            y = self.fresh("y")
            return [f"{y}, {g} = adsrc.jvp({self.need('hf')}, ({v},), ({w},))",
                    f"t = t + np.sum({y}) * {self.const()} + np.sum({g} * {self.xvec()})"]
        if kind == "jvp scalar":
            y = self.fresh("y")
            return [f"{y}, {g} = adsrc.jvp({self.need('h')}, ({v},), ({w},))", f"t = t + {y} + {g} * a"]
        if kind == "hvp":  # differentiated in its direction only
            return [f"{g} = adsrc.hvp({self.need('h')})({self.need('P')}, {v})", f"t = t + np.sum({g} * {w})"]
        if kind == "global grad":
            return [f"t = t + np.sum({self.need('DH')}({v}) * {w})"]
        if kind == "global hvp":
            return [f"t = t + np.sum({self.need('HV')}({self.need('P')}, {v}) * {w})"]
        val = self.fresh("val")
        return [f"{val}, {g} = {self.need('VG')}({v})", f"t = t + {val} + np.sum({g} * {w})"]

    def f_lists(self) -> list[str]:
        r = self.rng
        kind = self.pick("lists:", ["helper", "helper", "helper kept", "inline"])
        self.tags.add(f"lists:{kind}")
        if kind == "inline":
            length = self.length()
            acc = self.fresh("acc")
            count = self.count(length)
            return [f"{acc} = []", f"for i in range({count}):", f"    {acc}.append({self.loop_item(length)})",
                    f"t = t + {self.total(acc)}"]
        collect = self.need("collect")
        _, length, order = self.shapes[collect]
        arg = r.choice(["x", "np.sin(x)", "x * a", "x[::-1]"])
        c = r.choice(["a", self.const(), "np.tanh(a)"])
        if kind == "helper kept":
            res = self.fresh("res")
            parts, s = (f"{res}[0]", f"{res}[1]") if order == "parts, s" else (f"{res}[1]", f"{res}[0]")
            return [f"{res} = {collect}({arg}, {c})", f"t = t + {s} * {self.const()} + np.sum({parts}[0])"]
        parts, s = self.fresh("parts"), self.fresh("s")
        unpack = f"{parts}, {s}" if order == "parts, s" else f"{s}, {parts}"
        return [f"{unpack} = {collect}({arg}, {c})", f"t = t + {s} + {self.total(parts)}"]

    def f_defaults(self) -> list[str]:
        r = self.rng
        if "defaults:tuple" in self.wanted or not self.wants("defaults:") and r.random() < 0.25:
            self.wanted.discard("defaults:tuple")
            self.tags.add("defaults:tuple")
            mix = self.need("mix")
            return [f"t = t + {mix}({self.xvec()}) + {mix}(x, ({r.choice(['a', 'x[0]'])}, {self.const()}))"]
        helper = self.need("helper")
        calls = []
        for _ in range(r.randint(1, 3)):
            kind = self.pick("defaults:", ["none", "position", "keyword", "fn", "module fn"])
            self.tags.add(f"defaults:{kind}")
            extra = {"none": "", "position": f", {r.choice(['a', self.const()])}",
                     "keyword": f", scale={r.choice(['a', 'a * a', self.const()])}",
                     "fn": f", fn={r.choice(['np.sin', 'np.cos', 'np.tanh'])}",
                     "module fn": f", {r.choice(['a', '0.5'])}, {self.need('act')}"}[kind]
            calls.append(f"np.sum({helper}({self.xvec()}{extra}) * {r.choice(['x', 'np.cos(x)', 'a'])})")
        return [f"t = t + {' + '.join(calls)}"]

    def f_generator(self) -> list[str]:
        r = self.rng
        use_pieces = r.random() < 0.5 and not self.wants("generator:loop") and not self.wants("generator:default")
        if "generator:yields" in self.wanted or use_pieces:
            gen = self.need("pieces")
            call = f"{gen}({r.choice(['x', 'np.sin(x)', 'x * a', 'x[::-1]'])})"
        else:
            gen = self.need("stream")
            c = ", " + r.choice(["a", self.const(), "x[0]"])
            if self.shapes[gen][2] and self.chance("generator:default", 0.6):
                c = ""
                self.tags.add("generator:default")
            call = f"{gen}({r.choice(['x', 'np.tanh(x)', 'x * a'])}{c})"
        kind = self.pick("generator:", ["for", "sum", "list", "comprehension"])
        self.tags.add(f"generator:{kind}")
        p = self.fresh("p")
        if kind == "for":
            return [f"for {p} in {call}:", f"    t = t + np.sum({self.elem(p)})"]
        if kind == "sum":
            return [f"t = t + np.sum(sum({call})) * {self.const()}"]
        if kind == "list":
            ps = self.fresh("ps")
            return [f"{ps} = list({call})", f"t = t + np.sum({ps}[0] * {ps}[-1]) + len({ps}) * 0.1"]
        return [r.choice([f"t = t + sum(np.sum({self.elem(p)}) for {p} in {call})",
                          f"t = t + sum([np.sum({p}) * a for {p} in {call}])"])]

    def f_fold(self) -> list[str]:
        r = self.rng
        folds = ["reduce lambda", "reduce vector", "reduce function", "reduce local", "sum map", "list map"]
        kind = self.pick("fold:", folds if self.wants("sequence:") else
                         folds + ["partial keyword", "partial position", "partial global", "local call"])
        self.tags.add(f"fold:{kind}")
        lines: list[str] = []
        if kind == "local call":  # a local function called by its name, twice
            f, u = self.fresh("f"), self.fresh("u")
            return [f"def {f}({u}):", f"    return {self.elem(u)}",
                    f"t = t + np.sum({f}({self.xvec()}) * {f}(x))"]
        if kind.startswith("partial"):
            g = self.fresh("part")
            if kind == "partial keyword":
                bound = r.choice(["a", "a * a", "np.tanh(x[0])", "x[1] * a"])
                lines.append(f"{g} = functools.partial({self.need('helper')}, scale={bound})")
                return lines + [f"t = t + np.sum({g}({self.xvec()}) * {g}(x))"]
            if kind == "partial position":
                lines.append(f"{g} = functools.partial({self.need('pair')}, {self.xvec()})")
                return lines + [f"t = t + {g}({self.xvec()}) + {g}(x * a)"]
            return [f"t = t + np.sum({self.need('PART')}({self.xvec()}, {r.choice(['a', self.const()])}))"]
        seq, length = self.sequence(lines)
        acc, u = self.fresh("acc"), self.fresh("u")
        c = r.choice(["a", self.const(), "np.sin(a)"])
        init = r.choice(["0.0", "a", "x[0] * 0.5"])
        if kind == "reduce lambda":
            lines.append(f"t = t + functools.reduce(lambda {acc}, {u}: {acc} * {c} + np.sum({self.elem(u)}), "
                         f"{seq}, {init})")
        elif kind == "reduce vector":
            start = f"np.zeros({length})" if length else "0.0"
            lines.append(f"t = t + np.sum(functools.reduce(lambda {acc}, {u}: {acc} * {c} + {self.elem(u)}, {seq}, "
                         f"{start}))")
        elif kind == "reduce function":
            lines.append(f"t = t + functools.reduce({self.need('comb')}, {seq}, {init})")
        elif kind == "reduce local":
            step = self.fresh("step")
            lines += [f"def {step}({acc}, {u}):", f"    return {acc} * {c} + np.sum({self.elem(u)})",
                      f"t = t + functools.reduce({step}, {seq}, {init})"]
        elif kind == "sum map":
            lines.append(f"t = t + sum(map(lambda {u}: np.sum({self.elem(u)}) * {c}, {seq}))")
        else:
            ms = self.fresh("ms")
            lines += [f"{ms} = list(map(lambda {u}: np.sum({self.elem(u)}), {seq}))", f"t = t + {ms}[0] * {ms}[-1]"]
        return lines

    def f_view(self) -> list[str]:
        written = [f"view:{k}" for k in ("full write", "item update", "slice write", "read view")]
        kind = self.pick("view:", ["write", "view of view"] if any(t in self.wanted for t in written) else
                         ["write", "view of view", "strided", "loop write", "row", "rows loop", "row of view",
                          "column", "block", "double buffer", "jacobi", "rotation"])
        self.tags.add(f"view:{kind}")
        if kind in ("double buffer", "jacobi", "rotation"):
            return self.buffers(kind)
        if kind in ("row", "rows loop", "row of view", "column", "block"):
            return self.matrix_view(kind)
        return self.vector_view(kind)

    def vector_view(self, kind: str) -> list[str]:
        """A view of a vector the program made, written through; the vector read afterwards."""
        r, n = self.rng, self.n
        buf, v = self.fresh("buf"), self.fresh("v")
        if kind == "strided":
            start, step = r.randint(0, 1), 2
            view, size = f"{buf}[{start}::{step}]", len(range(start, n, step))
        else:
            start = 1 if self.wants("view:slice write") else r.randint(1, 2)
            stop = r.choice([None, n - 1]) if n - 1 - start >= 2 and not self.wants("view:slice write") else None
            size = (stop or n) - start
            view = f"{buf}[{start}:{'' if stop is None else stop}]"
        lines = [f"{buf} = {r.choice([f'np.zeros({n})', 'x.copy()', 'x * a'])}", f"{v} = {view}"]
        if kind == "loop write":
            lines += [f"for i in range({r.randint(1, size)}):", f"    {v}[i] = {self.loop_item(0)}"]
        elif self.chance("view:full write", 0.2):
            self.tags.add("view:full write")
            lines.append(f"{v}[:] = {self.item(size)}")
        for j in sorted(r.sample(range(size), r.randint(1, 2))):
            lines.append(f"{v}[{j}] = {self.xscal()}")
        if self.chance("view:item update", 0.3):
            self.tags.add("view:item update")
            lines.append(f"{v}[{r.randrange(size)}] {r.choice(['+=', '*=', '-='])} {self.xscal()}")
        if size >= 3 and self.chance("view:slice write", 0.3):
            self.tags.add("view:slice write")
            lines.append(f"{v}[1:3] = {self.item(2)}")
        if kind == "view of view":
            w = self.fresh("w")
            lines += [f"{w} = {v}[1:]", f"{w}[0] = {self.xscal()}"]
            if size >= 3 and r.random() < 0.5:
                lines.append(f"{w}[-1] = {w}[0] * 0.5 + a")
        read = ""
        if self.chance("view:read view", 0.4):
            self.tags.add("view:read view")
            read = f" + np.sum({v}) * {self.const()}"
        return lines + [f"t = t + np.sum({buf} * {self.xvec()}){read}"]

    def matrix_view(self, kind: str) -> list[str]:
        """Rows, a column or a block of a matrix the program made, written through; the matrix read afterwards."""
        r, n = self.rng, self.n
        M, row = self.fresh("M"), self.fresh("r")
        rows, cols = r.randint(2, n - 1), r.randint(2, n)
        lines = [f"{M} = np.zeros(({rows}, {cols}))"]
        if kind == "rows loop":
            j = r.choice(["0", f"{cols - 1}", f"i % {cols}"])
            lines += [f"for i in range({rows}):", f"    {row} = {M}[i]",
                      f"    {row}[{j}] = {r.choice(['np.sin(x[i]) * a', 'x[i] * x[i + 1]', 'np.tanh(x[i + 1])'])}"]
            if r.random() < 0.5:
                lines.append(f"    {row}[1:] = {row}[1:] + x[:{cols - 1}] * 0.5")
        elif kind == "column":
            j = r.randrange(cols)
            lines.append(f"{row} = {M}[:, {j}]")
            lines += [f"{row}[{i}] = {self.xscal()}" for i in sorted(r.sample(range(rows), r.randint(1, 2)))]
        elif kind == "block":
            lines += [f"{row} = {M}[1:, 1:]", f"{row}[0, 0] = {self.xscal()}",
                      f"{row}[-1, :] = {self.item(cols - 1)}"]
        else:
            if kind == "row of view":
                Mv = self.fresh("Mv")
                lines += [f"{Mv} = {M}[1:]", f"{row} = {Mv}[{r.randrange(rows - 1)}]"]
            else:
                lines.append(f"{row} = {M}[{r.randrange(rows)}]")
            lines += [f"{row}[{j}] = {self.xscal()}" for j in sorted(r.sample(range(cols), r.randint(1, 2)))]
        lines.append(f"t = t + np.sum({M} @ {r.choice(['x', 'np.sin(x)'])}[:{cols}]) + np.sum({M} * {M})")
        return lines

    def buffers(self, kind: str) -> list[str]:
        """Two (or three) buffers, one written from the other, then swapped (rotated), in a loop."""
        r, n = self.rng, self.n
        u, b, z = self.fresh("u"), self.fresh("b"), self.fresh("z")
        c = r.choice(["a", self.const(), "np.tanh(a)"])
        update = {
            "double buffer": f"{b}[1:] = {u}[:-1] * {c} + {r.choice(['x[1:]', 'np.sin(x[1:])', 'x[:-1] * a'])}",
            "jacobi": f"{b}[1:-1] = ({u}[:-2] + {u}[2:]) * {c} + {r.choice(['x[1:-1]', 'np.sin(x[2:])'])}",
            "rotation": f"{z}[1:] = {b}[:-1] * {c} + {u}[1:] * 0.5 + x[1:]",
        }[kind]
        lines = [f"{u} = {r.choice([f'np.zeros({n})', 'x * 0.5', 'np.tanh(x)'])}", f"{b} = np.zeros({n})"]
        lines += [f"{z} = np.zeros({n})"] * (kind == "rotation")
        lines += [f"for k in range({r.randint(1, 4)}):", f"    {update}"]
        written = z if kind == "rotation" else b
        if r.random() < 0.5:
            lines.append(f"    {written}[0] = {r.choice(['x[0] * a', 'np.sin(a)', f'{u}[1] * 0.5'])}")
        lines.append(f"    {u}, {b}, {z} = {b}, {z}, {u}" if kind == "rotation" else f"    {u}, {b} = {b}, {u}")
        lines.append(f"t = t + np.sum({u} * {self.xvec()}) + np.sum({b}) * {self.const()}")
        self.first = lines
        return lines

    # -- the program -----------------------------------------------------------------------------------------
    def program(self) -> str:
        r = self.rng
        body = [f"t = {self.xscal()}"]
        features = r.sample(FEATURES, r.randint(2, 4))
        for tag in sorted(self.wanted):
            family = tag.split(":")[0]
            family = FAMILY.get(family, family)
            if family and family not in features:
                features.append(family)
        blocks = [getattr(self, f"f_{kind}")() for kind in features]
        # Buffers swapped after four loops (three rotated after two) are refused (KNOWN_REFUSALS in
        # tests/test_random_constructs.py): they come first, before any other loop.
        blocks.sort(key=lambda block: block is not self.first)
        body += [line for block in blocks for line in block]
        ret = "t"
        if self.chance("aux", 0.2):  # returns (loss, list): differentiated with has_aux=True
            self.aux = True
            self.tags.add("aux")
            keep, length = self.fresh("keep"), self.length()
            count = self.count(length)
            body += [f"{keep} = []", f"for i in range({count}):", f"    {keep}.append({self.loop_item(length)} * t)",
                     f"t = t + {self.total(keep)}"]
            ret = f"t, {keep}"
        body.append(f"return {ret}")
        self.wanted -= self.tags
        main = f"def {self.name}(x, a):\n" + "".join(f"    {line}\n" for line in body)
        return "\n\n".join(self.defs.values()) + ("\n\n" if self.defs else "") + main
