"""Parameter sensitivities of an ODE solution: Lotka-Volterra integrated by RK4, differentiated.

Beyond the seed articles, which differentiate a loss for training: here the function is a
numerical solver, 200 explicit Runge-Kutta steps written as a plain Python loop, and we want
the whole Jacobian of its result with respect to the model's parameters and initial state.
In the seeds' engines each of the ~15,000 recorded operations would be a graph node with a
hand-written backward, and a Jacobian would mean one backward() per output with gradients
zeroed in between. fgrad differentiates the loop as written: ``jacfwd`` pushes one tangent per
input through the tape, ``jacrev`` pulls one cotangent per output back through it, and both
must agree with each other and with finite differences.

The model: prey x and predators y with dx/dt = alpha x - beta x y, dy/dt = delta x y - gamma y,
from (x, y) = (10, 5) to t = 10 with step 0.05.

Run:  python examples/jacobian_ode.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np

PARAMS = onp.array([1.0, 0.1, 0.075, 1.5])      # alpha, beta, delta, gamma
NAMES = ("alpha", "beta", "delta", "gamma")
STATE0 = onp.array([10.0, 5.0])                 # prey, predators
STEP, STEPS = 0.05, 200                         # t from 0 to 10


def lotka_volterra(state, theta):
    prey, predators = state[0], state[1]
    alpha, beta, delta, gamma = theta[0], theta[1], theta[2], theta[3]
    return np.stack([alpha * prey - beta * prey * predators,
                     delta * prey * predators - gamma * predators])


def rk4(theta, state0, every=None):
    """The state at t = STEP * STEPS by classical Runge-Kutta; with ``every``, the states at
    every ``every``-th step instead (shape (STEPS // every + 1, 2))."""
    s, h, saved = state0, STEP, [state0]
    for _ in range(STEPS):
        k1 = lotka_volterra(s, theta)
        k2 = lotka_volterra(s + h / 2 * k1, theta)
        k3 = lotka_volterra(s + h / 2 * k2, theta)
        k4 = lotka_volterra(s + h * k3, theta)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        saved.append(s)
    return s if every is None else np.stack(saved[::every])


def finite_differences(f, x, rel=1e-6):
    """Central differences, one column per element of x (plain numpy, for checking)."""
    cols = []
    for i in range(x.size):
        h = rel * max(1.0, abs(x[i]))
        e = onp.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return onp.stack(cols, axis=-1)


def relative_difference(a, b):
    return float(onp.max(onp.abs(a - b)) / onp.max(onp.abs(b)))


def sensitivities():
    """The Jacobians of the final state w.r.t. (theta, state0) by jacfwd, jacrev and finite
    differences, as a dict of (J_theta, J_state0) pairs."""
    return {
        "jacfwd": fgrad.jacfwd(rk4, argnums=(0, 1))(PARAMS, STATE0),
        "jacrev": fgrad.jacrev(rk4, argnums=(0, 1))(PARAMS, STATE0),
        "finite differences": (finite_differences(lambda p: rk4(p, STATE0), PARAMS),
                               finite_differences(lambda s: rk4(PARAMS, s), STATE0)),
    }


def show(J, rows, cols):
    print("   " + " " * 10 + "".join(f"{c:>12}" for c in cols))
    for name, row in zip(rows, J):
        print(f"   {name:<10}" + "".join(f"{v:12.5f}" for v in row))


def main():
    final = rk4(PARAMS, STATE0)
    tape = fgrad.make_tape(rk4)(PARAMS, STATE0)
    print(f"Lotka-Volterra, {dict(zip(NAMES, PARAMS.tolist()))}, (prey, predators) from "
          f"{STATE0.tolist()}; RK4, {STEPS} steps of {STEP} ({len(tape)} recorded operations)")
    print(f"state at t = {STEP * STEPS:g}: prey {final[0]:.6f}, predators {final[1]:.6f}")

    J = sensitivities()
    print("\n1. d(state at t = 10)/d(parameters), by fgrad.jacfwd(rk4, argnums=(0, 1)):")
    show(J["jacfwd"][0], ("prey", "predators"), NAMES)
    print("   and d(state at t = 10)/d(initial state):")
    show(J["jacfwd"][1], ("prey", "predators"), ("prey0", "predators0"))

    print("\n2. The same Jacobians three ways (largest difference / largest entry):")
    for other in ("jacrev", "finite differences"):
        d = max(relative_difference(J[other][i], J["jacfwd"][i]) for i in range(2))
        print(f"   jacfwd vs {other:<19} {d:.1e}")
    print("   jacfwd: one forward sweep per input (6); jacrev: one backward sweep per output (2)")

    delta = 0.01 * PARAMS * onp.array([1.0, -1.0, 1.0, -1.0])
    predicted = final + J["jacfwd"][0] @ delta
    actual = rk4(PARAMS + delta, STATE0)
    print("\n3. What sensitivities are for: change every parameter by 1% (signs +, -, +, -)")
    print(f"   linear prediction state + J @ dtheta = {onp.round(predicted, 4).tolist()}")
    print(f"   integrating again                    = {onp.round(actual, 4).tolist()}"
          f"   (from {onp.round(final, 4).tolist()})")

    every = 20
    traj = rk4(PARAMS, STATE0, every)
    Jt = fgrad.jacfwd(lambda p: rk4(p, STATE0, every))(PARAMS)
    print(f"\n4. Sensitivity of the prey population along the trajectory (jacfwd of all "
          f"{traj.shape[0]} saved states at once, shape {Jt.shape}):")
    print("      t      prey" + "".join(f"{'d/d' + n:>12}" for n in NAMES))
    for k in range(traj.shape[0]):
        print(f"   {k * every * STEP:4.1f}  {traj[k, 0]:8.4f}"
              + "".join(f"{v:12.4f}" for v in Jt[k, 0]))
    return J


if __name__ == "__main__":
    main()
