"""What fgrad.numpy can differentiate: every public function of numpy, numpy.linalg and
numpy.fft with its status, generated into ``docs/coverage.md``.

A name is

* **differentiable** when ``fgrad.numpy``'s object for it is a primitive of the table or a
  registered composed function (``table.FUNCTIONS``): both rules exist and the generated tests
  check them against finite differences to the order its ``Spec`` gives;
* **zero derivative** when it accepts tracers and returns plain values (rounding,
  comparisons, index-valued functions, sizes and constructors);
* **unsupported** otherwise, with the reason; handed a tracer it raises
  ``NoDerivativeRuleError`` (never a silent zero or an object array), or, for functions that
  write into their argument, ``TracerMutationError``.

``python -m fgrad coverage`` prints the file; ``--write`` regenerates ``docs/coverage.md``. A
test fails when the committed file differs from a fresh generation.
"""
import importlib
import types

import numpy as _onp

from .. import numpy as fnp
from ..core.table import FUNCTIONS, PRIMITIVES, Primitive, entry_name
from ..numpy.namespace import load_on_first_use
from ..numpy.unsupported import reason

# The derivative each function takes at its kinks and edges (the conventions are stated in the
# docstrings too, and tested at the kink).
KINKS = {
    # elementwise
    "absolute": "`abs'(0) = 0` (the average of -1 and 1); complex `z`: `conj(z)/|z|`, 0 at 0",
    "fabs": "`fabs'(0) = 0`",
    "sqrt": "`sqrt'(0) = inf`, as the formula gives (a zero cotangent there gives nan)",
    "maximum": "a tie `x == y` gives each argument half: `d/dx = d/dy = 0.5`",
    "minimum": "a tie `x == y` gives each argument half",
    "fmax": "ties split 0.5/0.5; with one NaN the derivative goes to the other argument, "
            "with both NaN it is 0",
    "fmin": "as `fmax`",
    "clip": "derivative 1 inside the bounds, 0 outside, 0.5 to the value and 0.5 to a traced "
            "bound exactly at a bound",
    "hypot": "0 at the origin, at every order",
    "arctan2": "0 at the origin, at every order",
    "angle": "`angle(0)` has derivative 0",
    "copysign": "0 at `x1 == 0`; nothing flows to `x2` (the sign is piecewise constant)",
    "heaviside": "0 in `x1`; 1 in `x2` where `x1 == 0` (the output is `x2` there)",
    "nan_to_num": "1 on finite entries; a replaced entry has its replacement's (0 for a "
                  "constant one)",
    "interp": "at an inner knot the mean of the two slopes; at `xp[0]`/`xp[-1]` half the "
              "inner slope; 0 outside",
    "sinc": "exact at 0 (`f' = 0`, `f'' = -pi^2/3`) from a Taylor series near 0",
    "frexp": "the mantissa has derivative `2**-exponent`; 1 at 0",
    "power": "`d/dx x**y` at `x = 0, y = 0` is 0; `d/dy` at `x = 0` is 0",
    # reductions and statistics
    "max": "tied maxima share the cotangent evenly (each of k ties gets 1/k); `initial` counts "
           "as one more entry",
    "min": "tied minima share the cotangent evenly",
    "ptp": "ties at the max or the min share evenly",
    "nanmax": "ties share evenly; NaN entries get 0",
    "prod": "exact at zeros (the product of the other entries), to every order; likewise "
            "`cumprod`, `cumulative_prod`, `nancumprod`",
    "median": "an odd count picks one entry, an even count gives 1/2 to each middle entry; "
              "entries equal to an order statistic share it evenly ([1, 2, 2] gives 0, 1/2, "
              "1/2)",
    "percentile": "in `x` as `median`; in `q`, exactly on a sample, the average of the "
                  "one-sided slopes; the discrete methods have zero derivative in `q`",
    "std": "at zero spread (variance exactly 0) the derivative is 0 at every order "
           "(the formula would give 0/0); likewise `nanstd`",
    "corrcoef": "the final clip to [-1, 1] follows `clip` (1/2 exactly at a bound)",
    "nanmean": "NaN entries get zero derivative in every nan-function; an all-NaN slice gives "
               "NaN with zero derivative",
    # layout, joining and selection
    "pad": "copies (edge, reflect, symmetric, wrap) add their cotangents; maximum/minimum/"
           "median statistics split ties evenly; `empty` pads with zeros that have no "
           "derivative",
    "trim_zeros": "only the kept part has a derivative; an end entry exactly 0 is dropped",
    "sort": "each sorted entry takes the derivative of the input entry numpy's stable sort "
            "puts there (so at a tie `sort(x)[-1]` and `max(x)` differ: `max` shares)",
    "partition": "each output entry takes the derivative of the input numpy placed there; "
                 "ties are matched in order",
    "unique": "equal entries share the derivative evenly (each unique value gets the mean of "
              "the equal inputs); likewise `union1d`, `setdiff1d`",
    "index_max": "`x.at[idx].max(v)` / `.min(v)`: all tied candidates (old entry and written "
                 "values) share evenly",
    "index_multiply": "`x.at[idx].multiply(v)` with repeats multiplies in index order, exact "
                      "at zeros",
    # products and polynomials
    "roots": "a simple root has derivative `-dp(r)/p'(r)`; a repeated root gives inf/nan",
    "polyfit": "a rank-deficient fit raises NotImplementedError (no derivative exists)",
    "polydiv": "remainder coefficients numpy trims as zero take no derivative",
    "polymul": "leading zeros numpy drops take no derivative",
    # fft
    "fft.irfft": "the imaginary parts of the DC bin (and the Nyquist bin for even n) do not "
                 "change the result: derivative 0; bins cropped by `n` get 0; likewise "
                 "`hfft`, `irfft2`, `irfftn`",
    # linalg
    "linalg.cholesky": "reads the lower triangle (the upper with `upper=True`), as numpy: zero "
                       "derivative with respect to the other; likewise `eigh`, `eigvalsh` "
                       "(`UPLO`)",
    "linalg.eigh": "eigenvector derivatives divide by eigenvalue gaps; at an exactly repeated "
                   "eigenvalue that term is left out (no inf/nan), and the vectors' derivative "
                   "has no meaning there; eigenvalues alone (`eigvalsh`) stay exact; likewise "
                   "`svd` with repeated singular values",
    "linalg.svdvals": "exact at repeated singular values for functions symmetric in them; a "
                      "singular value exactly 0 has derivative 0",
    "linalg.norm": "every `ord` has gradient 0 at `x = 0` (the 2-norm's Hessian there is 0 "
                   "too); `ord=0` has zero derivative; inner kinks follow `abs` and `max`; "
                   "likewise `vector_norm`, `matrix_norm`",
    "linalg.det": "the derivative is the cofactor matrix, exact at singular matrices and "
                  "to every order; `inv`, `solve` raise LinAlgError at a singular matrix as "
                  "numpy does, `slogdet`'s derivative there (which does not exist) says so",
    "linalg.pinv": "rank-deficient input: the derivative along perturbations that keep the "
                   "rank; likewise `lstsq`",
    "linalg.eig": "eigenvectors follow numpy's normalisation (unit norm, largest entry real)",
    # counting
    "histogram": "counts are piecewise constant in the data (zero derivative); edges from the "
                 "data range follow its min and max",
}

