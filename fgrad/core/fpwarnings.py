"""numpy's floating-point warnings (divide by zero, invalid value, overflow) raised inside a
transform, reported at the user's line instead of fgrad's.

numpy attributes such a warning to the Python frame that called the ufunc, which under a
transform is always fgrad's (a primitive's call, a derivative rule such as sqrt's ``0.5 / ans``
run by the backward pass), so a warning said nothing about where the user's code met the
problem, and Python's once-per-location filter even hid the second one. Each transform runs
with numpy's error state sending the categories the user has at ``"warn"`` (numpy's default;
``"ignore"``, ``"raise"`` and the user's own ``"call"`` are left alone) to this module's
callback, which warns at the innermost frame outside fgrad and numpy: the user's line inside
``f`` during the forward pass, the line calling the transform during the backward pass.
Plain calls of fgrad.numpy outside a transform are not redirected (the cost would fall on
every call): their warnings point at fgrad's line, as before.
"""
import os
import sys
import warnings
from typing import Any

import numpy as _onp

_FGRAD = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # fgrad/
_NUMPY = os.path.dirname(os.path.abspath(_onp.__file__)) + os.sep


def _ours(filename):
    return filename.startswith(_FGRAD) or filename.startswith(_NUMPY)


def fgrad_code(frame):
    """Whether ``frame`` runs fgrad's own code (by its module's name: also code that fgrad
    generates or execs, which has no file of fgrad's)."""
    name = frame.f_globals.get("__name__") or ""
    return name.startswith("fgrad") and (len(name) == 5 or name[5] == ".")


def user_frame(frame):
    """The innermost frame outside fgrad and numpy, from ``frame`` outward (or None)."""
    while frame is not None and _ours(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _warn(err, flag):
    """numpy's errstate callback: ``err`` is "divide by zero", "invalid value", "overflow" or
    "underflow". Warns at the innermost frame outside fgrad and numpy, naming the function
    as numpy does ("invalid value encountered in log"), or the primitive whose derivative rule
    met it when a tape's sweep was running one."""
    frame, rule, called = sys._getframe(1), None, None
    while frame is not None and _ours(frame.f_code.co_filename):
        # (frames' locals are read only here, when a warning is raised)
        if rule is None and frame.f_code.co_name in ("_walk", "sweep_forward"):  # the sweeps
            rule = getattr(getattr(frame.f_locals.get("node"), "prim", None), "listed_name",
                           None)
        if called is None:  # the innermost primitive call: a trace's, or the primitive's own
            prim = frame.f_locals.get("prim", frame.f_locals.get("self"))
            called = getattr(prim, "listed_name", None) if hasattr(prim, "impl") else None
        frame = frame.f_back
    message = f"{err} encountered" + (f" in the derivative of {rule}" if rule else
                                      f" in {called}" if called else "")
    if frame is None:  # (called from fgrad alone: no user frame to point at)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        return
    g = frame.f_globals
    registry = g.setdefault("__warningregistry__", {})
    # (no module_globals, as warnings.warn passes none: with them a `python -c` script's
    # warning raised ImportError, its __main__ having no source for linecache to load)
    warnings.warn_explicit(message, RuntimeWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__"), registry=registry)


_STATE: Any
try:  # numpy >= 2 keeps the error state in a context variable, which we set directly
    from numpy._core.umath import _extobj_contextvar as _STATE, _make_extobj
except ImportError:  # numpy 1.x: warnings point at fgrad's lines, as numpy attributes them
    _STATE = None


def _redirected():
    """The error state with the ``"warn"`` categories of the current one sent to _warn, or
    None where there is nothing to send (the user's own callback, or nothing at "warn")."""
    modes = _onp.geterr()
    if "call" in modes.values() or "warn" not in modes.values():
        return None
    return _make_extobj(call=_warn, **{k: "call" for k, v in modes.items() if v == "warn"})


# The state in force when fgrad was imported (numpy's default, in most programs) and its
# redirected form, made once: the common case costs a get and a set of the context variable.
# numpy.errstate itself costs 3.6 us a transform call (grad of sin(x) * x: 11.9 -> 15.5 us).
_USUAL = _STATE.get() if _STATE is not None else None
_USUAL_REDIRECTED = _redirected() if _STATE is not None else None


class at_user_code:
    """``with at_user_code():`` runs a transform's work with numpy's floating-point warnings
    sent to :func:`_warn`; nested transforms keep the outer one's state."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = None
        if _STATE is None:
            return
        state = _STATE.get()
        if state is _USUAL:
            new = _USUAL_REDIRECTED
        elif state is _USUAL_REDIRECTED:  # (an outer transform's)
            return
        else:  # the user's own errstate: redirect its "warn" categories only
            new = _redirected()
        if new is not None:
            self.token = _STATE.set(new)

    def __exit__(self, *exc):
        if self.token is not None:
            _STATE.reset(self.token)
