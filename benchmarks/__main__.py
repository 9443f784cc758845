"""The command line: ``python -m benchmarks [--quick] [--only NAME] [--peers LIST]
[--threads N] [--json PATH] [--markdown PATH] [--smoke] [--list]``."""
import argparse
import datetime
import gc
import os
import platform
import sys
import time

# numpy is imported only after --threads has set the thread pools' sizes (main, below)
from .names import NAMES, PEERS

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fgrad_commit():
    """The commit fgrad was imported from, with "+changes" if its files differ from it."""
    import subprocess
    import fgrad
    where = os.path.dirname(os.path.dirname(os.path.abspath(fgrad.__file__)))
    try:
        head = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "fgrad"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + (" +changes" if dirty else "")) if head else "unknown (not a git checkout)"


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="fgrad timed beside plain numpy and the installed "
                                            "peers (autograd, JAX, torch.func); see "
                                            "benchmarks/RESULTS.md")
    p.add_argument("--quick", action="store_true",
                   help="fewer, shorter rounds and no jax.jit (under a minute)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only this workload (repeatable, or comma-separated): "
                        + ", ".join(NAMES))
    p.add_argument("--peers", default=None, metavar="LIST",
                   help="comma-separated peers to try (default: "
                        + ",".join(PEERS) + "; --quick leaves out jax.jit); "
                        "'none' for fgrad and numpy only")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="threads for numpy's BLAS, torch and XLA (default 1: every backend "
                        "on one core, so a busy core cannot stall a threaded matmul); "
                        "0 leaves each library's own default")
    p.add_argument("--json", metavar="PATH", help="save the results as JSON")
    p.add_argument("--markdown", metavar="PATH", help="save the tables as markdown")
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes, two rounds: checks that every workload runs (the tests "
                        "use it); measures nothing")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    return p.parse_args(argv)


def set_threads(n):
    """Before numpy, torch or jax is imported: size their thread pools."""
    if n <= 0:
        return
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                   f"intra_op_parallelism_threads={n}").strip()


def main(argv=None):
    args = parse(argv)
    set_threads(args.threads)
    if "numpy" in sys.modules and args.threads > 0:
        print("note: numpy was imported before --threads could apply", file=sys.stderr)

    from . import backends as _backends
    from .report import render, to_json
    from .runner import FULL, QUICK, TINY
    from .workloads import BY_NAME, WORKLOADS

    if args.list:
        for w in WORKLOADS:
            print(f"{w.name:20s} {w.title}: {w.measures}")
        return 0
    names = [n for item in args.only for n in item.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        print(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(BY_NAME)}",
              file=sys.stderr)
        return 2
    workloads = [BY_NAME[n] for n in names] if names else WORKLOADS
    if args.peers is None:
        peers = [p for p in PEERS if not (args.quick and p == "jax.jit")]
    else:
        peers = [p for p in args.peers.split(",") if p and p != "none"]
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    settings = {"smoke": TINY, "quick": QUICK, "full": FULL}[mode]

    load_start = load_average()
    found, notes = _backends.load(peers, threads=args.threads)
    if args.quick and args.peers is None:
        notes.append("jax.jit: left out by --quick (its compile times dominate a short run)")
    meta = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), mode=mode,
                nproc=os.cpu_count(), cpu=cpu_model(), load_start=load_start,
                fgrad_commit=fgrad_commit(),
                threads=args.threads or "library defaults",
                versions={"python": platform.python_version(),
                          **{b.name: b.version for b in found.values()}})
    print(f"fgrad benchmarks ({mode}): {', '.join(found)}; load average {load_start}",
          file=sys.stderr)
    for n in notes:
        print(f"  note: {n}", file=sys.stderr)

    # The peers' modules add hundreds of thousands of objects that every full collection
    # would scan again, slowing whichever backend happens to trigger it: freeze them.
    gc.collect()
    gc.freeze()
    settle_allocator()
    try:
        run = measure(workloads, found, settings, "tiny" if args.smoke else "full")
    finally:
        gc.unfreeze()
    meta["load_end"] = load_average()
    meta["seconds"] = run.pop("seconds")
    run.update(meta=meta, notes=notes)

    print("\n".join(render(run)))
    print(f"\n(total {meta['seconds']} s)")
    if args.json:
        with open(args.json, "w") as f:
            f.write(to_json(run))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(render(run, markdown=True)) + "\n")
    return 0


def settle_allocator():
    """Put C's allocator where a long run leaves it before the first row. glibc's ``malloc``
    serves a block of 128 KiB or more by a fresh ``mmap`` (its pages faulted in at first
    touch, unmapped at ``free``) until a ``free`` of such a block raises that threshold to
    its size (up to 32 MiB): rows run after a workload with big arrays (the 1e6 chain) found
    it raised, the same rows run first or alone (``--only``) did not, and their arrays of
    128 KiB - 8 MiB cost more in numpy and in every peer that allocates with it (the
    256-wide MLP's numpy gradient 3.5 ms against 2.6, its ``fgrad.jit`` 3.3 against 2.6).
    One 16 MiB array, made and freed here, raises it for every row."""
    import numpy
    numpy.empty(1 << 21)


def measure(workloads, found, settings, size):
    """Run the workloads and the tape-liveness check: ``{results, alive, seconds}``."""
    from .liveness import tape_left_alive
    from .runner import run_workload

    started = time.perf_counter()

    def progress(msg):
        print(f"  [{time.perf_counter() - started:6.1f} s] {msg}", file=sys.stderr, flush=True)

    results = {w.name: run_workload(w, found, settings, size, progress) for w in workloads}
    alive = tape_left_alive()
    imports = None
    if size != "tiny":  # (import fgrad.numpy against numpy's, in fresh processes)
        import tempfile
        from .import_time import fresh_env, measure as import_times
        progress("import times")
        with tempfile.TemporaryDirectory() as cache:
            imports = import_times(11, fresh_env(cache))
    return dict(results=results, alive=alive, imports=imports,
                seconds=round(time.perf_counter() - started, 1))


if __name__ == "__main__":
    sys.exit(main())
