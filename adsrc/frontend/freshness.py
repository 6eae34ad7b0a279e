"""Freshness: which arrays a write ``y[i] = v`` may change, decided at the write itself.

Input: a parsed function and its :class:`~adsrc.frontend.aliasing.Aliasing`.
Output: :meth:`Freshness.writable`, whether a write (``y[i] = v``,
``y[i] += v``, ``np.add.at(y, i, v)``) is proven to change an array that
no other name still used afterwards can see, and that the function made
itself (or, where asked, that is one of its parameters' arrays).

aliasing.py's :meth:`~adsrc.frontend.aliasing.Aliasing.writable_arrays`
answers per name, for the whole function; this analysis follows the code
from the top, statement by statement, and keeps for each local name the
abstract objects it may hold at that point:

* ``("site", node, "recent")``: the array made by one evaluation of a
  fresh-array expression (a constructor, ``.copy()``, arithmetic), the last
  one made there; ``("site", node, "old")`` any earlier one. Each
  evaluation demotes what the names held of the site to "old" (recency),
  so ``new = u.copy(); new[...] = ...; u = new`` in a loop is seen to write
  an array ``u`` does not hold: ``u`` holds the previous iteration's copy;
* ``("param", p)``: the object the parameter ``p`` was given;
* :data:`NEW`: a new object not known to be an array (a number, a list
  display, whose items the name then holds beside it);
* :data:`UNKNOWN`: anything else (a global, an item of a container, a view,
  what a call returned that may be its argument).

A write is proven where every object the written name may hold is a site
(or an accepted parameter's object), and no other name that may hold one
of them is read after the write (liveness): Python would show the write
through that name, which the derivative does not model. Containers count
as names holding what they hold (``xs = [y]``). The analysis is path
sensitive: a point is reached in one or more *cases*, each its own map of
what the names hold, so that names swapped after a write (``a, b = b, a``,
double buffers, three rotated) are seen to hold different arrays in every
case, where the union of the cases would have both hold both. Branches
join by keeping the cases of each (less those another case covers). After
each statement a case forgets the names no later statement reads (a loop's
target after its loop), so that cases differing only there become one.
Past :data:`CASES` cases, or after too many rounds of a loop, the cases
that agree on what the written names (``y`` of ``y[i] = v``) hold merge
into their union, so that a number summed on many paths before a double
buffer does not blur the buffers; past :data:`CASES` of those, all merge.
Loops run to a fixpoint; a statement the analysis does not model makes the
names it binds hold :data:`UNKNOWN`.
"""
from __future__ import annotations

import gast

from ..ir.dataflow import liveness
from .aliasing import Aliasing, _GROWING

UNKNOWN = ("unknown",)
NEW = ("new",)  # a new object not known to be an array (a list display holding the objects beside it, a number)
State = dict  # name -> frozenset of abstract objects
States = list  # the cases a point may be reached in: each a State (path-sensitive, so that a and b
# swapped, ``a, b = b, a``, are still seen to hold different arrays in every case)
CASES = 8  # the most cases kept at a point; past it, one case holds what any case held


def _union(a: State, b: State) -> State:
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in a.keys() | b.keys()}


def _below(a: State, b: State) -> bool:
    """Whether every name holds in ``a`` only what it may hold in ``b``."""
    return all(v <= b.get(k, frozenset()) for k, v in a.items())


def _join(a: States | None, b: States | None, keys: frozenset = frozenset()) -> States | None:
    """The states of either path: their cases, less those another case covers; past :data:`CASES`
    cases, the cases that agree on what the names of ``keys`` hold merge into one (their union), and
    past :data:`CASES` of those, all do."""
    if a is None:
        return None if b is None else list(b)
    if b is None:
        return list(a)
    cases: list[State] = []
    for case in list(a) + list(b):
        if any(_below(case, kept) for kept in cases):
            continue
        cases = [kept for kept in cases if not _below(kept, case)] + [case]
    return _merged_by(cases, keys) if len(cases) > CASES else cases


