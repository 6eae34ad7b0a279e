"""Loops: ``for`` over enumerate, zip, reversed, dicts and their views, as loops adsrc can differentiate.

A mixin of :class:`~adsrc.frontend.desugar.Desugar` (which gives it the
namer, the builtins' names and the runtime's), lowering every ``for`` loop of
a desugared body:

* ``for i, x in enumerate(xs, start)`` is a plain loop ``for x in xs`` with
  a counter beside it, so it iterates as Python does (a dict gives its keys);
* ``for a, b in zip(as_, bs)`` is an index loop, which only a sequence
  (list, tuple, range, str, NumPy array) runs as Python would: a dict or a
  dict view is zipped as the list of what iterating it gives; anything else
  evidently not a sequence (a set) is refused at compile time, and an
  argument that turns out not to be one before the loop runs
  (``loop_length``);
* ``for x in reversed(xs)`` is an index loop from the end, ``reversed(xs)``
  inside a zip reads ``xs[-1 - i]``;
* ``for k, v in d.items()`` (any view) and ``for k in d`` for a dict made in
  the function run over a list of the items: the same items in the same
  order, since nothing in the function can change a dict;
* a loop whose iterable is a name the loop itself rebinds (``for x in x``)
  runs over the object the name held when the loop began; tuple loop
  targets are unpacked in the body;
* ``a, b = e`` (loop targets included) becomes ``a, b = unpacked(e, 2,
  where)``: what Python's unpacking iterates (a dict's keys), checked for
  length, for the later passes that read items by position.
"""
from __future__ import annotations

import copy

import gast

from ..errors import UnsupportedSyntax
from ..ir.build import assign, call, const, located, name, store
from ..ir.dataflow import names as name_nodes
from ..ir.naming import stored_names
from ..rules.iterables import unpacked, zip_star, zipped_star

# Methods whose result is a dict view: never indexed by position.
_DICT_VIEWS = ("keys", "values", "items")


def _names_in(nodes) -> set[str]:
    return {n.id for node in nodes for n in name_nodes(node)}


def _rebound(loop: gast.For) -> set[str]:
    """The names a loop assigns: its target's and its body's."""
    return stored_names(loop.body) | _names_in([loop.target])


