"""Writes through views and aliases: an augmented assignment or a subscripted write on a
traced value keeps numpy's meaning or is refused.

In numpy ``v = x[:1]; v *= 3`` and ``y = x; y += 1`` change ``x``, and ``y[2] = v`` changes
``y`` for every name of it. ``v *= 3`` on a tracer computes ``v * 3`` and rebinds ``v``, which
is numpy's meaning when no other name sees that memory: so an in-place operator first looks for
such a name, among the local variables of the user's frames, from the one doing the write out
to the transform's call (and one level into their lists, tuples, dicts and the attributes of
their objects, ``self.head``): the same tracer under another name, or a tracer of the same
memory (its base, a view of it, another view of its base). A fresh accumulator
(``total += term``), seen by one name only, rebinds. Where there is one, and for
``y[idx] = v`` always (``write_into``; ``y[idx] += v`` runs as a read, the operator and that
write), the write goes into the tracer itself: its slots take the new value's (derivative
rules hold values one level down, never the tracer object, so what they recorded stays), and
through it into the tracers of the same memory that were taken by basic indices
(``_write``). A tracer of the memory reached through a view of another kind (a diagonal,
``.imag``) cannot be written so: a name holding one refuses the write. Reshaped and transposed
views (``Relaid``) are written back whole.

Which results are views follows numpy: basic indexing (slices, ``None``, ``...``, fewer integers
than dimensions), ``reshape``, ``ravel``, ``transpose``/``.T``, ``swapaxes``, ``squeeze``,
``expand_dims``, ``moveaxis``, ``.real``. A copy in numpy (``x[[0, 1]]``, ``x[0]`` of a vector,
``x.flatten()``, ``x * 1``) is no view here either.

A name that its function never reads again (``fgrad.core.liveness``: a temporary the caller
rebinds before reading, as a simulation's loop does) is no observer: it may see the change or
not, the function computes numpy's result either way, so the write rebinds.

What it does not see: a name in a frame outside the transform's call, or a container or an
attribute nested two levels deep (``self.layers[0].w``). A tracer that is no view and that
only the name assigned to holds (a fresh accumulator) is told by its reference count and
skips the look; the look costs 3-5 us per operator (``docs/reliability.md``, section 11, has
the measurements).
"""
import ast
import dis
import linecache
import sys
from sys import getrefcount

import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors, liveness
from ..core.fpwarnings import fgrad_code
from ..core.tracer import Tracer


class Viewable(Tracer):
    """A tracer that may show another's memory, as numpy's view does (the array tracers
    derive from this class). ``_base`` is None but on a view, where it is the tracer viewed.
    Every tracer's constructor sets it: an unset slot's read raises (1.6 us, too much for each
    in-place operator), and an instance dict made per view instead measured 1% slower on a
    row of indexing (an 8-round interleaved A/B) and holds a dict per view. ``_index``, set
    with ``_base``, is the basic index that took the view (``base[index]``), a ``Relaid``
    (``reshape``, ``transpose``), or None for a view of another kind (``diagonal``,
    ``.imag``): a write reaches a view, or its base, through the first two only
    (``_write``)."""
    __slots__ = ("_base", "_index")


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


class Relaid:
    """How a view showing every entry of its base in another layout (``reshape``,
    ``transpose``) was taken, both ways: ``read(base, view)`` gives the view's value from a
    (new) value of its base, ``back(value, base)`` the base's value whose view ``value`` is
    (a write into the view goes back whole). ``fgrad.numpy.layout`` makes them."""
    __slots__ = ("read", "back")

    def __init__(self, read, back):
        self.read, self.back = read, back


def view_of(out, base, index=None):
    """Mark the traced ``out`` as a view of ``base`` (numpy would give a view), taken by the
    basic index ``index`` (``base[index]``) or relaid (a ``Relaid``) if it was; returns
    it."""
    if out is not base and isinstance(out, Viewable) and isinstance(base, Tracer):
        out._base = base
        out._index = index
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
        # (a copy is no view, and no record holds the new object)
        for own in (Viewable.__dict__["_base"], Viewable.__dict__["_index"],
                    Tracer.__dict__["_held"]):
            slots.remove(own)
    return slots


