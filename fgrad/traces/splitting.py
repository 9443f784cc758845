"""A staged VJP cut in two: the part that runs with the forward pass, and the part that runs
when the cotangent arrives (what JAX's partial evaluation does to a linearized jaxpr). A
staged JVP is cut the same way, where its tangents enter (``linearize(jit(f))``).

``grad(jit(f))`` records one call on the tape for the jitted function: its forward half runs
as generated code at once and keeps the values its backward half reads (the residuals), and
the backward half runs as generated code when the tape's walk reaches the call
(``fgrad.jit_on_tape``)."""
from ..core.pytree import tree_flatten
from .graph import Graph
from .nodes import Var


def split_vjp(graph, n_primal, n_out=1):
    """The graph of ``(x_1, ..., x_n, g_1, ...) -> (out_1, ..., out_l, ct_1, ..., ct_k)``
    (``n = n_primal``, ``l = n_out``) as ``(forward, backward)``: ``forward(x_1, ..., x_n) ->
    (out_1, ..., out_l, r_1, ..., r_m)`` and ``backward(r_1, ..., r_m, g_1, ...) -> (ct_1,
    ..., ct_k)``. A node belongs to the backward half when it reads a ``g`` (at any remove);
    the residuals ``r`` are the forward half's values (inputs included) that the backward
    half reads, given inputs of their own there."""
    late = set(graph.inputs[n_primal:])
    early_nodes, late_nodes = [], []
    for n in graph.nodes:
        for a in n.args:
            if a.__class__ is Var and a in late:
                late.add(n)
                late_nodes.append(n)
                break
        else:
            early_nodes.append(n)
    outputs = graph.outputs[n_out:]
    residuals = {}  # a forward value the backward half reads -> its input there
    next_id = 1 + max([v.id for v in graph.inputs] + [n.id for n in graph.nodes])

    def crossing(a):
        nonlocal next_id
        if a.__class__ is not Var or a in late:
            return a
        if a not in residuals:
            r = Var(next_id, a.shape, a.dtype, a.numpy)
            next_id += 1
            residuals[a] = r
        return residuals[a]

    for n in late_nodes:  # (the graph is this call's own: its nodes are rewritten in place)
        n.args = tuple(crossing(a) for a in n.args)
    outputs = [crossing(o) for o in outputs]
    early_guards = [g for g in graph.guards if g[0] not in late]
    late_guards = [g for g in graph.guards if g[0] in late]
    forward = Graph(f"{graph.name} forward", graph.inputs[:n_primal], _flat(n_primal),
                    early_nodes, graph.consts, early_guards,
                    [*graph.outputs[:n_out], *residuals], _flat(n_out + len(residuals)))
    backward = Graph(f"{graph.name} backward", [*residuals.values(), *graph.inputs[n_primal:]],
                     _flat(len(residuals) + len(graph.inputs) - n_primal), late_nodes,
                     graph.consts, late_guards, outputs, _flat(len(outputs)))
    forward.optimized = backward.optimized = True
    return forward, backward


def _flat(n):
    """The pytree structure of ``n`` leaves in a tuple."""
    return tree_flatten(tuple(range(n)))[1]