def _merged_by(cases: States, keys: frozenset) -> States:
    """The cases merged where they agree on the names of ``keys``; one case if that leaves too many.
    (Any union is sound, a name then may hold what it held in any of the merged cases: keeping apart
    what the written names hold keeps what the writes are decided by.)"""
    groups: dict[tuple, States] = {}
    for case in cases:
        groups.setdefault(tuple(sorted((k, case[k]) for k in keys if k in case)), []).append(case)
    return [_merged(cases)] if len(groups) > CASES else [_merged(group) for group in groups.values()]


def _merged(cases: States) -> State:
    merged: State = {}
    for case in cases:
        merged = _union(merged, case)
    return merged


def _leq(a: States | None, b: States | None) -> bool:
    if a is None:
        return True
    if b is None:
        return False
    return all(any(_below(case, other) for other in b) for case in a)


class Freshness:
    """The flow-sensitive facts of one function's writes (computed when made).

    ``params``: whether a parameter's own array counts as writable (the caller's array, which adsrc
    then writes as Python does: api/written.py); otherwise only arrays the function made do.
    """

    def __init__(self, aliasing: Aliasing, params: bool = False):
        self.aliasing = aliasing
        self.params = params
        node = aliasing.parsed.node
        self._before: dict[int, States] = {}  # id(write statement) -> the cases of what the names hold before it
        self._live: dict[int, set[str]] = {}  # id(write statement) -> the names read after it
        self._statements: dict[int, gast.stmt] = {}  # id(what is written: y[...], or y of np.add.at) -> the write
        self._nested = {n.id for inner in _nested_scopes(node) for n in gast.walk(inner)
                        if isinstance(n, gast.Name)}
        args = node.args
        start: State = {a.id: frozenset({("param", a.id)}) for a in args.posonlyargs + args.args + args.kwonlyargs}
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                start[extra.id] = frozenset({UNKNOWN})
        self._loops: list[tuple[list, list]] = []
        self._shapes: dict[int, tuple] = {}  # id(expression) -> what _shape found
        self._returned: frozenset = frozenset()  # what the function's return statements may give
        self._holders: list[str | None] = []  # the hidden holders of the iterables of the loops around a statement
        self._around: dict[int, set[str]] = {}  # id(write statement) -> the holders live at it
        # the names written into (y of y[i] = v): where cases must merge, those that agree on these do
        self._keys = frozenset(name for stmt in _all_statements(node.body) if (name := _written_name(stmt)))
        self._after: dict[int, set[str]] = {}  # id(statement) -> the names read after it (before rebinding)
        liveness(node.body, set(), self._note_after)
        self._run(node.body, [start])
        for key in self._before:
            if key in self._after:
                self._live[key] = self._after[key] | self._around[key]

    # -- the question ---------------------------------------------------------------------------
    def writable(self, stmt: gast.stmt) -> bool:
        """Whether the write ``stmt`` (an assignment to ``y[...]``, or ``np.add.at(y, ...)`` as a statement)
        changes only an array no other name read afterwards holds, one the function made (or a
        parameter's, if ``params``), in every case the write may be reached in."""
        name = _written_name(stmt)
        cases, live = self._before.get(id(stmt)), self._live.get(id(stmt))
        if name is None or not cases or live is None or name in self._nested:
            return False
        for state in cases:
            held = state.get(name, frozenset())
            if not held or not all(self._writable_object(o) for o in held):
                return False
            if any(other != name and state.get(other, frozenset()) & held for other in live):
                return False
        return True

    def writable_target(self, target: gast.AST) -> bool:
        """:meth:`writable` of the write whose target (``y[...]``, or ``y`` of ``np.add.at(y, ...)``) this is."""
        stmt = self._statements.get(id(target))
        return stmt is not None and self.writable(stmt)

    def sharers(self, target: gast.AST) -> list[str]:
        """The other names read after the write into ``target`` that may hold the array it writes, where
        that array is one it may write (made here, or a parameter's)."""
        stmt = self._statements.get(id(target))
        if stmt is None or id(stmt) not in self._live:
            return []
        name, found = _written_name(stmt), set()
        for state in self._before[id(stmt)]:
            held = state.get(name, frozenset())
            if not held or not all(self._writable_object(o) for o in held):
                return []  # refused for what it may hold already
            found |= {other for other in self._live[id(stmt)] if other != name and state.get(other, frozenset()) & held}
        return sorted(found)

    def returns_param(self, param: str) -> bool:
        """Whether a return statement may give the object the parameter ``param`` was given (or an array
        sharing its memory, or a container holding it)."""
        return ("param", param) in self._returned

    def may_share(self, stmt: gast.stmt, other: str) -> bool:
        """Whether ``other`` may hold, at the write ``stmt``, an array the write changes (True where the
        write was not followed: in code the analysis does not model)."""
        cases = self._before.get(id(stmt))
        name = _written_name(stmt)
        if not cases or name is None:
            return True
        for state in cases:
            held = state.get(name, frozenset())
            if not held or UNKNOWN in held or state.get(other, frozenset()) & held:
                return True
        return False

    def holds_made(self, stmt: gast.stmt) -> bool:
        """Whether the name the write ``stmt`` writes holds, in every case, only arrays the function made
        (not a view, not what a call returned): then reading that name after the write reads what was
        written, as Python's would."""
        cases = self._before.get(id(stmt))
        name = _written_name(stmt)
        return bool(cases) and name is not None and all(
            state.get(name) and all(o[0] == "site" for o in state[name]) for state in cases)

    def written_params(self, target: gast.AST) -> list[str]:
        """The parameters whose given object the write into ``target`` may change."""
        stmt = self._statements.get(id(target))
        if stmt is None:
            return []
        name = _written_name(stmt)
        return sorted({o[1] for state in self._before.get(id(stmt), []) for o in state.get(name, frozenset())
                       if o[0] == "param"})

    def _writable_object(self, obj: tuple) -> bool:
        return obj[0] == "site" or (self.params and obj[0] == "param")

    def _joined(self, a: States | None, b: States | None) -> States | None:
        return _join(a, b, self._keys)

    def _note_after(self, stmt: gast.stmt, live: set[str]) -> None:
        self._after[id(stmt)] = self._after.get(id(stmt), set()) | live

    def _kept(self, stmt: gast.stmt, cases: States | None) -> States | None:
        """The cases after ``stmt`` told only by the names still read after it (and the names nested
        scopes read, and the loops' hidden holders): a name no later statement reads (a loop's target after
        the loop) would otherwise keep apart cases that agree on all that matters, doubling them per loop."""
        live = self._after.get(id(stmt))
        if cases is None or live is None:
            return cases
        keep = live | self._nested
        return self._joined([{k: v for k, v in state.items() if k in keep or " " in k} for state in cases], [])

    # -- what an expression may evaluate to ---------------------------------------------------------
    def _objects(self, value: gast.AST, state: State) -> frozenset:
        if isinstance(value, gast.IfExp):
            return self._objects(value.body, state) | self._objects(value.orelse, state)
        if isinstance(value, gast.Name):
            return state.get(value.id, frozenset()) if value.id in self.aliasing.locals else frozenset({UNKNOWN})
        fresh, sources, marker = self._shape(value)
        if fresh:
            return frozenset({("site", id(value), "recent")})
        return frozenset({marker}).union(*(state.get(name, frozenset()) for name in sources))

    def _shape(self, value: gast.AST) -> tuple[bool, tuple[str, ...], tuple]:
        """What does not change from one visit of an expression to the next: whether it makes a new array,
        the names whose objects it may share, and the marker of what else it may be."""
        key = id(value)
        if key not in self._shapes:
            aliasing = self.aliasing
            fresh = aliasing.makes_fresh_array(value)
            sources = () if fresh else tuple(aliasing.sources(value))
            marker = NEW if fresh or aliasing.ownership(value) == "new" else UNKNOWN
            self._shapes[key] = (fresh, sources, marker)
        return self._shapes[key]

    @staticmethod
    def _made(value: gast.AST) -> set[int]:
        """The sites an expression's evaluation makes a new object of (every fresh subexpression may)."""
        return {id(n) for n in gast.walk(value) if isinstance(n, gast.expr)}

    @staticmethod
    def _demote(state: State, sites: set[int]) -> None:
        for name, held in state.items():
            if any(o[0] == "site" and o[2] == "recent" and o[1] in sites for o in held):
                state[name] = frozenset(("site", o[1], "old") if o[0] == "site" and o[1] in sites else o
                                        for o in held)

    def _bind(self, state: State, target: gast.AST, value: gast.AST | None, objects: frozenset) -> None:
        if isinstance(target, gast.Name):
            state[target.id] = objects
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, gast.Starred) for e in value.elts + target.elts):
                parts = [self._objects(v, state) for v in value.elts]
                for t, v, objs in zip(target.elts, value.elts, parts):
                    self._bind(state, t, v, objs)
            else:  # items of what is unpacked
                for n in gast.walk(target):
                    if isinstance(n, gast.Name):
                        state[n.id] = objects | {UNKNOWN}
        elif isinstance(target, gast.Starred):
            self._bind(state, target.value, None, objects | {UNKNOWN})
        else:  # xs[i] = v, obj.a = v: the container holds v (an array only copies the values)
            root = target
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name):
                held = state.get(root.id, frozenset())
                if not (root is target.value and isinstance(target, gast.Subscript) and held
                        and all(o[0] in ("site", "param") for o in held)):
                    state[root.id] = held | objects

    # -- statements -------------------------------------------------------------------------------------
    def _run(self, stmts: list[gast.stmt], cases: States | None) -> States | None:
        for stmt in stmts:
            if cases is None:
                return None
            cases = self._kept(stmt, self._statement(stmt, cases))
        return cases

    def _statement(self, stmt: gast.stmt, cases: States) -> States | None:
        if _written_name(stmt) is not None:
            self._statements[id(_write_target(stmt))] = stmt
            self._around[id(stmt)] = {h for h in self._holders if h is not None}
            self._before[id(stmt)] = self._joined(self._before.get(id(stmt)), cases)
        walruses = [n for n in _own_nodes(stmt) if isinstance(n, gast.NamedExpr)]
        if walruses:
            cases = [dict(state) for state in cases]
            for state in cases:
                for walrus in walruses:
                    state[walrus.target.id] = frozenset().union(*state.values()) | {UNKNOWN}  # may be anything
        if isinstance(stmt, gast.If):
            return self._joined(self._run(stmt.body, cases), self._run(stmt.orelse, cases))
        if isinstance(stmt, (gast.For, gast.While)) and not stmt.orelse:
            return self._loop(stmt, cases)
        if isinstance(stmt, gast.Return):
            if stmt.value is not None:
                for state in cases:
                    self._returned |= self._objects(stmt.value, state)
            return None
        if isinstance(stmt, (gast.Break, gast.Continue)) and self._loops:
            breaks, continues = self._loops[-1]
            (breaks if isinstance(stmt, gast.Break) else continues).append(cases)
            return None
        if isinstance(stmt, gast.Raise):
            return None
        return self._joined([self._simple(stmt, dict(state)) for state in cases], [])

    def _simple(self, stmt: gast.stmt, state: State) -> State:
        """What the names hold after a statement with no statements in it (or one not modelled), in one case."""
        if isinstance(stmt, (gast.Assign, gast.AnnAssign)):
            if stmt.value is None:
                return state
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
            objects = self._objects(stmt.value, state)
            self._demote(state, self._made(stmt.value))
            self._bind(state, target, stmt.value, objects)
            if isinstance(stmt, gast.Assign):
                for extra in stmt.targets[1:]:
                    self._bind(state, extra, stmt.value, objects)
            return state
        if isinstance(stmt, gast.AugAssign):
            if isinstance(stmt.target, gast.Name):
                # in place for an array, a new object for a number (neither holds e); a list or another
                # object may come to hold what e holds (xs += [y])
                held = state.get(stmt.target.id, frozenset())
                array = held and all(o[0] in ("site", "param") for o in held)
                objects = frozenset() if array else self._objects(stmt.value, state)
                self._demote(state, self._made(stmt.value) | {id(stmt)})
                state[stmt.target.id] = held | objects | {("site", id(stmt), "recent")}
            else:
                self._bind(state, stmt.target, None, self._objects(stmt.value, state))
            return state
        if isinstance(stmt, gast.Expr):
            call = stmt.value
            if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                    and call.func.attr in _GROWING and isinstance(call.func.value, gast.Name):
                grown = state.get(call.func.value.id, frozenset())
                for part in list(call.args) + [k.value for k in call.keywords]:
                    grown |= self._objects(part, state)
                state[call.func.value.id] = grown
            return state
        if isinstance(stmt, (gast.Pass, gast.Assert, gast.Break, gast.Continue)):
            return state
        # Not modelled (a local def, with, try): what it binds may hold anything; writes in it are not proven.
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                state[n.id] = frozenset().union(*state.values()) | {UNKNOWN}
            if isinstance(n, (gast.FunctionDef, gast.ClassDef)):
                state[n.name] = frozenset({UNKNOWN})
        return state

    def _loop(self, stmt: gast.For | gast.While, cases: States) -> States | None:
        head: States | None = cases
        ranged = False
        if isinstance(stmt, gast.For):
            builtin = self.aliasing.static(stmt.iter.func) if isinstance(stmt.iter, gast.Call) else None
            ranged = builtin is range
        holder = None
        if isinstance(stmt, gast.For) and not ranged:
            # Python evaluates the iterable once; what it holds stays reachable (its later items) for the
            # whole loop, as if a name read at every step held it.
            holder = f"the iterable of the loop at line {stmt.lineno}:{stmt.col_offset + 1}"  # no name has a space
            head = [{**state, holder: self._objects(stmt.iter, state)} for state in head]
        self._holders.append(holder)
        breaks: list = []
        rounds = 0
        while True:
            body_in = [dict(state) for state in head]
            if isinstance(stmt, gast.For):
                for state in body_in:
                    items = state[holder] | {UNKNOWN} if holder else frozenset()
                    self._bind(state, stmt.target, None, items)
            self._loops.append((breaks, continues := []))
            out = self._run(stmt.body, body_in)
            self._loops.pop()
            for jump in continues:
                out = self._joined(out, jump)
            new_head = self._joined(head, out)
            rounds += 1
            if rounds > 2 * CASES and new_head is not None:
                new_head = _merged_by(new_head, self._keys if rounds <= 3 * CASES else frozenset())  # (bounds the rounds)
            if _leq(new_head, head):
                break
            head = new_head
        self._holders.pop()
        after = head
        for jump in breaks:
            after = self._joined(after, jump)
        if holder is not None and after is not None:
            after = [{k: v for k, v in state.items() if k != holder} for state in after]
        return after


