"""baregpu.tinygrad: unmodified tinygrad (../shared/vendor/tinygrad) on DEV=BAREGPU, the virtual Navi31."""
import os

import numpy as np
import pytest

tinygrad = pytest.importorskip("tinygrad", reason="tinygrad (../shared/vendor/tinygrad) is not on PYTHONPATH")

os.environ.setdefault("BAREGPU_DEVICE", "sim:navi31:python-tinygrad")

from tinygrad import Device, Tensor, TinyJit, Variable  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def default_device():
    from tinygrad.helpers import Context
    with Context(DEV="BAREGPU"):
        yield


def test_the_module_is_tinygrads_runtime():
    import baregpu.tinygrad
    import tinygrad.runtime.ops_baregpu as runtime
    assert runtime is baregpu.tinygrad
    dev = Device["BAREGPU"]
    assert type(dev).__name__ == "BaregpuDevice"
    assert dev.arch == "gfx1100"


def test_add_one():
    assert (Tensor([1, 2, 3], device="BAREGPU") + 1).tolist() == [2, 3, 4]


def test_matmul_and_reductions_match_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((33, 17), dtype=np.float32), rng.standard_normal((17, 9), dtype=np.float32)
    out = (Tensor(a, device="BAREGPU") @ Tensor(b, device="BAREGPU")).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    x = rng.standard_normal(1000, dtype=np.float32)
    t = Tensor(x, device="BAREGPU")
    np.testing.assert_allclose(t.sum().item(), x.sum(), rtol=1e-4)
    np.testing.assert_allclose(t.exp().max().item(), np.exp(x).max(), rtol=1e-5)


def test_jit_graph_replays_with_new_inputs():
    @TinyJit
    def f(x, y):
        return (x * 2 + y).realize()

    for i in range(5):  # the JIT captures on the second call and replays tinygrad's HCQGraph from the third
        x = Tensor(np.full(64, float(i), dtype=np.float32), device="BAREGPU").realize()
        y = Tensor(np.arange(64, dtype=np.float32), device="BAREGPU").realize()
        assert f(x, y).tolist() == [2 * i + j for j in range(64)]


def test_jit_with_a_symbolic_size():
    @TinyJit
    def f(x):
        return (x + 1).realize()

    full = Tensor(np.arange(32, dtype=np.float32), device="BAREGPU").realize()
    for n in [5, 9, 17, 31]:
        v = Variable("n", 1, 32).bind(n)
        assert f(full[:v])[:n].tolist() == [float(j + 1) for j in range(n)]


def test_copies_between_two_virtual_gpus():
    a = Tensor(np.arange(100, dtype=np.int32), device="BAREGPU").realize()
    b = a.to("BAREGPU:1").realize()
    assert (b + 1).tolist() == list(range(1, 101))