IN_PLACE = ("writes its first argument in place (it returns None): a traced array as numpy "
            "writes it, the derivative that of the written array (`tests/test_writes.py`); a "
            "plain array given traced values raises TracerMutationError naming the functional "
            "form (`np.at(x)[idx].set(v)`, `np.where`)")
NO_RULE_YET = "no derivative rule yet; add one with fgrad.primitive and fgrad.defvjp/defjvp"

# (fgrad.numpy's fft and linalg load on first use: here, so that their rules are in the table)
load_on_first_use(vars(fnp))
MODULES = (("", _onp, fnp), ("linalg.", _onp.linalg, fnp.linalg), ("fft.", _onp.fft, fnp.fft),
           ("lib.stride_tricks.", _onp.lib.stride_tricks, fnp.lib.stride_tricks))


def public_functions(module):
    """The public callables of a numpy module that are not types (dtypes, classes)."""
    return sorted(n for n in dir(module) if not n.startswith("_")
                  and callable(getattr(module, n)) and not isinstance(getattr(module, n), type)
                  and not isinstance(getattr(module, n), types.ModuleType))


def _entries_by_object():
    by_id = {id(p): ("primitive", p) for p in PRIMITIVES.values() if p.spec is not None}
    by_id.update((id(f.fn), ("function", f)) for f in FUNCTIONS.values())
    return by_id


