"""einsum: any subscripts, repeated indices and ellipsis.

One primitive, ``einsum``, whose forward value is ``numpy.einsum`` called with the user's own
subscripts (so values are numpy's bit for bit, ``optimize`` included). It is multilinear: the
JVP replaces one operand by its tangent, and the VJP of an operand is itself an einsum of the
output cotangent with the other operands, so derivatives nest to any order.

For the rules the subscripts are put in a canonical form where every axis has an explicit
label and no broadcasting happens: ellipsis dimensions get labels of their own, and an axis
of size 1 that numpy broadcasts against a longer one gets a fresh label (summed over, size 1).
Two things an einsum cannot write directly are built from constant operands:

* an operand with a repeated label (``'ii->'``, ``'iij->ij'``) gets its cotangent on the
  diagonal only: the repeated position gets a fresh label tied to the first by an identity
  matrix (``eye``);
* a label of one operand that occurs nowhere else (``'ij->i'``: j is summed away) spreads the
  cotangent along it: a vector of ones carries that label.
"""

import numpy as _onp

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Spec, define, multilinear_taylor
from .broadcasting import dtype_of, shape_of
from .namespace import zero_derivative
from .views import view_of
from .wrapping import differentiable, unsupported_kwargs

# numpy's labels for the interleaved (operand, sublist) form: 0..25 are 'A'..'Z', 26..51 are
# 'a'..'z', which keeps numpy's implicit output order (ASCII) when converted to a string
_LOWER = "abcdefghijklmnopqrstuvwxyz"  # (not from the string module: 1 ms of import time)
_SUBLIST_LETTERS = _LOWER.upper() + _LOWER
_LETTERS = _LOWER + _LOWER.upper()


def _parse(subscripts, shapes):
    """Canonical ``(terms, out, sizes)``: a list of labels per operand and for the output, and
    each label's size. Labels are letters, ``('...', k)`` for the k-th broadcast dimension,
    or ``('b', operand, axis)`` for a size-1 axis broadcast against a longer one."""
    s = subscripts.replace(" ", "")
    ins, arrow, out_s = s.partition("->")
    raw = []
    ell_ndim = 0
    for sub, shape in zip(ins.split(","), shapes):
        head, dots, tail = sub.partition("...")
        n = len(shape) - len(head) - len(tail)
        raw.append((head, n if dots else None, tail))
        if dots:
            ell_ndim = max(ell_ndim, n)

    def ellipsis(n):
        return [("...", k) for k in range(ell_ndim - n, ell_ndim)]

    terms = [list(h) + (ellipsis(n) if n is not None else []) + list(t) for h, n, t in raw]
    if arrow:
        head, dots, tail = out_s.partition("...")
        out = list(head) + (ellipsis(ell_ndim) if dots else []) + list(tail)
    else:
        counts = {}
        for term in terms:
            for lab in term:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        out = ellipsis(ell_ndim) + sorted(lab for lab, c in counts.items() if c == 1)

    sizes = {}
    for term, shape in zip(terms, shapes):
        for lab, n in zip(term, shape):
            sizes[lab] = max(sizes.get(lab, 1), n)
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        for k, (lab, n) in enumerate(zip(term, shape)):
            if n == 1 and sizes[lab] > 1:  # broadcast: its own label, summed over (size 1)
                term[k] = ("b", i, k)
                sizes[term[k]] = 1
    return terms, out, sizes


def _subscripts(terms, out):
    """An explicit subscripts string for canonical terms (labels renamed to letters)."""
    names = {}
    for lab in [lab for term in terms for lab in term] + list(out):
        if lab not in names:
            if len(names) == len(_LETTERS):
                raise ValueError("fgrad.numpy.einsum: the derivative of this einsum needs more "
                                 f"than {len(_LETTERS)} distinct labels")
            names[lab] = _LETTERS[len(names)]
    return ",".join("".join(names[lab] for lab in term) for term in terms) + "->" + \
        "".join(names[lab] for lab in out)


def _rule_optimize(optimize):
    # an explicit contraction path fits only the forward einsum's operands; rules contract
    # other operand lists, so they keep only the request to optimize
    return optimize if isinstance(optimize, (bool, str)) else bool(optimize)