_SLOTS = {}


def _items(value):
    """What a name holding ``value`` sees: it, the items of a list, tuple or dict, or the
    attributes of an object of the user's (``self.head = self.y[:2]``: ``head`` was unseen,
    and read after a write into ``y`` it gave its old values)."""
    cls = value.__class__
    if cls in (list, tuple):
        return value
    if cls is dict:
        return value.values()
    if cls.__dictoffset__ and cls.__module__ not in _NOT_USERS and \
            not isinstance(value, _NO_OBJECTS):  # (__dictoffset__: asked of the class, as
        try:  # arrays and tracers have none)
            attributes = value.__dict__
        except Exception:  # (a proxy's own __dict__ property may fail: no attributes seen)
            attributes = None
        if attributes.__class__ is dict:
            return (value, *attributes.values())
    return (value,)


# (modules, classes and functions hold no array of the user's computation; numpy's and the
# interpreter's own objects neither)
_NO_OBJECTS = (type, type(sys), type(_items), type(print))
_NOT_USERS = frozenset(["builtins", "numpy", "functools"])


def in_place(forward, symbol):
    """The augmented assignment ``symbol`` (``"*="``) of an array tracer: ``forward``'s new
    array, which Python binds to the name, or, where another name sees the memory, the
    tracer itself written in place (``_augmented``).

    A tracer that is no view and that nothing but the name assigned to holds (its reference
    count says so: a fresh accumulator's) needs no look at the frames; that saves 3-5 us
    per operator. Every other one (a view, an input the transform holds, an alias) is
    looked for among the user's names."""
    def method(self, o):
        if self._base is not None or getrefcount(self) > _ONE_NAME:
            return _augmented(self, o, forward, symbol)
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


def _augmented(x, o, forward, symbol):
    """``x <symbol>= o`` where another name may see ``x``'s memory (see the module's text):
    the result rebound where no name that its function reads again does, else written into
    ``x`` in place, and through it into every tracer of the same memory that such a name
    holds (``_write``)."""
    user = sys._getframe(2)
    if fgrad_code(user):  # fgrad's own rules rebind their locals knowingly
        return forward(x, o)
    seen = _seen(x, user)
    # the name assigned to (or the list holding it) is seen once in the user's frame; and
    # ``y[1:] += v``: Python writes the result into ``y`` next (``y.__setitem__``)
    if _one_name(seen, x) or _stores_into_subscript(user):
        return forward(x, o)
    # a name that nothing reads again may see the change or not: numpy's result either way
    # (asked only here: the bytecode is read where the write would otherwise go through)
    target = _stored_name(user) or "x"
    seen = [s for s in seen if s[:2] == (target, "") or liveness.may_read(s[4], s[0])]
    if _one_name(seen, x):
        return forward(x, o)

    def new():
        out = forward(x, o)
        # (numpy writes in the array's dtype, a same-kind cast)
        if not _onp.can_cast(out.dtype, x.dtype, "same_kind"):
            raise TypeError(f"`{target} {symbol} ...`: cannot cast the result from "
                            f"{out.dtype} to the array's {x.dtype} (numpy's same_kind "
                            "rule for an in-place operator)")
        return in_dtype(out, x.dtype)

    _write(x, new, [s for s in seen if s[:2] != (target, "")],
           lambda s: errors.write_through(target, symbol, AT_CALLS[symbol], *_how(x, s)),
           f"`{target} {symbol} ...`", ())
    return x


def in_dtype(value, dtype):
    """``value`` cast to the ``dtype`` of the array it is written into, as numpy casts it
    (every write here: subscripted, augmented, ``out=``, ``ufunc.at``). A list of values is
    the array numpy makes of it (``y[[0, 2]] = [1.0, 2.0]``)."""
    if isinstance(value, (list, tuple)):
        value = fnp.asarray(value)
    return value if fnp.result_type(value) == dtype else fnp.astype(value, dtype)


