"""Shared set-up of the baregpu package's tests: a virtual GPU state directory of their own, bounded waits, and the
gfx1100 test kernels of the build tree."""
import os
import pathlib
import tempfile

import pytest

# Before the package loads: every wait in these tests times out after 10 s, and the virtual GPUs keep their state in
# a directory of this run's own (a cold GPU, nothing shared with other test programs).
os.environ.setdefault("HCQDEV_WAIT_TIMEOUT_MS", "10000")
os.environ["BAREGPU_SIM_DIR"] = tempfile.mkdtemp(prefix="baregpu-python-tests-")

BUILD = pathlib.Path(os.environ.get("BAREGPU_BUILD_ROOT", pathlib.Path(__file__).resolve().parents[2] / "build"))
KERNELS = BUILD / "tests/am/sim/isa/kernels"


def code_object(name: str) -> bytes:
    path = KERNELS / f"{name}.co"
    if not path.exists():
        pytest.skip(f"{path} is not built (the gfx1100 kernel corpus needs clang-19 and ld.lld-19)")
    return path.read_bytes()


@pytest.fixture(scope="module")
def device():
    import baregpu
    with baregpu.Device("sim:navi31:python") as dev:
        yield dev


def pytest_sessionfinish(session, exitstatus):
    # Meson's convention: 77 when everything was skipped (pytest, numpy or tinygrad absent), not a silent pass.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus == 0 and reporter is not None and reporter.stats.get("skipped") and not reporter.stats.get("passed"):
        session.exitstatus = 77
