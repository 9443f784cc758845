"""A recorded tape you can look at: ``fgrad.make_tape(f)(*args)``.

The transforms record ``f`` onto a tape and throw it away when they are done. ``make_tape``
keeps it and gives it names, so the evaluation trace of a function can be read off fgrad's own
record rather than typed in:

* ``print(tape)`` lists the inputs ``x0, x1, ...`` and one line per entry ``v1, v2, ...``:
  the primitive, its inputs (names of earlier entries, or constants), its static parameters
  and its value;
* ``tape.tangents(*ts)`` pushes input tangents forward through the entries (forward mode, the
  JVP rules) and gives every entry's tangent;
* ``tape.adjoints(ct)`` pulls an output cotangent backward (reverse mode, the VJP rules) and
  gives every entry's adjoint.

Entries are data (primitive, inputs, parameters, value), the same nodes the transforms use.
"""
import numpy as _onp

from ..core import errors
from ..core.pytree import tree_flatten
from ..numpy.elementwise import python_number
from ..traces.rules import sweep_forward
from ..core.tracer import read_value
from ..traces.arguments import finish
from ..transforms import Recording

__all__ = ["make_tape", "RecordedTape", "Entry"]


class Entry:
    """One line of a recorded tape: ``name = primitive(*inputs, **params)`` with its value.

    ``inputs`` holds entry names (``"x0"``, ``"v3"``) for recorded values and the values
    themselves for constants."""

    __slots__ = ("name", "primitive", "inputs", "params", "value", "_node")

    def __init__(self, name, primitive, inputs, params, value, node):
        self.name, self.primitive, self.inputs = name, primitive, inputs
        self.params, self.value, self._node = params, value, node

    def __repr__(self):
        return f"<Entry {self.name} = {self.expression()}>"

    def expression(self):
        """``primitive(inputs, params)`` as text (``"multiply(x0, x1)"``)."""
        if self.primitive is None:
            return "input"
        args = [a if isinstance(a, str) else _show(a) for a in self.inputs]
        args += [f"{k}={_show_param(v)}" for k, v in (self.params or {}).items()]
        return f"{self.primitive}({', '.join(args)})"