def write_into(x, written, user, shown):
    """``x[idx] = value`` on the array tracer ``x``, run in the frame ``user``, where
    ``written()`` gives ``x.at[idx].set(value)`` (``shown()`` the statement where its source
    line does not tell): ``x`` becomes it in place (``_write``)."""
    statement = subscript_write(user)
    shown = shown() if statement is None else statement[0]
    others = [s for s in _seen(x, user) if s[3] is not x and liveness.may_read(s[4], s[0])]
    _write(x, written, others, lambda s: errors.write_seen_elsewhere(shown, *_how(x, s)),
           shown, statement[1:] if statement is not None else ())


def write_whole(x, written, shown):
    """``x`` takes the value ``written()`` of its shape in place, as numpy's in-place
    functions and methods write (``np.copyto(x, v)``, ``x.sort()``, ``np.add.at(x, i, v)``):
    ``write_into`` from the user's frame, the first outside fgrad's code."""
    user = sys._getframe(1)
    while user is not None and fgrad_code(user):
        user = user.f_back
    if user is None:  # (fgrad's own call: no user's name sees the memory)
        _write(x, written, [], None, f"`{shown}`", ())
        return
    write_into(x, written, user, lambda: f"`{shown}`")


def _write(x, written, others, refused, shown, instead):
    """``x`` takes the value ``written()`` in place, so every name holding ``x`` sees it, as
    numpy's names of one array do; so do the tracers of the same memory that the names
    ``others`` hold (``_seen``'s, read again): the arrays ``x`` was taken from by basic
    indices or relaid (``Relaid``: reshaped, transposed) take the write where ``x`` shows
    them, up to the first that is no such view, and every other view of that one (with the
    views it was taken through) is read again from it. Refused (TracerMutationError):
    another tracer of the memory reached otherwise (through ``diagonal``, ``.imag``:
    ``refused(one of others)`` is raised); a tracer that a transform run inside ``x``'s
    holds as one of its values (``x`` closed over by a function given to ``vjp``: its record
    would read the written array instead of the one it recorded; ``Tracer._held``); and a
    value of such a transform (``x`` outlives it)."""
    # (x, the array x was taken from, ..., the first no such view; x alone where no other
    # name reads the memory again)
    chain = _taken_from(x) if others else [x]
    top = chain[-1]
    family = {}  # (the other tracers to write, each with the views from ``top`` to it:
    for s in others:  # the others' and the arrays they were taken from on the way)
        ups = _taken_from(s[3])
        if ups[-1] is not top:
            raise refused(s)
        for k, t in enumerate(ups[:-1]):
            if all(t is not c for c in chain):
                family[id(t)] = (t, ups[k:-1][::-1])
    family = list(family.values())
    if any(getattr(t, "_held", False) for t in (*chain, *(t for t, _ in family))):
        raise errors.mutation(f"{shown} (into an array that a transform run inside this one "
                              "holds as it was, for its derivative)", *instead)
    new = written()
    if new.__class__ is not x.__class__ or new._trace is not x._trace:
        raise errors.mutation(f"{shown} (a value of a transform run inside the array's)",
                              *instead)
    values = [new]
    for child in chain[:-1]:  # (each array viewed takes the write where its view shows it)
        link, v, base = child._index, values[-1], child._base
        values.append(link.back(v, base) if link.__class__ is Relaid else base.at[link].set(v))
    for t, v in zip(chain, values):
        _become(t, v)
    for t, path in family:
        v = values[-1]
        for view in path:
            link = view._index
            v = link.read(v, view) if link.__class__ is Relaid else v[link]
        _become(t, v)
    # (what ``top`` views otherwise, no name reads again: ``top`` is an array of its own)
    top._base = None


def _taken_from(t):
    """``[t, the array t was taken from, ...]`` up to the first that is no view taken by a
    basic index or relaid."""
    chain = [t]
    while t._base is not None and t._index is not None:
        t = t._base
        chain.append(t)
    return chain


def _become(t, new):
    """The tracer ``t`` holds ``new``'s value from now on (a view stays one)."""
    for slot in _slots(t.__class__):
        try:
            slot.__set__(t, slot.__get__(new))
        except AttributeError:  # (unset in ``new``)
            pass


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
