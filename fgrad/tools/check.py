"""``python -m fgrad check``: every rule in the primitive table against finite differences.

Checked are the primitives and the public functions composed of them (listed as
``np.<numpy name>``). For each, each case of its ``Spec`` is run on random arguments inside
its domain; reverse mode (VJP) and forward mode (JVP) are checked separately, each to the
spec's order (order 2 checks both modes of the derivative too). The batching column checks
``vmap`` of the entry against numpy.stack of its calls (``fgrad.testing.check_batching``):
``ok``, ``loop`` (a primitive batched one example at a time), ``reads`` (the entry reads its
arguments' values, so under ``vmap`` it raises ``ConcretizationError``: not yet batched),
``-`` (no argument to map) or ``FAIL``. A JVP column reading ``ok(T)`` checked a JVP rule
derived from the VJP rule by transposing it (the primitive has no JVP rule of its own for
some argument: ``fgrad.traces.rules``). The Taylor column checks ``fgrad.jet`` to order 4 against
nested ``jvp`` (``fgrad.testing.check_jet``) and says how the primitive is expanded: ``rule``
(its Taylor rule, O(K^2) for K terms), ``jvp`` (its JVP rule's jet, O(K^2)), ``jvp+`` (the
same, one jet per order: the JVP rule reads the output, O(K^3)), ``comp`` (a composed
function: its primitives'), or ``FAIL``. The compositions column runs the entry under every
composition of transforms (``fgrad.testing.compositions``: ``grad(jit)``, ``vmap(grad)``,
``jit(jet)``, ``vmap(jit(grad))``, ...) against its reference: ``ok``, ``reads`` (only the
forms with ``vmap`` raise ``ConcretizationError``, as the batching column's ``reads``),
``-`` or ``FAIL``. Exit code 0 only if every rule passes. ``--import MODULE``
imports a module first, so the primitives it registers (with a ``Spec``) are checked too.
``python -m fgrad coverage`` prints docs/coverage.md (``--write`` updates it).
"""
import argparse
import importlib
import sys

import numpy as _onp

from .. import numpy as _fnp  # (registers the table)

try:  # fgrad.scipy's entries, where scipy is installed (the generated tests take them from here)
    from .. import scipy as _fsp  # noqa: F401
except ImportError:  # pragma: no cover
    pass
from .coverage import differentiable_names, render
from ..core.table import checked, entry_name
from ..core.errors import ConcretizationError
from ..numpy.batch_rules import one_at_a_time
from ..core.table import Primitive
from ..traces.rules import derived
from ..traces.taylor import expansions
from ..testing import as_function, check_batching, check_grads, check_jet, random_case
from ..testing.compositions import check_compositions
from ..numpy.namespace import load_on_first_use

# (fgrad.numpy's fft, linalg and polynomial load on first use: their entries join the table
# here, for the whole table's check)
load_on_first_use(vars(_fnp))


def check_primitive(prim, rng, trials=3):
    """Returns ``(vjp_ok, jvp_ok, worst_relative_error, first_failure_message)``."""
    spec = prim.spec
    if spec is None:
        return False, False, float("nan"), "registered without a Spec: nothing checks it"
    ok = {"rev": True, "fwd": True}
    worst, message = 0.0, ""
    for case in spec.cases:
        for _ in range(trials):
            f, xs = as_function(prim, *random_case(prim, rng, case))
            for mode in ("rev", "fwd"):
                try:
                    worst = max(worst, check_grads(f, xs, order=spec.order, modes=(mode,),
                                                   rtol=spec.rtol, atol=spec.atol, eps=spec.eps,
                                                   seed=int(rng.integers(2**31))))
                except Exception as e:  # a failing rule, or one that crashes: both are failures
                    ok[mode] = False
                    message = message or f"{type(e).__name__}: {e}"
    return ok["rev"], ok["fwd"], worst, message


def check_batched(entry, rng):
    """The batching column: ``(status, failure message)``."""
    try:
        if not check_batching(entry, rng):
            return "-", ""
    except ConcretizationError:
        return "reads", ""
    except Exception as e:  # wrong values, or a crash: both are failures
        return "FAIL", f"vmap: {type(e).__name__}: {e}"
    if isinstance(entry, Primitive) and entry.batch in (None, one_at_a_time):
        return "loop", ""
    return "ok", ""


def check_composed(entry, rng):
    """The compositions column: ``(status, failure message)``."""
    try:
        result = check_compositions(entry, rng)
    except Exception as e:  # (drawing the case failed: a crash is a failure)
        return "FAIL", f"compositions: {type(e).__name__}: {e}"
    if result is None:
        return "-", ""
    failed = {form: msg for form, msg in result.items() if msg}
    if not failed:
        return "ok", ""
    if all("vmap" in form and "raised ConcretizationError" in msg
           for form, msg in failed.items()):
        return "reads", ""
    form = sorted(failed)[0]
    return "FAIL", failed[form]


_HOW = {"rule": "rule", "jvp": "jvp", "jvp, reads output": "jvp+"}