def _einsum_vjp(i, g, ans, *ops, subscripts, optimize):
    terms, out, sizes = _parse(subscripts, [shape_of(x) for x in ops])
    elsewhere = set(out).union(*(terms[j] for j in range(len(ops)) if j != i))
    dtype = dtype_of(g)
    target, extra_terms, extra_ops = [], [], []
    for k, lab in enumerate(terms[i]):
        if lab in target:  # repeated within the operand: the cotangent lives on the diagonal
            fresh = ("diag", k)
            extra_terms.append([lab, fresh])
            extra_ops.append(_onp.eye(sizes[lab], dtype=dtype))
            target.append(fresh)
            continue
        target.append(lab)
        if lab not in elsewhere:  # summed away by this operand alone: spread along it
            extra_terms.append([lab])
            extra_ops.append(_onp.ones(sizes[lab], dtype=dtype))
    others = [j for j in range(len(ops)) if j != i]
    sub = _subscripts([out] + [terms[j] for j in others] + extra_terms, target)
    return einsum_p(g, *[ops[j] for j in others], *extra_ops, subscripts=sub,
                    optimize=_rule_optimize(optimize))


def _einsum_jvp(tangents, ans, *ops, subscripts, optimize):
    out = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = einsum_p(*ops[:i], t, *ops[i + 1:], subscripts=subscripts, optimize=optimize)
            out = term if out is None else out + term
    return out


einsum_p = define(
    "einsum", lambda *ops, subscripts, optimize: _onp.einsum(subscripts, *ops,
                                                             optimize=optimize),
    vjp_by_argnum=_einsum_vjp,
    spec=Spec([(((2, 3), (3, 2)), {"subscripts": "ij,jk->ik", "optimize": False}),
               (((3, 3),), {"subscripts": "ii->", "optimize": False}),
               (((2, 2, 3),), {"subscripts": "iij->ij", "optimize": False}),
               (((2, 1, 2, 3), (3, 3, 2)), {"subscripts": "...ij,...jk->...ik",
                                            "optimize": False}),
               (((2, 3), (3,), (2,)), {"subscripts": "ij,j,k", "optimize": True})],
              domain=("complex",) * 3), batch=batch_rules.einsum, jvp_joint=_einsum_jvp,
    # (Leibniz's rule; the rules call the primitive by its name, as the JVP rule does)
    taylor=multilinear_taylor(lambda *ops, **params: einsum_p(*ops, **params)))


def _from_sublists(args):
    """The interleaved form ``op0, sublist0, op1, sublist1, ..., [output sublist]`` as a
    subscripts string and the operands."""
    n = len(args) // 2
    ops, subs = list(args[0:2 * n:2]), list(args[1:2 * n:2])

    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif 0 <= int(s) < len(_SUBLIST_LETTERS):
                out.append(_SUBLIST_LETTERS[int(s)])
            else:
                raise ValueError(f"einsum: subscript {s} is not within the valid range [0, 52)")
        return "".join(out)

    subscripts = ",".join(letters(s) for s in subs)
    if len(args) % 2:
        subscripts += "->" + letters(args[-1])
    return subscripts, ops


def _call_spec(f, *xs, subscripts, **params):
    if isinstance(subscripts, str):
        return f(subscripts, *xs, **params)
    args = []  # subscripts is (sublists per operand, output sublist or None)
    for x, sub in zip(xs, subscripts[0]):
        args += [x, sub]
    if subscripts[1] is not None:
        args.append(subscripts[1])
    return f(*args, **params)


@differentiable(_onp.einsum, Spec(
    [(((3, 3),), {"subscripts": "ii->i"}),
     (((2, 3), (3, 4)), {"subscripts": "ij,jk"}),
     (((2, 1, 3), (2, 3)), {"subscripts": "...j,...j->...", "optimize": "greedy"}),
     (((2, 3), (3,)), {"subscripts": ([[0, 1], [1]], [0])}),
     (((2, 3), (3, 2)), {"subscripts": ([[Ellipsis, 1], [1, Ellipsis]], None)})],
    call=_call_spec))
def einsum(*operands, out=None, optimize=False, **kwargs):
    """Derivatives for every operand: both call forms (subscripts string,
    or interleaved operands and sublists), implicit and explicit output, repeated labels,
    ellipsis broadcasting. ``optimize`` is passed to numpy for the values (and asks for
    optimized contractions in the derivatives). ``out``, ``dtype``, ``casting`` and
    ``order`` are refused on traced operands."""
    if kwargs.get("order") == "K":
        del kwargs["order"]
    if kwargs.get("casting") == "safe":
        del kwargs["casting"]
    unsupported_kwargs("einsum", dict(kwargs, out=out))
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _from_sublists(operands)
    ops = [fnp.asarray(x) for x in ops]
    out = einsum_p(*ops, subscripts=subscripts, optimize=optimize)
    if len(ops) == 1:  # numpy gives a view where it sums nothing (a transpose, a diagonal)
        (term,), kept, _ = _parse(subscripts, [shape_of(ops[0])])
        if set(term) <= set(kept):
            return view_of(out, ops[0])
    return out


einsum_path = zero_derivative(_onp.einsum_path)