def _written_name(stmt: gast.stmt) -> str | None:
    """The name a write statement writes into: ``y`` of ``y[...] = v``, ``y[...] op= v``, ``np.add.at(y, ...)``,
    and ``y op= v`` (in place where ``y`` holds an array)."""
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            return target.value.id
        if isinstance(stmt, gast.AugAssign) and isinstance(target, gast.Name):
            return target.id
        return None
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "at" \
            and stmt.value.args and isinstance(stmt.value.args[0], gast.Name):
        return stmt.value.args[0].id
    return None


def _write_target(stmt: gast.stmt) -> gast.AST:
    if isinstance(stmt, gast.Assign):
        return stmt.targets[0]
    if isinstance(stmt, gast.AugAssign):
        return stmt.target  # y[...], or y of y op= v
    return stmt.value.args[0]


def _own_nodes(stmt: gast.stmt):
    """A statement's nodes, not those of the statements or scopes nested in it."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in gast.iter_child_nodes(node):
            if not isinstance(child, (gast.stmt, gast.Lambda, gast.FunctionDef, gast.ListComp, gast.SetComp,
                                      gast.DictComp, gast.GeneratorExp)):
                stack.append(child)


def _nested_scopes(node: gast.FunctionDef):
    """The functions and lambdas defined in a function (whose reads see the names' bindings when they run)."""
    for n in gast.walk(node):
        if n is not node and isinstance(n, (gast.FunctionDef, gast.Lambda)):
            yield n


def _all_statements(stmts: list[gast.stmt]):
    """The statements of a body and of the statements in it (not of functions defined in it)."""
    for stmt in stmts:
        yield stmt
        if not isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _all_statements(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                yield from _all_statements(handler.body)
