"""How long ``import fgrad.numpy`` takes beside ``import numpy``, in fresh processes.

    python -m benchmarks.import_time [--runs N]

Each statement runs in ``--runs`` fresh interpreters, the three statements interleaved, and the
medians are given beyond Python's own start (``python -c pass``). Byte code is cached first in
a temporary ``PYTHONPYCACHEPREFIX``, as an installed package has it: with
``PYTHONDONTWRITEBYTECODE`` set, every run would compile fgrad's sources again and time the
compiler (about 100 ms more), not the import. Then one run of ``python -X importtime`` says how
much of the import is fgrad's own modules, and which of them take the longest.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

STATEMENTS = {"python": "pass", "numpy": "import numpy", "fgrad.numpy": "import fgrad.numpy"}


def _seconds(statement, env):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True, env=env)
    return time.perf_counter() - start


def _self_times(env):
    """module -> its own import time in us (children excluded), one run of -X importtime."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", STATEMENTS["fgrad.numpy"]],
                         env=env, capture_output=True, text=True, check=True).stderr
    out = {}
    for line in err.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            out[parts[2].strip()] = int(parts[0].split(":")[1])
    return out


def measure(runs, env):
    """``{"python": ms, "numpy": ms, "fgrad.numpy": ms}``: medians of ``runs`` fresh
    processes, the imports beyond Python's start (``python`` itself is that start)."""
    _seconds(STATEMENTS["fgrad.numpy"], env)  # writes the byte code
    times = {name: [] for name in STATEMENTS}
    for _ in range(runs):
        for name, statement in STATEMENTS.items():
            times[name].append(_seconds(statement, env))
    med = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    return {"python": med["python"], "numpy": med["numpy"] - med["python"],
            "fgrad.numpy": med["fgrad.numpy"] - med["python"]}


def fresh_env(cache):
    """The environment of the measured processes: byte code cached in ``cache``."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        env = fresh_env(cache)
        med = measure(args.runs, env)
        numpy_ms, fgrad_ms = med["numpy"], med["fgrad.numpy"]
        print(f"medians of {args.runs} fresh processes, beyond Python's start "
              f"({med['python']:.0f} ms):")
        print(f"  import numpy        {numpy_ms:6.1f} ms")
        print(f"  import fgrad.numpy  {fgrad_ms:6.1f} ms  ({fgrad_ms / numpy_ms:.2f}x numpy's)")
        own = _self_times(env)
        ours = {m: us for m, us in own.items() if m.split(".")[0] == "fgrad"}
        print(f"python -X importtime, one run: fgrad's own modules {sum(ours.values()) / 1e3:.1f}"
              f" ms of {sum(own.values()) / 1e3:.1f} ms; the slowest (self time):")
        for module in sorted(ours, key=ours.get, reverse=True)[:8]:
            print(f"  {ours[module] / 1e3:6.1f} ms  {module}")


if __name__ == "__main__":
    main()
