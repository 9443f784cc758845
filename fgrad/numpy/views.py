"""Writes through views and aliases: an augmented assignment or a subscripted write on a
traced value keeps numpy's meaning or is refused.

``y[idx] = v`` (and ``y[idx] += v``, which Python runs as a read, the operator and that write)
changes the tracer ``y`` itself into ``y.at[idx].set(v)`` (``write_into``): every name holding
``y`` sees it, as numpy's names of one array do. Another tracer of the same memory cannot be
changed with it, so a name holding one that its function reads again refuses the write.

In numpy ``v = x[:1]; v *= 3`` and ``y = x; y += 1`` change ``x``: the augmented assignment
writes into memory that another name sees. A traced value cannot change in place (derivative
rules hold it as it was when they recorded it), so ``v *= 3`` on a tracer computes ``v * 3``
and rebinds ``v``, which is numpy's meaning only when no other name sees that memory. So an
in-place operator on a tracer first looks for such a name: among the local variables of the
user's frames, from the one doing the write out to the transform's call (and one level into
their lists, tuples and dicts), the same tracer under another name, or a tracer of the same
memory (its base, a view of it, another view of its base). If there is one it raises
``TracerMutationError`` naming both and the functional form; a fresh accumulator
(``total += term``), seen by one name only, rebinds as before.

Which results are views follows numpy: basic indexing (slices, ``None``, ``...``, fewer integers
than dimensions), ``reshape``, ``ravel``, ``transpose``/``.T``, ``swapaxes``, ``squeeze``,
``expand_dims``, ``moveaxis``, ``.real``. A copy in numpy (``x[[0, 1]]``, ``x[0]`` of a vector,
``x.flatten()``, ``x * 1``) is no view here either.

A name that its function never reads again (``fgrad.core.liveness``: a temporary the caller
rebinds before reading, as a simulation's loop does) is no observer: it may see the change or
not, the function computes numpy's result either way, so the write rebinds.

What it does not see: a name in a frame outside the transform's call, an object's attribute, or
a container nested two levels deep. A tracer that is no view and that only the name assigned to
holds (a fresh accumulator) is told by its reference count and skips the look; the look costs
3-5 us per operator (``docs/reliability.md``, section 11, has the measurements).
"""
import ast
import dis
import linecache
import sys
from sys import getrefcount

import numpy as _onp

from ..core import errors, liveness
from ..core.fpwarnings import fgrad_code
from ..core.tracer import Tracer


class Viewable(Tracer):
    """A tracer that may show another's memory, as numpy's view does (the array tracers
    derive from this class). ``_base`` is None but on a view, where it is the tracer viewed.
    Every tracer's constructor sets it: an unset slot's read raises (1.6 us, too much for each
    in-place operator), and an instance dict made per view instead measured 1% slower on a
    row of indexing (an 8-round interleaved A/B) and holds a dict per view."""
    __slots__ = ("_base",)


def root(t):
    """The array whose memory the view ``t`` shows (``t`` itself if it is no view)."""
    while t._base is not None:
        t = t._base
    return t


def is_view_index(idx, x):
    """Whether numpy's ``x[idx]`` is a view of ``x``: basic indexing (integers, slices,
    ``None``, ``...``) that does not take every dimension by an integer (a scalar). (Written
    for speed: it runs on every index of a tracer.)"""
    c = idx.__class__
    if c is int:
        return x._meta.ndim > 1
    if c is slice:
        return True
    parts = idx if c is tuple else (idx,)
    integers = 0
    for i in parts:
        c = i.__class__
        if c is int:
            integers += 1
        elif not (c is slice or i is None or i is Ellipsis):
            if c is bool or not isinstance(i, _onp.integer):
                return False  # advanced indexing: a copy
            integers += 1
    return integers < len(parts) or integers < x.ndim  # (x.ndim: 0 for a Python number)


def view_of(out, base):
    """Mark the traced ``out`` as a view of ``base`` (numpy would give a view); returns it."""
    if out is not base and isinstance(out, Viewable) and isinstance(base, Tracer):
        out._base = base
    return out