def classify():
    """Rows ``(qualified name, status, entry or None, detail)`` for every numpy function."""
    by_id = _entries_by_object()
    rows = []
    for prefix, np_mod, our_mod in MODULES:
        for name in public_functions(np_mod):
            qual = prefix + name
            ours = getattr(our_mod, name, None)
            hit = by_id.get(id(ours))
            if hit is not None:
                kind, entry = hit
                rows.append((qual, "differentiable", entry, kind))
            elif getattr(ours, "_fgrad_status", None) == "zero":
                rows.append((qual, "zero derivative", None, ""))
            elif getattr(ours, "_fgrad_status", None) == "in place":
                rows.append((qual, "in place", None, IN_PLACE))
            else:
                rows.append((qual, "unsupported", None, reason(qual) or NO_RULE_YET))
    return rows


def differentiable_names(rows=None):
    """Qualified numpy names that are differentiable, with the table entry checking each."""
    return {q: e for q, s, e, _ in (rows or classify()) if s == "differentiable"}


def render():
    rows = classify()
    counts = {}
    for _, status, _, _ in rows:
        counts[status] = counts.get(status, 0) + 1
    out = [
        "# Coverage of numpy by fgrad",
        "",
        "Generated by `python -m fgrad coverage --write` from the primitive table; "
        "`tests/test_coverage.py` fails if this file is stale.",
        f"numpy {_onp.__version__}: {len(rows)} public functions in `numpy`, `numpy.linalg`, "
        f"`numpy.fft` and `numpy.lib.stride_tricks`: "
        f"**{counts.get('differentiable', 0)} differentiable** (VJP and JVP, "
        f"checked against finite differences to the order shown), "
        f"{counts.get('zero derivative', 0)} with zero derivative (they accept traced values "
        f"and return plain ones), {counts.get('in place', 0)} writing their argument in "
        f"place (a traced array is written as numpy writes it), "
        f"{counts.get('unsupported', 0)} unsupported (handed a traced "
        "value they raise `NoDerivativeRuleError`, for the reason given).",
        "",
        "Checked by: the generated tests (`tests/test_rules.py`) and `python -m fgrad check`, "
        "under the entry named in the last column (a primitive, or `np.<name>` for a function "
        "composed of primitives and checked as a whole).",
        "",
        "## Kinks and edges",
        "",
        "One convention throughout: at a kink the derivative is the average of the one-sided "
        "derivatives, so tied candidates share the derivative evenly. Each choice below is "
        "stated in the function's docstring and tested at the kink.",
        "",
        "| function | at the kink or edge |",
        "|---|---|",
    ]
    out += [f"| `{name}` | {text} |" for name, text in sorted(KINKS.items())]
    out += ["", "## Every function", "",
            "| function | status | VJP | JVP | order checked | checked as |",
            "|---|---|---|---|---|---|"]
    for qual, status, entry, detail in rows:
        if status == "differentiable":
            out.append(f"| `{qual}` | differentiable | yes | yes | {entry.spec.order} "
                       f"| `{entry_name(entry)}` |")
        elif status == "zero derivative":
            out.append(f"| `{qual}` | zero derivative | - | - | - | plain result |")
        elif status == "in place":
            out.append(f"| `{qual}` | in place | - | - | - | {detail} |")
        else:
            out.append(f"| `{qual}` | unsupported | - | - | - | {detail} |")
    return "\n".join(out + scipy_section()) + "\n"