class RecordedTape:
    """The tape of one call of ``f``, with named entries (see :func:`make_tape`)."""

    def __init__(self, rec):
        self._rec = rec
        names = {}
        self.inputs = []
        for i, (node, x) in enumerate(zip(rec.in_nodes, rec.inputs)):
            names[node] = f"x{i}"
            self.inputs.append(Entry(f"x{i}", None, (), None, finish(x), node))
        self.entries = []
        k = 0
        for node in rec.tape.nodes:
            if node.prim is python_number:  # (Python's arithmetic on Python numbers, kept a
                names[node] = names[node.parents[0]]  # Python number: no numpy call)
                continue
            k += 1
            names[node] = f"v{k}"
            inputs = tuple(names[p] if p is not None else finish(read_value(a))
                           for a, p in zip(node.args, node.parents))
            self.entries.append(Entry(f"v{k}", node.prim.name, inputs, node.params,
                                      finish(read_value(node.ans)), node))
        # the output leaves, as entry names (or their constant values)
        self.outputs = [names[n] if n is not None else finish(read_value(v))
                        for n, v in zip(rec.out_nodes, rec.out_vals)]

    @property
    def value(self):
        """What ``f`` returned (plain values, in its pytree structure)."""
        return self._rec.output()

    def __len__(self):
        return len(self.entries)

    def __iter__(self):
        return iter(self.inputs + self.entries)

    def __getitem__(self, name):
        for e in self:
            if e.name == name:
                return e
        raise KeyError(f"no entry named {name!r}; entries are x0..x{len(self.inputs) - 1} "
                       f"and v1..v{len(self.entries)}")

    def __str__(self):
        rows = [(e.name, e.expression(), _show(e.value)) for e in self]
        width = max(len(r[1]) for r in rows)
        lines = [f"{n:>4} = {expr:<{width}}  -> {val}" for n, expr, val in rows]
        outs = ", ".join(o if isinstance(o, str) else _show(o) for o in self.outputs)
        return "\n".join(lines + [f" out = {outs}"])

    __repr__ = __str__

    def tangents(self, *tangents):
        """Forward mode: every entry's tangent for these input tangents (one per argument of
        ``f``, shaped like it), as ``{name: tangent}``; entries the inputs do not reach are
        left out. ``tape.tangents(1.0, 0.0)`` differentiates along the first input."""
        t_flat, t_tree = tree_flatten(tuple(tangents))
        if t_tree != self._rec.in_tree:
            raise ValueError(f"tangents: their structure {t_tree!r} differs from the "
                             f"inputs' {self._rec.in_tree!r}")
        seeds = {n: _onp.asarray(t, _onp.result_type(read_value(x)))
                 for n, x, t in zip(self._rec.in_nodes, self._rec.inputs, t_flat)}
        return self._named(sweep_forward(self._rec.tape, seeds))

    def adjoints(self, cotangent=1.0):
        """Reverse mode: every entry's adjoint (the derivative of ``<cotangent, out>`` with
        respect to it), as ``{name: adjoint}``, from one backward pass; entries the output
        does not depend on are left out. The tape is kept, so this may be called again."""
        c_flat, c_tree = tree_flatten(cotangent)
        if c_tree != self._rec.out_tree:
            raise ValueError(f"adjoints: the cotangent's structure {c_tree!r} differs from "
                             f"the output's {self._rec.out_tree!r}")
        seeds = [(n, _onp.asarray(c, _onp.result_type(read_value(v))))
                 for n, v, c in zip(self._rec.out_nodes, self._rec.out_vals, c_flat)
                 if n is not None]
        kept = {}
        kept.update(self._rec.tape.backward(seeds, consume=False, keep=kept))
        return self._named(kept)

    def _named(self, by_node):
        out = {}
        for e in self:
            v = by_node.get(e._node)
            if v is not None:
                out[e.name] = finish(read_value(v))
        return out


def make_tape(f):
    """``make_tape(f)(*args)`` runs ``f`` once and returns its :class:`RecordedTape`: the
    evaluation trace, with every entry's value, and forward (``tangents``) and reverse
    (``adjoints``) sweeps over it.

    >>> import fgrad, fgrad.numpy as np
    >>> tape = fgrad.make_tape(lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2))(2.0, 5.0)
    >>> print(tape)
      x0 = input             -> 2
      x1 = input             -> 5
      v1 = log(x0)           -> 0.693147
      v2 = multiply(x0, x1)  -> 10
      v3 = add(v1, v2)       -> 10.6931
      v4 = sin(x1)           -> -0.958924
      v5 = subtract(v3, v4)  -> 11.6521
     out = v5
    >>> round(float(tape.tangents(1.0, 0.0)["v5"]), 6)
    5.5
    >>> {k: round(float(v), 3) for k, v in tape.adjoints(1.0).items() if k.startswith("x")}
    {'x0': 5.5, 'x1': 1.716}
    """
    def recorded(*args):
        return RecordedTape(Recording(f, args, "make_tape"))

    recorded.__name__ = f"make_tape({errors.function_name(f)})"
    return recorded


def _show(v):
    """A value as short text: numbers to 6 significant digits, small arrays in full."""
    v = _onp.asarray(v)
    if v.ndim == 0:
        return f"{v[()]:.6g}" if v.dtype.kind in "fc" else repr(v[()].item())
    if v.size <= 6:
        return _onp.array2string(v, precision=4, separator=", ").replace("\n", "")
    return f"<{v.dtype} array {v.shape}>"


def _show_param(v):
    if isinstance(v, _onp.ndarray):
        return _show(v)
    return repr(v)
