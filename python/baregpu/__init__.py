"""baregpu: a bare-metal GPU driver stack; this package is its HCQ C API (hcq/hcq.h) for Python.

    import baregpu
    with baregpu.Device("sim:navi31") as dev:
        buf = dev.alloc(1 << 20)
        buf.copyin(b"hello")

baregpu.tinygrad is a tinygrad backend (DEV=BAREGPU) over the same API.
"""
from ._config import VERSION as __version__
from .hcq import (Buffer, ComputeQueue, CopyQueue, Device, DeviceProperties, Graph, HcqError, Program, Queue,
                  Signal, Variable, api_version)

__all__ = ["Buffer", "ComputeQueue", "CopyQueue", "Device", "DeviceProperties", "Graph", "HcqError", "Program", "Queue",
           "Signal", "Variable", "api_version", "__version__"]