class LoopLowering:
    """The loop lowering of :class:`Desugar` (see the module docstring)."""

    def lower_loops(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if hasattr(stmt, field):
                    setattr(stmt, field, self.lower_loops(getattr(stmt, field)))
            if isinstance(stmt, gast.For):
                out.extend(self._lower_for(stmt))
            else:
                out.append(stmt)
        return out

    def _sequence(self, expr: gast.expr, hint: str, before: list, loop: gast.For) -> gast.expr:
        """The sequence a loop indexes: a name, bound to a fresh one if the loop rebinds it
        (Python iterates over the object the name held when the loop began)."""
        if isinstance(expr, gast.Name) and expr.id not in _rebound(loop):
            return expr
        seq = self.namer.fresh(hint)
        before.append(assign(seq, expr, expr))
        return name(seq)

    def _builtin_call(self, node: gast.expr) -> str | None:
        """The name of the builtin ``node`` calls (zip, enumerate), if it is one, without ``*``."""
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and self.is_builtin(node.func.id) \
                and not any(isinstance(a, gast.Starred) for a in node.args) \
                and all(k.arg is not None for k in node.keywords):
            return node.func.id
        return None

    def zip_of_starred(self, node: gast.expr) -> gast.expr | None:
        """``zip(*e)`` where its items are consumed at once (a loop, ``list(...)``, an unpacking) as
        ``zip_star(e, 'file:line')``, the list of tuples it yields (rules/iterables.py): how many sequences
        it zips is known when it runs. None for any other expression."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "zip"
                and self.is_builtin("zip") and len(node.args) == 1 and isinstance(node.args[0], gast.Starred)
                and not node.keywords and "zip_star" in self.runtime):
            return None
        helper = self.runtime["zip_star"]
        self.parsed.closure[helper] = zip_star
        return located([call(helper, node.args[0].value, const(self.parsed.where(node)))], node)[0]

    def _lower_for(self, loop: gast.For) -> list[gast.stmt]:
        it, target, before = loop.iter, loop.target, []
        if self._star_zip(loop):
            return self._lower_star_zip(loop)
        if self.zip_of_starred(it) is not None:  # for pair in zip(*xs): over the list of its tuples
            loop.iter = it = self.zip_of_starred(it)
        func = self._builtin_call(it)
        if func == "enumerate" and 1 <= len(it.args) + len(it.keywords) <= 2 and it.args \
                and all(k.arg == "start" for k in it.keywords):
            return self._lower_enumerate(loop)
        if func == "zip" and it.args and not it.keywords:
            return self._lower_zip(loop)
        if func == "reversed" and len(it.args) == 1 and not it.keywords:
            return self._lower_reversed(loop)
        if self._as_sequence(it) is not it:
            # for k, v in d.items(), for k in d: over a list of what iterating gives, which a loop can
            # index; the same items in the same order, since nothing in the function can change the dict.
            loop.iter = it = self._as_sequence(it)
        if isinstance(it, gast.Name) and it.id in _names_in([target]):
            # for x in x: the loop runs over what x held first.
            loop.iter = self._sequence(it, f"{it.id}_seq", before, loop)
        if not isinstance(target, gast.Name):
            item = self.namer.fresh("item")
            loop.target = store(item)
            loop.body = located([gast.Assign(targets=[target], value=name(item), type_comment=None)], loop) + loop.body
        return located(before, loop) + [loop]

    def _lower_enumerate(self, loop: gast.For) -> list[gast.stmt]:
        """``for i, x in enumerate(xs, start)``: ``for x in xs`` with a counter, which
        iterates over ``xs`` as Python does (a dict gives its keys)."""
        it, target = loop.iter, loop.target
        start = it.args[1] if len(it.args) > 1 else it.keywords[0].value if it.keywords else const(0)
        pair = isinstance(target, gast.Tuple) and len(target.elts) == 2
        hint = f"next_{target.elts[0].id}" if pair and isinstance(target.elts[0], gast.Name) else "count"
        count = self.namer.fresh(hint)
        step = assign(count, gast.BinOp(left=name(count), op=gast.Add(), right=const(1)))
        if pair:
            index, item = target.elts
            prefix = [gast.Assign(targets=[index], value=name(count), type_comment=None), step]
        else:
            fresh = self.namer.fresh("item")
            item = store(fresh)
            prefix = [gast.Assign(targets=[target], value=gast.Tuple(elts=[name(count), name(fresh)],
                                                                      ctx=gast.Load()), type_comment=None), step]
        before = located([assign(count, start)], loop)
        loop.iter, loop.target = it.args[0], item
        loop.body = located(prefix, loop) + loop.body
        return before + self._lower_for(loop)

    def _lower_zip(self, loop: gast.For) -> list[gast.stmt]:
        """``for a, b in zip(as_, bs)``: ``for i in range(loop_length(where, as_, bs)): a = as_[i]; b = bs[i]``;
        ``loop_length`` checks that each argument is a sequence, which indexing runs as Python's zip
        (``min(len(as_), len(bs))`` where that is evident).
        A zip among the arguments (``zip(xs, zip(ys, zs))``) adds its own to the index loop."""
        it, target, before = loop.iter, loop.target, []
        index = self.namer.fresh("i")
        seqs: list[tuple[gast.expr, gast.expr]] = []
        items = self._zip_items(it, index, loop, before, seqs)
        if all(self._is_sequence(arg) for arg, _ in seqs):
            lengths = [call(self.builtin("len"), copy.deepcopy(seq)) for _, seq in seqs]
            count = lengths[0] if len(lengths) == 1 else call(self.builtin("min"), *lengths)
        else:  # loop_length refuses, when the loop starts, an argument that indexing would not iterate as zip does
            count = call(self.runtime["loop_length"], const(self.parsed.where(it)), *[copy.deepcopy(s) for _, s in seqs])
        loop.iter = call(self.builtin("range"), count)
        if isinstance(target, gast.Tuple) and len(target.elts) == len(items):
            prefix = [gast.Assign(targets=[t], value=v, type_comment=None) for t, v in zip(target.elts, items)]
        else:
            prefix = [gast.Assign(targets=[target], value=gast.Tuple(elts=items, ctx=gast.Load()), type_comment=None)]
        loop.target = store(index)
        loop.body = located(prefix, loop) + loop.body
        return located(before, loop) + [loop]

    def _star_zip(self, loop: gast.For) -> bool:
        """``for a, b in zip(*xs)``: the builtin zip of one starred argument, into a target of names."""
        it, target = loop.iter, loop.target
        return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "zip" \
            and self.is_builtin("zip") and len(it.args) == 1 and isinstance(it.args[0], gast.Starred) \
            and not it.keywords and isinstance(target, (gast.Tuple, gast.List)) \
            and not any(isinstance(e, gast.Starred) for e in target.elts)

    def _lower_star_zip(self, loop: gast.For) -> list[gast.stmt]:
        """``for a, b in zip(*xs)``: as many sequences as the target has names, since each step unpacks one
        item of each into them: ``seq, seq_1 = zipped_star(xs, 2, 'file:line')`` (rules/iterables.py: Python's
        ValueError at the first step where ``xs`` holds another number of sequences, no step where there is
        none), then ``for a, b in zip(seq, seq_1)``."""
        helper = self.runtime["zipped_star"]
        self.parsed.closure[helper] = zipped_star
        count, where = len(loop.target.elts), self.parsed.where(loop.iter)
        seqs = [self.namer.fresh("seq") for _ in range(count)]
        value = call(helper, loop.iter.args[0].value, const(count), const(where))
        split = gast.Assign(targets=[gast.Tuple(elts=[store(s) for s in seqs], ctx=gast.Store())], value=value,
                            type_comment=None)
        loop.iter = located([gast.Call(func=loop.iter.func, args=[name(s) for s in seqs], keywords=[])],
                            loop.iter)[0]
        return located([split], loop) + self._lower_zip(loop)

    def _lower_reversed(self, loop: gast.For) -> list[gast.stmt]:
        """``for x in reversed(xs)``: ``for i in range(len(xs) - 1, -1, -1): x = xs[i]``, over a sequence
        (``loop_length`` refuses, when the loop starts, anything else)."""
        it, before = loop.iter, []
        arg = it.args[0]
        arg = self._as_sequence(arg)  # reversed(d) runs over d's keys, last first
        self._refuse_non_sequence(arg)
        seq = self._sequence(arg, "seq", before, loop)
        if self._is_sequence(arg):
            count = call(self.builtin("len"), copy.deepcopy(seq))
        else:
            count = call(self.runtime["loop_length"], const(self.parsed.where(it)), copy.deepcopy(seq))
        index = self.namer.fresh("i")
        last = gast.BinOp(left=count, op=gast.Sub(), right=const(1))
        loop.iter = call(self.builtin("range"), last, const(-1), const(-1))
        item = gast.Subscript(value=copy.deepcopy(seq), slice=name(index), ctx=gast.Load())
        prefix = [gast.Assign(targets=[loop.target], value=item, type_comment=None)]
        loop.target = store(index)
        loop.body = located(prefix, loop) + loop.body
        return located(before, loop) + [loop]

    def _as_sequence(self, arg: gast.expr) -> gast.expr:
        """``list(arg)`` for a dict or a dict view (what iterating it gives, in order, as a list a loop can
        index: nothing in the function can change the dict), else ``arg``."""
        if self._is_view(arg) or isinstance(arg, (gast.Dict, gast.DictComp)) \
                or (isinstance(arg, gast.Name) and arg.id in self._dicts):
            return located([call(self.builtin("list"), arg)], arg)[0]
        return arg

    def _is_view(self, node: gast.expr) -> bool:
        """True for ``d.keys()``, ``d.values()``, ``d.items()``."""
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in _DICT_VIEWS and not node.args and not node.keywords

    def _zip_items(self, it: gast.Call, index: str, loop: gast.For, before: list, seqs: list) -> list[gast.expr]:
        """The items zip(...) yields at position ``index``: ``seq[index]`` for each argument, a tuple of
        them for an argument that is itself a zip. Collects (argument, sequence) pairs in ``seqs``."""
        items: list[gast.expr] = []
        for arg in it.args:
            if self._builtin_call(arg) == "zip" and arg.args and not arg.keywords:
                items.append(gast.Tuple(elts=self._zip_items(arg, index, loop, before, seqs), ctx=gast.Load()))
                continue
            position: gast.expr = name(index)
            if self._builtin_call(arg) == "reversed" and len(arg.args) == 1 and not arg.keywords:
                arg = arg.args[0]  # zip(reversed(xs), ys): xs[-1 - i], the last items first
                position = gast.BinOp(left=const(-1), op=gast.Sub(), right=name(index))
            arg = self._as_sequence(arg)  # zip(d, xs) pairs d's keys, in order, with xs
            self._refuse_non_sequence(arg)
            seq = self._sequence(arg, "seq", before, loop)
            seqs.append((arg, seq))
            items.append(gast.Subscript(value=copy.deepcopy(seq), slice=position, ctx=gast.Load()))
        return items

    def _is_sequence(self, arg: gast.expr) -> bool:
        """True if ``arg`` evidently evaluates to a sequence: a list or tuple display, a string,
        a call of the builtin range, the list a comprehension became."""
        return isinstance(arg, (gast.List, gast.Tuple)) \
            or (isinstance(arg, gast.Constant) and isinstance(arg.value, str)) \
            or (isinstance(arg, gast.Name) and arg.id in self.lists) \
            or self._builtin_call(arg) in ("range", "list")

    def _refuse_non_sequence(self, arg: gast.expr) -> None:
        """Refuse, before anything runs, a zip (or reversed) over what is evidently not a sequence."""
        remedy = ("adsrc runs zip and reversed over sequences (lists, tuples, arrays, dicts) by position; "
                  "make a list of the items first (sorted(s) for a set)")
        if isinstance(arg, gast.Call) and isinstance(arg.func, gast.Attribute) and arg.func.attr in _DICT_VIEWS:
            raise UnsupportedSyntax(f"zip over .{arg.func.attr}() (a dict view)", self.parsed.where(arg), remedy)
        if isinstance(arg, (gast.Dict, gast.Set, gast.DictComp, gast.SetComp)) \
                or (isinstance(arg, gast.Name) and arg.id in self._dicts):
            raise UnsupportedSyntax("zip over a dict (or set)", self.parsed.where(arg), remedy)

    def check_unpacking(self, stmts: list[gast.stmt]) -> None:
        """``a, b = e``, where ``e`` is no display of two items: ``a, b = unpacked(e, 2, 'file:line')``.
        The later passes read the items by position, which only a sequence of that length gives as
        Python's unpacking does; ``unpacked`` (rules/iterables.py) makes any other iterable (a dict,
        whose keys Python unpacks) the tuple of its items and raises Python's ValueError on a length
        that does not match."""
        helper = self.runtime.get("unpacked")
        if helper is None:
            return
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    self.check_unpacking(getattr(stmt, field))
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List))):
                continue
            count = len(stmt.targets[0].elts)
            value = self.zip_of_starred(stmt.value) or stmt.value  # a, b = zip(*pairs): the tuples it yields
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == count \
                    and not any(isinstance(e, gast.Starred) for e in value.elts):
                continue
            stmt.value = located([call(helper, value, const(count), const(self.parsed.where(stmt)))], stmt)[0]
            self.parsed.closure[helper] = unpacked
