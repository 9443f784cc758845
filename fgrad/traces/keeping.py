"""What a tape keeps of the values it records.

Its own copies of the caller's arrays (``Kept``): the caller's code may change an array in
place after the forward pass and before the walk (inside ``f`` itself, or before ``vjp_fn``
runs), which must not change the derivative. And, on a tape walked only backward, no more of
the values than the rules read (``shed``): memory then stays near the residuals'.
"""
import weakref

import numpy as _onp

_ndarray = _onp.ndarray

# below this size a constant is simply copied at each use (cheaper than comparing it with a
# previous copy); above it, an unchanged array shares the copy made the first time
_SHARE_BYTES = 1 << 16

# arrays below this size are kept whatever the rules need: a stand-in would cost more
_SHED_BYTES = 1 << 12


class Kept:
    """A tape's copies of plain arrays: a constant argument, an array in a parameter (an
    index), an input. Copying costs a memcpy per constant per use (a few percent of an
    elementwise op on the same array) and nothing for tracers or scalars, which are
    immutable; a large constant used again unchanged shares one copy (``own``), so loops over
    a big matrix do not multiply it.

    ``inputs`` says how inputs are kept: ``"copy"`` copies them (vjp, linearize, make_tape:
    the caller's code runs between the recording and the walk); ``"read-only"`` copies small
    ones and makes a large one that owns its memory read-only until ``release()`` (grad,
    jacrev, jacfwd: walked before they return; a copy per call of a large input costs its
    allocation, and freeing it made glibc hand memory back to the system on every call, 2.4x
    on a slice-heavy gradient of a 160 kB input); ``"keep"`` keeps them (a checkpoint's
    recomputation, a transpose: their inputs are values fgrad holds already).

    ``shared``: the arrays are kept as they are, uncopied (a tape inside a staged function:
    staging records them and reads them anew at each replay, see ``tracer.STAGING``; a copy
    would be stale)."""

    __slots__ = ("inputs", "shared", "copies", "read_only")

    def __init__(self, inputs, shared):
        self.inputs, self.shared = inputs, shared
        self.copies = {}  # id of a large array -> (a weak reference to it, its copy)
        self.read_only = []  # inputs made read-only, until ``release()``

    def input(self, value):
        """A plain ndarray input, as the policy ``inputs`` keeps it."""
        if self.inputs == "keep" or (self.inputs == "read-only" and
                                     value.nbytes >= _SHARE_BYTES and self._freeze(value)):
            return value
        return self.own(value)

    def _freeze(self, a):
        """Make ``a`` read-only until ``release()``; False where that would not protect its
        values (a view: its memory is writable through its base and other views)."""
        if a.base is not None:
            return False
        if a.flags.writeable:
            a.flags.writeable = False
            self.read_only.append(a)
        return True

    def release(self):
        """Give the inputs made read-only their writability back (once the walk is done)."""
        for a in self.read_only:
            a.flags.writeable = True
        self.read_only = []

    def own(self, a):
        """The tape's private copy of the plain array ``a``."""
        if self.shared:
            return a
        if a.nbytes < _SHARE_BYTES:
            return a.__copy__()  # (order "K": its memory order kept, LAPACK rounds by it)
        key = id(a)
        old = self.copies.get(key)
        # the same object, still holding the values copied last time: share that copy
        if old is not None and old[0]() is a and old[1].shape == a.shape and (old[1] == a).all():
            return old[1]
        c = a.__copy__()
        self.copies[key] = (weakref.ref(a), c)
        return c

    def owned(self, v):
        """``v`` with its plain arrays owned (an index tuple, a list of arrays, a parameter);
        lists are copied too, since they are just as mutable. Other values pass unchanged."""
        cls = v.__class__
        if cls is _ndarray:
            return self.own(v)
        if cls is list:
            return [self.owned(e) for e in v]
        if cls is tuple and _mutable_inside(v):
            return tuple(self.owned(e) for e in v)
        return v

    def owned_params(self, params):
        """``params`` with its arrays and lists owned (an index, a list of indices)."""
        for v in params.values():
            cls = v.__class__
            if cls is _ndarray or cls is list or (cls is tuple and _mutable_inside(v)):
                return {k: self.owned(v) for k, v in params.items()}
        return params


def _mutable_inside(t):
    """Whether the tuple ``t`` holds (at any depth) an array or a list."""
    for e in t:
        cls = e.__class__
        if cls is _ndarray or cls is list or (cls is tuple and _mutable_inside(e)):
            return True
    return False


def shed(node, residuals):
    """Replace the big arrays of ``node`` that its VJP rules do not read (``residuals``, see
    ``Primitive``) by stand-ins of the same shape and dtype (a zero-strided view: no memory),
    so they can be freed."""
    vals = node.args
    if not _big(node.ans):
        for v in vals:
            if _big(v):
                break
        else:
            return
    argnums, keep_ans = residuals
    if argnums == "others":  # the rule of each traced argument reads the other arguments, so
        # only a lone traced argument goes unread
        unread = [i for i, p in enumerate(node.parents) if p is not None]
        if len(unread) != 1:
            unread = ()
    else:
        unread = [i for i in range(len(vals)) if i not in argnums]
    for i in unread:
        if _big(vals[i]):
            vals[i] = _stand_in(vals[i])
    if not keep_ans and _big(node.ans):
        node.ans = _stand_in(node.ans)


def _big(v):
    return v.__class__ is _ndarray and v.nbytes >= _SHED_BYTES


def _stand_in(v):
    if v.dtype.hasobject or v.dtype.itemsize > len(_ZEROS):
        return _onp.broadcast_to(_onp.zeros((), v.dtype), v.shape)
    # every element reads the same zero bytes (read-only: the buffer is immutable), built
    # directly: numpy.broadcast_to costs several times more, once per shed value
    return _ndarray(v.shape, v.dtype, _ZEROS, 0, (0,) * v.ndim)


_ZEROS = bytes(64)
