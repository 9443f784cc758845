"""fgrad in five minutes: every result printed here can be checked by hand.

The first function is the running example of the seed articles on evaluation traces (the
Function/Variable design and the CMU "needle" notes): f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at
(2, 5). They build a Variable class, backward nodes and a graph walk to get its value 11.652
and gradient (5.5, 1.716); here that is one call, and jvp, vjp, Jacobians, Hessians and
higher derivatives are one call each too (see evaluation_trace.py for the traces themselves).

Run:  python examples/quickstart.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np

# 1. grad: the derivative of ordinary numpy code.
#    f(x1, x2) = ln(x1) + x1*x2 - sin(x2); by hand df/dx1 = 1/x1 + x2, df/dx2 = x1 - cos(x2).
def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)

value, (d1, d2) = fgrad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0)
print("1. f(2, 5)           =", round(float(value), 3), "         (ln 2 + 10 - sin 5 = 11.652)")
print("   df/dx1, df/dx2    =", round(float(d1), 3), round(float(d2), 3),
      "      (1/2 + 5 = 5.5,  2 - cos 5 = 1.716)")

# 2. jvp: forward mode pushes a tangent through; each unit tangent gives one gradient column.
_, col1 = fgrad.jvp(f, (2.0, 5.0), (1.0, 0.0))
_, col2 = fgrad.jvp(f, (2.0, 5.0), (0.0, 1.0))
print("2. jvp columns       =", round(float(col1), 3), round(float(col2), 3), "      (the same)")

# 3. vjp: reverse mode pulls a cotangent back; for y = x**2 it is 2 x * ct.
y, pull_back = fgrad.vjp(lambda x: x ** 2, np.array([1.0, 2.0, 3.0]))
print("3. vjp of x**2       =", pull_back(np.array([1.0, 1.0, 1.0]))[0], "     (2 x)")

# 4. jacfwd / jacrev: whole Jacobians, shape out.shape + in.shape.
def polar_to_xy(r_theta):
    r, theta = r_theta[0], r_theta[1]
    return np.stack([r * np.cos(theta), r * np.sin(theta)])

J = fgrad.jacfwd(polar_to_xy)(np.array([2.0, 0.0]))
print("4. Jacobian of polar ->", J.tolist(),
      "  ([[cos t, -r sin t], [sin t, r cos t]] at r=2, t=0)")
assert onp.allclose(J, fgrad.jacrev(polar_to_xy)(np.array([2.0, 0.0])))

# 5. hessian: jacfwd of jacrev. For f(x) = sum(x**3), H = diag(6 x).
H = fgrad.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
print("5. Hessian of sum x^3 =", H.tolist(), "        (diag(6 x) at x = (1, 2))")

# 6. Derivatives nest to any order: the third derivative of sin is -cos.
d3 = fgrad.grad(fgrad.grad(fgrad.grad(np.sin)))(0.0)
print("6. d3/dx3 sin at 0   =", float(d3), "                  (-cos 0 = -1)")

# 7. Pytrees: parameters in a dict, gradients come back in the same dict.
params = {"w": np.array([1.0, -2.0]), "b": 0.5}
x = np.array([3.0, 4.0])

def loss(p):
    return (np.dot(p["w"], x) + p["b"]) ** 2  # (3 - 8 + 0.5)^2 = 20.25

g = fgrad.grad(loss)(params)
print("7. grad w.r.t. dict  =", {k: onp.round(v, 3).tolist() for k, v in g.items()},
      "  (2 * -4.5 * x = [-27, -36], b: -9)")

# 8. Python control flow just works: the tape records the branch actually taken.
def relu_ish(x):
    return x ** 2 if x > 0 else -x

print("8. branches          =", float(fgrad.grad(relu_ish)(3.0)), float(fgrad.grad(relu_ish)(-3.0)),
      "              (2x = 6 on the right, -1 on the left)")
