"""Printing a run: one table per case (median, min-max, calls x samples, fgrad's ratio to each
row, the first call (the check call: jax.jit's compilation; for fgrad.jit, its trace, the
median of the check's and a fresh jit's in each round), time per primitive
call where the case counts them), peak memory, per-workload
summaries, the targets with MET / NOT MET, and the notes. Plain text or markdown."""
import json

from .case import FGRAD
from .targets import IMPORT_LIMIT, TARGETS, evaluate, import_target, tape_target

ORDER = (FGRAD, "fgrad.jit", "numpy fwd", "numpy hand", "autograd", "jax", "jax.jit", "torch")


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_ratio(r):
    if r is None:
        return "-"
    return f"{r:.3g}x" if r < 100 else f"{r:.0f}x"


def table(header, rows, markdown):
    rows = [[str(c) for c in r] for r in rows]
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return out + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _labels(case):
    seen = [l for l in ORDER if l in case.stats]
    return seen + [l for l in case.stats if l not in seen]


def case_lines(case, markdown):
    head = f"{case.name}" + (f" ({case.ops} primitive calls)" if case.ops else "")
    lines = [f"**{head}**", ""] if markdown else [f"-- {head}"]
    header = ["backend", "median", "min - max", "samples x calls", "fgrad / this",
              "first call"]
    if case.ops:
        header.append("µs per op")
    rows = []
    for label in _labels(case):
        st = case.stats[label]
        row = [label, fmt_time(st.median), f"{fmt_time(st.lo)} - {fmt_time(st.hi)}",
               f"{st.samples} x {st.calls}",
               "" if label == FGRAD else fmt_ratio(case.ratio(FGRAD, label)),
               fmt_time(case.first_call.get(label))]
        if case.ops:
            row.append(f"{st.median / case.ops * 1e6:.2f}")
        rows.append(row)
    lines += table(header, rows, markdown)
    for label, t in case.lone_call.items():  # (what a first call's target compares with)
        lines += ["", f"{label}, one call timed alone where the first calls are: "
                      f"{fmt_time(t)}"]
    if case.memory:
        base = case.memory.get(FGRAD)
        lines += [""] + table(["peak memory (tracemalloc)", "MiB", "fgrad / this"],
                              [[l, f"{b / 2**20:.1f}",
                                "" if l == FGRAD or not base else fmt_ratio(base / b)]
                               for l, b in case.memory.items()], markdown)
    for label, why in case.failures.items():
        lines.append(f"- left out: {label}: {why}" if markdown else f"   left out: {label}: {why}")
    for n in case.notes:
        lines.append(f"- note: {n}" if markdown else f"   note: {n}")
    return lines


def workload_lines(w, markdown):
    lines = ([f"### {w.name}: {w.title}", "", w.measures, ""] if markdown
             else [f"== {w.name}: {w.title} ==", w.measures])
    for case in w.cases:
        lines += case_lines(case, markdown)
        lines.append("")
    if w.summary:
        metrics = sorted({m for v in w.summary.values() for m in v})
        lines += table(["backend"] + metrics,
                       [[l] + [f"{w.summary[l].get(m, float('nan')):.3g}" for m in metrics]
                        for l in ORDER if l in w.summary], markdown)
        lines.append("")
    return lines


def target_rows(results, alive, imports=None):
    """``[text, measured (a ratio, or objects left for the tape), shown, status]`` rows."""
    rows = []
    for t in TARGETS:
        ratio, status = evaluate(t, results)
        rows.append([t.text, ratio, fmt_ratio(ratio), status])
    n, status = tape_target(alive)
    rows.append(["after grad returns, nothing of the tape is alive (objects left)", n,
                 "-" if n is None else f"{n} (after gc: {alive['after_gc']})", status])
    ratio, status = import_target(imports)
    rows.append([f"import fgrad.numpy <= {IMPORT_LIMIT}x import numpy (fresh processes)", ratio,
                 fmt_ratio(ratio), status])
    return rows


def render(run, markdown=False):
    """All of a run (the dict ``__main__`` builds) as lines of text."""
    meta, results = run["meta"], run["results"]
    lines = []
    if not markdown:
        lines += [f"fgrad benchmarks, {meta['date']} ({meta['mode']})",
                  f"machine: {meta['nproc']} cores, {meta['cpu']}; load average "
                  f"{meta['load_start']} at start, {meta['load_end']} at end; threads per library: "
                  f"{meta['threads']}",
                  "versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
                  + f"; fgrad from {meta.get('fgrad_commit', 'unknown')}", ""]
    for w in results.values():
        lines += workload_lines(w, markdown)
    lines += ["### Targets", ""] if markdown else ["== targets =="]
    if meta["mode"] == "smoke":
        lines.append("not evaluated: a smoke run has tiny sizes and measures nothing")
    else:
        lines += table(["target", "measured", "status"],
                       [[r[0], r[2], r[3]] for r in target_rows(results, run.get("alive"),
                                                                run.get("imports"))],
                       markdown)
    if run["notes"]:
        lines += ["", "Notes:" if markdown else "notes:"]
        lines += [f"- {n}" for n in run["notes"]]
    return lines


def to_json(run):
    return json.dumps({"meta": run["meta"], "notes": run["notes"], "alive": run.get("alive"),
                       "imports": run.get("imports"),
                       "workloads": [w.as_dict() for w in run["results"].values()],
                       "targets": [dict(target=r[0], measured=r[1], status=r[3])
                                   for r in target_rows(run["results"], run.get("alive"),
                                                        run.get("imports"))]},
                      indent=1, default=float)
