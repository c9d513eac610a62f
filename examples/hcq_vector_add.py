#!/usr/bin/env python3
"""Vector add with the baregpu Python package (baregpu's HCQ C API), on the virtual Navi31.

usage: hcq_vector_add.py [--test] CODE_OBJECT [DEVICE]
  CODE_OBJECT  a gfx1100 code object with kernel vector_add(a, b, c, n), e.g.
               BUILD/tests/am/sim/isa/kernels/vector_add-O2.co
  DEVICE       sim:navi31 (default) or a PCI address
The package must be importable: PYTHONPATH=BUILD/python in the build tree, nothing after `meson install`.
Prints the result check and the kernel time; exit status 0 when every element is right.
--test: run as the project's test: waits time out after 10 s, a virtual device of its own, and exit status 77
(skipped) with a message when the code object is not built.
"""
import array
import os
import shutil
import stat
import sys
import tempfile

SKIP = 77


class UsageError(Exception):
    """A problem with what the user gave: printed as one line, exit status 1, no traceback."""


def read_code_object(path):
    # Only a regular file: a FIFO would block the read (and the open) forever, a directory cannot be read.
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            raise UsageError(f"code object {path!r} is {kind}, not a regular file; give a .co file "
                             "(e.g. BUILD/tests/am/sim/isa/kernels/vector_add-O2.co)")
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"cannot read code object {path!r}: {e.strerror}; build it (ninja -C BUILD) or give "
                         "the path of a gfx1100 .co file") from e


def main(argv):
    test = len(argv) > 1 and argv[1] == "--test"
    if test:
        argv = argv[:1] + argv[2:]
        os.environ["HCQDEV_WAIT_TIMEOUT_MS"] = "10000"
        # A virtual device of its own, as every device test has.
        os.environ["BAREGPU_SIM_DIR"] = tempfile.mkdtemp(prefix="baregpu-sim-python-")
        if len(argv) >= 2 and not os.path.exists(argv[1]):
            print(f"skipped: code object {argv[1]} is not built", file=sys.stderr)
            return SKIP
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    code_object = read_code_object(argv[1])  # before the device opens: a wrong path is the user's first mistake
    import baregpu  # after the environment above: the library reads it when it opens the device

    device_name = argv[2] if len(argv) > 2 else "sim:navi31"
    n = 1000
    a = array.array("f", (float(i) for i in range(n)))
    b = array.array("f", (float(2 * i + 1) for i in range(n)))
    with baregpu.Device(device_name) as dev:
        program = dev.load_program(code_object, "vector_add")
        bufs = [dev.alloc(4 * n) for _ in range(3)]
        bufs[0].copyin(a)
        bufs[1].copyin(b)
        seconds = program(*bufs, values=[n], global_size=((n + 63) // 64, 1, 1), local_size=(64, 1, 1))
        c = bufs[2].copyout(array.array("f", bytes(4 * n)))
        wrong = sum(1 for i in range(n) if c[i] != a[i] + b[i])
        print(f"vector_add of {n} floats on {device_name}: {n - wrong}/{n} correct, kernel time "
              f"{seconds * 1e6:.1f} us")
        return 0 if wrong == 0 else 1


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except (RuntimeError, UsageError) as e:  # baregpu.HcqError among them: status and the library's message
        print(f"error: {e}", file=sys.stderr)
        code = 1
    if "--test" in sys.argv[1:2] and "BAREGPU_SIM_DIR" in os.environ:
        shutil.rmtree(os.environ["BAREGPU_SIM_DIR"], ignore_errors=True)
    sys.exit(code)
