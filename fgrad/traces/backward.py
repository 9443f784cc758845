"""The backward walk of a tape: reverse mode's pass, from output cotangents to the inputs'.

It walks the tape's nodes in reverse (they were appended in execution order, so the tape is
already topologically sorted), calling each primitive's VJP rules (``Primitive.vjp_all``) on
the recorded values. Those are tracers of outer transforms when derivatives are nested; the
rules' own operations are then recorded by those transforms, which is how higher-order
derivatives come about.
"""
import _thread

from ..core import errors
from ..core.tracer import add_any


def backward(tape, seeds, consume=False, keep=None):
    """Propagate ``seeds`` (pairs of node and output cotangent) to every node of ``tape`` that
    needs one; returns ``{node: cotangent}`` for the nodes no entry consumed (the inputs).
    With ``consume`` the tape is emptied as it goes, so each residual is freed as soon as its
    rules have used it (``grad`` uses this). ``keep``, a dict, receives every node's
    cotangent (``make_tape``'s adjoint trace).

    The cotangents are kept on the nodes while a walk runs, so two walks of one tape
    (``vjp_fn`` called from two threads) take turns."""
    if consume:  # the tape's only walk: nothing can run beside it
        return _walk(tape, seeds, consume, keep)
    me = _thread.get_ident()
    if tape.walker == me:
        raise RuntimeError("fgrad: a backward pass over a tape called the vjp function of "
                           "that same tape from one of its rules; call it after the pass")
    with tape.walk_lock:
        tape.walker = me
        try:
            return _walk(tape, seeds, consume, keep)
        finally:
            tape.walker = None


def _walk(tape, seeds, consume, keep):
    # nodes given a cotangent that no entry of the tape produced (the inputs), read out last
    reached = []
    for node, ct in seeds:
        _give(node, ct, reached)
    if consume:
        nodes, tape.nodes = tape.nodes, []
    else:
        nodes = tape.nodes[:]  # popped below, and the tape may be walked again
    pop = nodes.pop  # popping drops each node (and its residuals) once its rules have run
    prim = None
    try:
        while nodes:
            node = pop()
            g = node.ct
            if g is None:
                continue
            node.ct = None
            if keep is not None:
                keep[node] = g
            prim, parents, reals = node.prim, node.parents, node.real_inputs
            cts = prim.vjp_all(g, node.ans, node.args, node.params, parents)
            i = -1
            for p in parents:
                i += 1
                c = cts[i]
                if p is None or c is None:
                    continue
                if reals and i in reals:
                    c = c.real  # (a tracer's is fgrad.numpy.real)
                old = p.ct
                if old is None:
                    p.ct = c
                    if p.prim is None:  # an input
                        reached.append(p)
                else:
                    p.ct = add_any(old, c)
    except BaseException as e:  # a rule raised: no cotangent may be left for the next pass
        _clear(nodes)
        _clear(reached)
        if isinstance(e, errors.ConcretizationError) and prim is not None:
            # (the read was in the rule of ``prim``, the node being walked: say so)
            raise errors.in_rule(e, f"the VJP rule of {prim.public_name}",
                                 prim.builtin) from e
        raise
    return _take_cotangents(reached)


def _give(node, ct, reached):
    """Add the cotangent ``ct`` to ``node``'s; a node given its first goes into ``reached``."""
    if node.ct is None:
        node.ct = ct
        reached.append(node)
    else:
        node.ct = add_any(node.ct, ct)


def _clear(nodes):
    for n in nodes:
        n.ct = None


def _take_cotangents(reached):
    """``{node: cotangent}`` of the nodes reached, each cleared for the next pass."""
    cts = {}
    for n in reached:
        if n.ct is not None:
            cts[n] = n.ct
            n.ct = None
    return cts
