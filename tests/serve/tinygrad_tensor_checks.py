"""Tensor work on a GPU tinygrad reaches over REMOTE, each result checked against numpy (run by
tinygrad_end_to_end.py in a process of its own, as a user's program would be)."""
import sys

import numpy as np
from tinygrad import Device, Tensor

rng = np.random.default_rng(8)
a = rng.standard_normal((3, 5)).astype(np.float32)
b = rng.standard_normal((3, 5)).astype(np.float32)
x = rng.standard_normal((64, 48)).astype(np.float32)
y = rng.standard_normal((48, 32)).astype(np.float32)

checks = {
  "add": ((Tensor(a) + Tensor(b)).numpy(), a + b),
  "mul_exp": ((Tensor(a) * Tensor(b)).exp().numpy(), np.exp(a * b)),
  "matmul": ((Tensor(x) @ Tensor(y)).numpy(), x @ y),
  "sum": (Tensor(x).sum(axis=0).numpy(), x.sum(axis=0)),
  "max": (Tensor(x).max().numpy(), x.max()),
  "int_arange": ((Tensor.arange(1000) * 3).numpy(), np.arange(1000) * 3),
}
failed = 0
for name, (got, want) in checks.items():
  ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
  failed += not ok
  print(f"{name}: {'ok' if ok else 'MISMATCH'} (max error {np.max(np.abs(got - want)):.3g})")
print(f"device: {Device.DEFAULT}")
sys.exit(1 if failed else 0)