SCIPY_MODULES = ("special", "stats", "linalg", "signal", "integrate", "optimize",
                 "spatial.distance")
DRIVERS = ("minimize", "root")  # scipy's solvers run on plain values; their results are traced


def scipy_rows():
    """Rows ``(name, entry, not differentiable in)`` for every public function of
    ``fgrad.scipy`` (distributions' methods as ``stats.norm.logpdf``), or [] without scipy."""
    try:
        mods = {m: importlib.import_module("fgrad.scipy." + m) for m in SCIPY_MODULES}
    except ImportError:
        return []
    by_id = _entries_by_object()
    rows = []

    def add(name, obj):
        entry = obj if isinstance(obj, Primitive) else getattr(obj, "_fgrad_entry", None) \
            or by_id.get(id(obj), (None, None))[1]
        rows.append((name, entry, getattr(obj, "_fgrad_not_in", ())))

    for m, mod in mods.items():
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if name.startswith("_") or isinstance(obj, type):
                continue
            if isinstance(obj, Primitive):
                if obj.name.startswith(f"scipy.{m}."):
                    add(f"{m}.{name}", obj)
            elif hasattr(obj, "_fgrad_entry") or id(obj) in by_id:  # (wrapped: scipy's module)
                add(f"{m}.{name}", obj)
            elif getattr(obj, "__module__", None) != mod.__name__:
                continue
            elif hasattr(obj, "methods"):  # a distribution
                for meth in obj.methods:
                    add(f"{m}.{name}.{meth}", getattr(obj, meth))
            elif name in DRIVERS:
                add(f"{m}.{name}", obj)
    return rows


def scipy_section():
    rows = scipy_rows()
    if not rows:
        return ["", "## fgrad.scipy", "", "(scipy is not installed: `pip install -e "
                "\".[scipy]\"` and regenerate.)"]
    out = ["", "## fgrad.scipy", "",
           f"{len(rows)} functions mirror scipy's names (`import fgrad.scipy.special`, ...): on "
           "plain values they are scipy's own; traced, their VJP and JVP rules are table "
           "entries checked like numpy's. Arguments listed as not differentiable are refused by "
           "name when differentiated (`NoDerivativeRuleError`); staged by `jit` or batched by "
           "`vmap`, the discrete distributions' `k`, `loc` and fixed shapes and "
           "scipy.special's orders and parameters (`polygamma`'s `n`, the Bessel functions' "
           "`v`, the Riemann `zeta(x)`'s `x`) are operands; `multigammaln`'s `d`, `expn`'s "
           "`n`, `hyp1f1`'s and `hyp2f1`'s parameters, `lambertw`'s `k`, `simpson`'s `x`, "
           "the ODE solvers' settings (`rtol`, `atol`, step sizes) and `pinv`'s and "
           "`lstsq`'s cutoffs are refused by name (`ConcretizationError`, saying how to keep "
           "them fixed). Every other float argument is differentiable. scipy's other "
           "functions are there "
           "too (`fgrad.scipy.optimize.linprog`, `fgrad.scipy.signal.wiener`, ...): scipy's "
           "own on plain values; handed a traced value, any of them, and any scipy function "
           "called directly, raises an error naming it and saying what to do.",
           "", "| function | VJP | JVP | order checked | not differentiable in | checked as |",
           "|---|---|---|---|---|---|"]
    for name, entry, not_in in rows:
        if entry is None:  # a driver of scipy's (minimize, root): derivatives of its result
            out.append(f"| `{name}` | yes | yes | 2 | - | via "
                       "`scipy.optimize.implicit_solution` (traced args) |")
            continue
        out.append(f"| `{name}` | yes | yes | {entry.spec.order} | "
                   f"{', '.join(f'`{a}`' for a in not_in) or '-'} | `{entry_name(entry)}` |")
    return out
