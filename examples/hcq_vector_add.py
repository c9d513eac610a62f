#!/usr/bin/env python3
"""Vector add through baregpu's HCQ C API (hcq/hcq.h) with ctypes, on the virtual Navi31.

usage: hcq_vector_add.py [--test] LIBBAREGPU CODE_OBJECT [DEVICE]
  LIBBAREGPU   path to libbaregpu.so (BUILD/libbaregpu.so)
  CODE_OBJECT  a gfx1100 code object with kernel vector_add(a, b, c, n), e.g.
               BUILD/tests/am/sim/isa/kernels/vector_add-O2.co
  DEVICE       sim:navi31 (default) or a PCI address
Prints the result check and the kernel time; exit status 0 when every element is right.
--test: run as the project's test: waits time out after 10 s, a virtual device of its own, and exit status 77
(skipped) with a message when the code object is not built.
"""
import ctypes
import os
import shutil
import struct
import sys
import tempfile

HCQ_OK = 0


SKIP = 77


def main(argv):
    test = len(argv) > 1 and argv[1] == "--test"
    if test:
        argv = argv[:1] + argv[2:]
        os.environ["HCQDEV_WAIT_TIMEOUT_MS"] = "10000"
        # A virtual device of its own, as every device test has.
        os.environ["BAREGPU_SIM_DIR"] = tempfile.mkdtemp(prefix="baregpu-sim-python-")
        if len(argv) >= 3 and not os.path.exists(argv[2]):
            print(f"skipped: code object {argv[2]} is not built", file=sys.stderr)
            return SKIP
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    # An absolute path: the library finds the virtual firmware of its build tree by its own location.
    lib = ctypes.CDLL(os.path.abspath(argv[1]))
    device_name = argv[3] if len(argv) > 3 else "sim:navi31"
    vp, u64, u32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32
    lib.hcq_last_error.restype = ctypes.c_char_p
    lib.hcq_device_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.hcq_device_close.argtypes = [vp]
    lib.hcq_buffer_alloc.argtypes = [vp, u64, ctypes.c_int, ctypes.POINTER(vp)]
    lib.hcq_buffer_free.argtypes = [vp]
    lib.hcq_buffer_copyin.argtypes = [vp, ctypes.c_char_p, u64]
    lib.hcq_buffer_copyout.argtypes = [ctypes.c_char_p, vp, u64]
    lib.hcq_program_load.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.hcq_program_free.argtypes = [vp]
    lib.hcq_program_run.argtypes = [vp, ctypes.POINTER(vp), ctypes.c_size_t, ctypes.POINTER(u32), ctypes.c_size_t,
                                    ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_double)]

    def check(status, what):
        if status != HCQ_OK:
            raise RuntimeError(f"{what}: {lib.hcq_last_error().decode()}")

    n = 1000
    a = [float(i) for i in range(n)]
    b = [float(2 * i + 1) for i in range(n)]
    dev = vp()
    check(lib.hcq_device_open(device_name.encode(), ctypes.byref(dev)), f"open {device_name}")
    try:
        bufs = [vp(), vp(), vp()]
        for buf in bufs:
            check(lib.hcq_buffer_alloc(dev, 4 * n, 0, ctypes.byref(buf)), "alloc")
        check(lib.hcq_buffer_copyin(bufs[0], struct.pack(f"{n}f", *a), 4 * n), "copyin a")
        check(lib.hcq_buffer_copyin(bufs[1], struct.pack(f"{n}f", *b), 4 * n), "copyin b")
        code = open(argv[2], "rb").read()
        prog = vp()
        check(lib.hcq_program_load(dev, code, len(code), b"vector_add", ctypes.byref(prog)), "load vector_add")
        args = (vp * 3)(*bufs)
        values = (u32 * 1)(n)
        local = (u32 * 3)(64, 1, 1)
        grid = (u32 * 3)((n + 63) // 64, 1, 1)
        seconds = ctypes.c_double()
        check(lib.hcq_program_run(prog, args, 3, values, 1, grid, local, 1, ctypes.byref(seconds)), "run")
        out = ctypes.create_string_buffer(4 * n)
        check(lib.hcq_buffer_copyout(out, bufs[2], 4 * n), "copyout c")
        c = struct.unpack(f"{n}f", out.raw)
        wrong = sum(1 for i in range(n) if c[i] != a[i] + b[i])
        print(f"vector_add of {n} floats on {device_name}: {n - wrong}/{n} correct, kernel time "
              f"{seconds.value * 1e6:.1f} us")
        lib.hcq_program_free(prog)
        for buf in bufs:
            lib.hcq_buffer_free(buf)
        return 0 if wrong == 0 else 1
    finally:
        lib.hcq_device_close(dev)


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        code = 1
    if "--test" in sys.argv[1:2] and "BAREGPU_SIM_DIR" in os.environ:
        shutil.rmtree(os.environ["BAREGPU_SIM_DIR"], ignore_errors=True)
    sys.exit(code)