def copied(t):
    """numpy's copy of the traced ``t``: the same traced value as a new tracer object, so that
    names bound to the copy and to ``t`` are no aliases (tracers are immutable; only identity
    tells names apart). Other values are returned as they are."""
    if not isinstance(t, Tracer):
        return t
    new = object.__new__(t.__class__)
    new._base = None
    for slot in _slots(t.__class__):
        try:
            slot.__set__(new, slot.__get__(t))
        except AttributeError:  # (unset)
            pass
    return new


def _slots(cls):
    """The member descriptors of the slots of ``cls`` and its bases."""
    slots = _SLOTS.get(cls)
    if slots is None:
        slots = _SLOTS[cls] = [k.__dict__[name] for k in cls.__mro__
                               for name in k.__dict__.get("__slots__", ())]
        slots.remove(Viewable.__dict__["_base"])  # (set to None below: a copy is no view)
        slots.remove(Tracer.__dict__["_held"])  # (no record holds the new object)
    return slots


_SLOTS = {}


def _items(value):
    if value.__class__ in (list, tuple):
        return value
    if value.__class__ is dict:
        return value.values()
    return (value,)


def in_place(forward, symbol):
    """The augmented assignment ``symbol`` (``"*="``) of an array tracer: ``forward``'s new
    array, which Python binds to the name, unless another name sees the memory, which raises.

    A tracer that is no view and that nothing but the name assigned to holds (its reference
    count says so: a fresh accumulator's) needs no look at the frames; that saves 3-5 us
    per operator. Every other one (a view, an input the transform holds, an alias) is
    looked for among the user's names."""
    def method(self, o):
        if self._base is not None or getrefcount(self) > _ONE_NAME:
            refuse_write_through(self, symbol)
        return forward(self, o)
    return method


def _references_of_one_name():
    """``getrefcount(self)`` inside an in-place operator of an object that one name holds,
    measured on this interpreter by a method of the same shape as ``in_place``'s."""
    counts = []

    class Probe:
        def __iadd__(self, o):
            counts.append(getrefcount(self))
            return self

    probe = Probe()
    probe += 0
    return counts[0]


_ONE_NAME = _references_of_one_name()


def _seen(x, user):
    """The names in the user's frames, from ``user`` out to the transform's call, that see
    ``x``'s memory: ``(name, where, holds it directly, the tracer, frame)`` each."""
    frame, memory, seen = user, root(x), []
    while frame is not None and not fgrad_code(frame):
        where = "" if frame is user else f" in {frame.f_code.co_name}()"
        for name, value in frame.f_locals.items():
            for item in _items(value):
                if isinstance(item, Viewable) and (item is x or root(item) is memory):
                    seen.append((name, where, value is item, item, frame))
        frame = frame.f_back
    return seen


def _how(x, seen_item):
    name, where, direct, item, _ = seen_item
    how = ("holds the same array" if not direct else "is the same array" if item is x else
           "is the array it views" if item is root(x) else "views the same memory")
    return f"`{name}`{where}", how


def refuse_write_through(x, symbol):
    """Raise TracerMutationError if another name sees ``x``'s memory (see the module's text);
    called by the in-place operators with the operator (``"*="``)."""
    user = sys._getframe(2)
    if fgrad_code(user):  # fgrad's own rules rebind their locals knowingly
        return
    seen = _seen(x, user)
    # the name assigned to (or the list holding it) is seen once in the user's frame
    if _one_name(seen, x):
        return
    # ``y[1:] += v``: Python writes the result into ``y`` next (``y.__setitem__``), which
    # keeps numpy's meaning or refuses (``write_into``)
    if _stores_into_subscript(user):
        return
    # a name that nothing reads again may see the change or not: numpy's result either way
    # (asked only here: the bytecode is read where the write would otherwise be refused)
    target = _stored_name(user) or "x"
    seen = [s for s in seen if s[:2] == (target, "") or liveness.may_read(s[4], s[0])]
    if _one_name(seen, x):
        return
    name, how = _how(x, next(s for s in seen if s[:2] != (target, "")))
    raise errors.write_through(target, symbol, AT_CALLS[symbol], name, how)