def check_taylor(entry, rng, order=4):
    """The Taylor column: ``(status, failure message)``."""
    case = entry.spec.cases[0]
    f, xs = as_function(entry, *random_case(entry, rng, case))
    xs = tuple(_onp.asarray(x, float) if _onp.isrealobj(x) else x for x in xs)
    if not xs:
        return "-", ""
    try:
        check_jet(f, xs, order, seed=int(rng.integers(2**31)))
    except Exception as e:  # wrong terms, or a crash: both are failures
        return "FAIL", f"jet: {type(e).__name__}: {e}"
    if not isinstance(entry, Primitive):
        return "comp", ""
    log = expansions(f, xs, [[_onp.zeros_like(x) for _ in range(order)] for x in xs])
    # (the entry's own call is the last one its function makes)
    own = [how for name, how in log if name == entry.name]
    return (_HOW[own[-1]] if own else "-"), ""


def _derived_jvp(entry):
    """Whether forward mode transposes a VJP rule of ``entry`` (a primitive) for an argument
    its spec differentiates."""
    if not isinstance(entry, Primitive) or entry.spec is None:
        return False
    spec = entry.spec
    return any(derived(entry, i) for shapes, _ in spec.cases for i in range(len(shapes))
               if spec.arg_domain(i) != "bool")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fgrad", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="check every rule against finite differences")
    chk.add_argument("--seed", type=int, default=0)
    chk.add_argument("--trials", type=int, default=3, help="random draws per spec case")
    chk.add_argument("--import", dest="modules", action="append", default=[],
                     metavar="MODULE", help="import MODULE first (your primitives)")
    chk.add_argument("names", nargs="*", help="only these entries (primitives, np.<name>)")
    cov = sub.add_parser("coverage", help="print docs/coverage.md: every numpy function's status")
    cov.add_argument("--write", metavar="PATH", nargs="?", const="docs/coverage.md",
                     help="write it to PATH (default docs/coverage.md) instead")
    args = parser.parse_args(argv)
    if args.command == "coverage":
        return _coverage(args.write)

    for module in args.modules:
        importlib.import_module(module)
    rng = _onp.random.default_rng(args.seed)
    entries = checked()
    names = args.names or sorted(entries)
    unknown = [n for n in names if n not in entries]
    if unknown:
        parser.error(f"no such table entry: {', '.join(unknown)}")
    width = max(map(len, names)) + 1
    print(f"{'entry':<{width}} {'VJP':<5} {'JVP':<6} {'order':>5} {'worst rel err':>14} "
          f"{'batching':<8} {'Taylor':<6} {'compose':<7}  result")
    failures, batching, transposed, taylor, composed = [], {}, 0, {}, {}
    for name in names:
        prim = entries[name]
        vjp_ok, jvp_ok, worst, msg = check_primitive(prim, rng, args.trials)
        batch, batch_msg = check_batched(prim, rng) if prim.spec else ("-", "")
        batching[batch] = batching.get(batch, 0) + 1
        how, jet_msg = check_taylor(prim, rng) if prim.spec else ("-", "")
        taylor[how] = taylor.get(how, 0) + 1
        comp, comp_msg = check_composed(prim, rng) if prim.spec else ("-", "")
        composed[comp] = composed.get(comp, 0) + 1
        passed = vjp_ok and jvp_ok and batch != "FAIL" and how != "FAIL" and comp != "FAIL"
        order = prim.spec.order if prim.spec else "-"
        jvp = "ok" if jvp_ok else "FAIL"
        if _derived_jvp(prim):
            jvp, transposed = jvp + "(T)", transposed + 1
        print(f"{name:<{width}} {'ok' if vjp_ok else 'FAIL':<5} {jvp:<6} "
              f"{order:>5} {worst:>14.2e} {batch:<8} {how:<6} {comp:<7}  "
              f"{'pass' if passed else 'FAIL'}")
        if not passed:
            failures.append((name, msg or batch_msg or jet_msg or comp_msg))
    print(f"\n{len(names) - len(failures)} of {len(names)} table entries pass (primitives and "
          f"composed np.* functions; VJP and JVP checked to their order against central "
          f"finite differences, vmap against stacked calls)")
    print("batching: " + ", ".join(f"{n} {k}" for k, n in sorted(batching.items())))
    print("Taylor (jet to order 4 against nested jvp): " +
          ", ".join(f"{n} {k}" for k, n in sorted(taylor.items())) +
          " (rule, jvp: O(K^2) for K terms; jvp+: O(K^3); comp: composed of primitives)")
    print("compositions (every transform under every other, against the transform of the "
          "entry, the eager replay or the loop): " +
          ", ".join(f"{n} {k}" for k, n in sorted(composed.items())))
    if transposed:
        print(f"ok(T): the JVP rule is derived from the VJP rule by transposing it "
              f"({transposed} {'entry' if transposed == 1 else 'entries'}; forward mode costs "
              "a transpose per call there)")
    if not args.names:
        failed = {name for name, _ in failures}
        numpy_names = differentiable_names()
        ok = [q for q, e in numpy_names.items()
              if entry_name(e) not in failed and e.spec.order >= 2]
        print(f"{len(ok)} of {len(numpy_names)} differentiable numpy functions (numpy, "
              f"numpy.linalg, numpy.fft) pass, both rules checked to order 2 or more")
    for name, msg in failures:
        print(f"  {name}: {msg}")
    return 1 if failures else 0


def _coverage(path):
    text = render()
    if path is None:
        print(text, end="")
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
