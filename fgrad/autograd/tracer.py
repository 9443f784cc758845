"""``autograd.tracer``: ``primitive``, ``notrace_primitive``, ``Box``, the two questions a
library asks of a value, ``isbox`` (is it traced?) and ``getval`` (its value, untraced), and
``Node``/``trace``, autograd's way to record a computation with nodes of one's own class
(here read off fgrad's recorded tape, ``fgrad.make_tape``)."""
from typing import Any, Callable

from . import primitive  # noqa: F401
from .extend import Box, notrace_primitive, register_notrace  # noqa: F401
from ..core.tracer import Tracer, without_derivative
from ..tools.recorded import make_tape

__all__ = ["primitive", "notrace_primitive", "register_notrace", "Box", "isbox", "getval",
           "Node", "trace"]


def isbox(x: Any) -> bool:
    """Whether ``x`` is a traced value (autograd's box, fgrad's tracer).

    >>> import fgrad
    >>> from fgrad.autograd.tracer import isbox
    >>> isbox(1.0), bool(fgrad.grad(lambda x: float(isbox(x)) * x)(1.0))
    (False, True)
    """
    return isinstance(x, Tracer)


def getval(x: Any) -> Any:
    """``x``'s value without its derivative: the plain number or array under it (``x``
    itself when it is not traced), a constant to every differentiating transform, as
    autograd's is. Under ``jit`` or ``vmap`` it stays staged or batched (a value that staging
    or batching did not see would be a stale constant or one example's).

    >>> import fgrad
    >>> from fgrad.autograd.tracer import getval
    >>> float(fgrad.grad(lambda x: x * getval(x))(3.0))
    3.0
    """
    return without_derivative(x)


class Node:
    """autograd's node of a trace, to subclass: ``__init__(value, fun, args, kwargs,
    parent_argnums, parents)`` is called for each primitive ``fun`` applied (``parents`` the
    nodes of the arguments at ``parent_argnums``), ``initialize_root(*args, **kwargs)`` by
    ``new_root`` for the node of the input."""

    def __init__(self, value: Any, fun: Any, args: tuple, kwargs: dict,
                 parent_argnums: list, parents: list) -> None:
        raise NotImplementedError("autograd.tracer.Node: a subclass defines __init__")

    def initialize_root(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("autograd.tracer.Node: a subclass defines initialize_root")

    @classmethod
    def new_root(cls, *args: Any, **kwargs: Any) -> "Node":
        root = cls.__new__(cls)
        root.initialize_root(*args, **kwargs)
        return root


def trace(start_node: Node, fun: Callable[[Any], Any], x: Any) -> tuple[Any, Any]:
    """autograd's ``trace(start_node, fun, x)``: ``(fun(x), end_node)``, a node of
    ``start_node``'s class made for every primitive that depends on ``x``, in the order they
    ran (``end_node`` None where the output does not depend on ``x``). fgrad records ``fun``
    on a tape first and makes the nodes from its entries afterwards, so a node is made after
    ``fun`` has returned rather than as each primitive runs.

    >>> from fgrad.autograd.tracer import Node, trace
    >>> import fgrad.numpy as np
    >>> class Names(Node):
    ...     def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
    ...         self.text = f"{fun.__name__}({', '.join(p.text for p in parents)})"
    ...     def initialize_root(self):
    ...         self.text = "x"
    >>> value, node = trace(Names.new_root(), lambda x: np.sin(x) * x, 0.5)
    >>> node.text
    'multiply(sin(x), x)'
    """
    tape = make_tape(fun)(x)
    cls = type(start_node)
    nodes = {e.name: start_node for e in tape.inputs}
    values = {e.name: e.value for e in tape.inputs}
    for e in tape.entries:
        values[e.name] = e.value
        argnums = [i for i, a in enumerate(e.inputs) if isinstance(a, str)]
        node = cls.__new__(cls)
        node.__init__(e.value, e._node.prim,
                      tuple(values[a] if isinstance(a, str) else a for a in e.inputs),
                      dict(e.params or {}), argnums, [nodes[e.inputs[i]] for i in argnums])
        nodes[e.name] = node
    outs = [o for o in tape.outputs if isinstance(o, str)]
    return tape.value, nodes[outs[-1]] if outs else None