def write_into(x, written, user, shown):
    """``x[idx] = value`` on the array tracer ``x``, run in the frame ``user``, where
    ``written()`` gives ``x.at[idx].set(value)``: ``x`` becomes it in place, so every name
    holding ``x`` sees the write, as numpy's names of one array do. Refused
    (TracerMutationError): a write that a name holding another tracer of the same memory (a
    view of ``x``, the array ``x`` views, another view of it) would miss, where its function
    reads it again; a write into a tracer that a transform run inside ``x``'s holds as one of
    its values (``x`` closed over by a function given to ``vjp``: its record would read the
    written array instead of the one it recorded; ``Tracer._held``); and a value of such a
    transform (``x`` outlives it)."""
    statement = subscript_write(user)
    shown = shown() if statement is None else statement[0]
    instead = statement[1:] if statement is not None else ()
    if getattr(x, "_held", False):
        raise errors.mutation(f"{shown} (into an array that a transform run inside this one "
                              "holds as it was, for its derivative)", *instead)
    others = [s for s in _seen(x, user) if s[3] is not x and liveness.may_read(s[4], s[0])]
    if others:
        name, how = _how(x, others[0])
        raise errors.write_seen_elsewhere(shown, name, how)
    new = written()
    if new.__class__ is not x.__class__ or new._trace is not x._trace:
        raise errors.mutation(f"{shown} (a value of a transform run inside the array's)",
                              *instead)
    for slot in _slots(x.__class__):
        try:
            slot.__set__(x, slot.__get__(new))
        except AttributeError:  # (unset in ``new``)
            pass
    x._base = None  # (now an array of its own: whatever it viewed, nothing reads it again)


def subscript_write(frame):
    """``(statement, functional form)`` for the statement running in ``frame`` where it
    writes into an indexed name, ``y[1:] += v`` or ``y[2] = v``, as its source line holds
    it (``"`y[1:] += ...`"``, ``"y = y.at[1:].add(value) (the function form: ...)"``);
    None where the line holds something else (a statement over several lines, two on one),
    or is fgrad's own."""
    if fgrad_code(frame):
        return None
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    if len(body) != 1:
        return None
    stmt = body[0]
    if stmt.__class__ is ast.AugAssign:
        target, symbol = stmt.target, _SYMBOLS.get(stmt.op.__class__)
    elif stmt.__class__ is ast.Assign and len(stmt.targets) == 1:
        target, symbol = stmt.targets[0], "="
    else:
        return None
    if target.__class__ is not ast.Subscript or target.value.__class__ is not ast.Name or \
            symbol is None:
        return None
    base, index = target.value.id, ast.get_source_segment(text, target.slice)
    call = AT_CALLS[symbol].replace("x[idx]", f"{base}[{index}]")
    return (f"`{ast.get_source_segment(text, target)} {symbol} ...`",
            f"{base} = {base}.at[{index}].{call} (the function form: "
            f"fgrad.numpy.at({base})[{index}].{call})")


# ``.at[]``'s call that writes what an assignment or augmented assignment writes
AT_CALLS = {"=": "set(value)", "+=": "add(value)", "-=": "add(-value)",
            "*=": "multiply(value)", "/=": "divide(value)", "**=": "power(value)",
            "@=": "set(x[idx] @ value)", "//=": "set(x[idx] // value)",
            "%=": "set(x[idx] % value)", "&=": "set(x[idx] & value)",
            "|=": "set(x[idx] | value)", "^=": "set(x[idx] ^ value)"}
_SYMBOLS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.Pow: "**=",
            ast.MatMult: "@=", ast.FloorDiv: "//=", ast.Mod: "%=", ast.BitAnd: "&=",
            ast.BitOr: "|=", ast.BitXor: "^="}


def _one_name(seen, x):
    return len(seen) <= 1 and all(s[3] is x for s in seen)


def _stores_into_subscript(frame):
    """Whether the augmented assignment running in ``frame`` stores into a subscript."""
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset > frame.f_lasti and ins.opname.startswith("STORE_"):
            return ins.opname in ("STORE_SUBSCR", "STORE_SLICE")
    return False


def _stored_name(frame):
    """The name the augmented assignment running in ``frame`` stores to (None: not a name)."""
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset > frame.f_lasti and ins.opname.startswith("STORE_"):
            return ins.argval if isinstance(ins.argval, str) else None
    return None
