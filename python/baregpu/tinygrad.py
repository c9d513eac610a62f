"""tinygrad on baregpu: a tinygrad device backend (DEV=BAREGPU) over baregpu's HCQ C API.

Importing this module registers it as tinygrad's runtime module `tinygrad.runtime.ops_baregpu`, so
`Device["BAREGPU"]`, `Device["BAREGPU:1"]` and `DEV=BAREGPU` work with unmodified tinygrad. (Installed, the package's
.pth file registers it lazily, without importing tinygrad or baregpu until tinygrad asks for the module.)

It subclasses tinygrad's HCQ classes: queues, signals, allocator and programs are baregpu's (built, bound and
submitted by the C API, with tinygrad's symbolic values passed as C API variables); kernels come from tinygrad's
own AMD LLVM renderer and compiler for the device's arch. tinygrad's HCQGraph runs unchanged on these queues.

Device names: BAREGPU opens BAREGPU_DEVICE (default "sim:navi31", the virtual RX 7900 XTX); BAREGPU:N opens the
N-th entry of BAREGPU_DEVICE when it lists several, comma-separated, else another, independent virtual GPU of the
same kind ("sim:navi31" -> "sim:navi31:N", "sim:navi31:x" -> "sim:navi31:x-N"); a PCI address has no N-th variant and
must be listed.
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys
import weakref

from tinygrad.device import BufferSpec
from tinygrad.helpers import round_up
from tinygrad.renderer.llvmir import AMDLLVMRenderer
from tinygrad.runtime.support.hcq import (CLikeArgsState, HCQAllocator, HCQBuffer, HCQCompiled, HCQProgram, HCQSignal,
                                          HWQueue, MMIOInterface)
from tinygrad.uop.ops import UOp

from . import _hcq
from .hcq import _check
from ._library import lib
from . import hcq as _api

__all__ = ["BaregpuDevice", "device_name"]


def device_name(tinygrad_device: str) -> str:
    """The baregpu device a tinygrad device name ("BAREGPU", "BAREGPU:2") opens (see the module's docstring)."""
    index = int(tinygrad_device.split(":")[1]) if ":" in tinygrad_device else 0
    configured = os.environ.get("BAREGPU_DEVICE", "sim:navi31")
    names = [n.strip() for n in configured.split(",") if n.strip()]
    if not names:
        raise RuntimeError(f"BAREGPU_DEVICE={configured!r} names no device; set it to e.g. sim:navi31 or 0000:03:00.0")
    if len(names) > 1:
        if index >= len(names):
            raise RuntimeError(f"{tinygrad_device}: BAREGPU_DEVICE lists {len(names)} devices ({configured}), "
                               f"there is no index {index}")
        return names[index]
    if index == 0:
        return names[0]
    if not names[0].startswith("sim:"):
        raise RuntimeError(f"{tinygrad_device}: BAREGPU_DEVICE={names[0]} is one PCI device; list the others "
                           f"comma-separated to open index {index}")
    # Another virtual GPU of the same kind: sim:KIND -> sim:KIND:N, sim:KIND:INSTANCE -> sim:KIND:INSTANCE-N.
    return f"{names[0]}{'-' if names[0].count(':') == 2 else ':'}{index}"


def _value(queue: HWQueue, v) -> _hcq.hcq_value:
    """A command argument: an int as a constant, a tinygrad symbolic value (sint) as a C API variable whose value
    the queue's submit passes (the index of the symbol in queue.syms, which tinygrad resolves at submit)."""
    if isinstance(v, UOp):
        return _hcq.hcq_value(0, queue._new_sym(v), 1)
    return _hcq.hcq_value(int(v), 0, 0)


class BaregpuSignal(HCQSignal):
    # Raw timestamp ticks per microsecond, tinygrad's timestamp_divider: the device's timestamp clock in MHz (set when
    # a device opens; a signal of a graph with a symbolic address has no owner to ask).
    ticks_per_microsecond: int | None = None

    def __init__(self, *args, owner: "BaregpuDevice | None" = None, **kwargs):
        divider = owner.props.timestamp_hz // 1_000_000 if owner is not None else BaregpuSignal.ticks_per_microsecond
        super().__init__(*args, owner=owner, **{**kwargs, "timestamp_divider": divider or 1})

    def wait(self, value: int, timeout: int | None = None):
        # The C API's wait (hcq_buffer_wait): it sleeps instead of spinning the interpreter, leaves the GIL to other
        # threads, and on timeout names the device's queues and where each stands.
        buf = self.base_buf
        slot = buf.base.meta
        offset = buf.va_addr - buf.base.va_addr
        status = lib.hcq_buffer_wait(slot.handle, offset, value, timeout or 0)
        if status == _hcq.HCQ_ERROR_TIMEOUT:
            raise RuntimeError(f"Wait timeout: the signal is not set to {value}, but {self.value}: "
                               f"{lib.hcq_last_error().decode(errors='replace')}")
        _check(status, f"wait for {value}")


class _Queue(HWQueue):
    """A tinygrad HWQueue recorded into a baregpu hcq_queue as it is built."""
    _new = None

    def __init__(self, dev: "BaregpuDevice"):
        super().__init__()
        self.dev = dev
        handle = ctypes.c_void_p()
        _check(type(self)._new(dev.hdev.handle, ctypes.byref(handle)), type(self).__name__)
        self._handle = handle.value
        self._free = weakref.finalize(self, lib.hcq_queue_free, self._handle)

    def wait(self, signal: HCQSignal, value=0):
        lib.hcq_queue_wait_at(self._handle, _value(self, signal.value_addr), _value(self, value))
        return self

    def signal(self, signal: HCQSignal, value=0):
        lib.hcq_queue_signal_at(self._handle, _value(self, signal.value_addr), _value(self, value))
        return self

    def timestamp(self, signal: HCQSignal):
        lib.hcq_queue_timestamp_at(self._handle, _value(self, signal.timestamp_addr))
        return self

    def bind(self, dev: "BaregpuDevice"):
        _check(lib.hcq_queue_bind(self._handle), f"{dev.device}: bind")
        self.binded_device = dev

    def _submit(self, dev: "BaregpuDevice"):
        values = self._prev_resolved_syms
        if any(v is None for v in values):
            raise RuntimeError(f"{dev.device}: submit of a queue with symbolic values without var_vals")
        array = (ctypes.c_uint64 * len(values))(*(v % (1 << 64) for v in values)) if values else None
        _check(lib.hcq_queue_submit(self._handle, array, len(values)), f"{dev.device}: submit")


class BaregpuComputeQueue(_Queue):
    _new = staticmethod(lib.hcq_queue_new_compute)

    def memory_barrier(self):
        lib.hcq_queue_memory_barrier(self._handle)
        return self

    def exec(self, prg: "BaregpuProgram", args_state: CLikeArgsState, global_size, local_size):
        # tinygrad writes the explicit arguments (and patches its symbolic ones at submit); baregpu adds the hidden
        # arguments and the dispatch packet behind them, and the launch.
        self.bind_args_state(args_state)
        args = args_state.buf
        base = args.base
        dims = [(_hcq.hcq_value * 3)(*(_value(self, d) for d in size)) for size in (global_size, local_size)]
        lib.hcq_queue_exec_at(self._handle, prg.program.handle, base.meta.handle, args.va_addr - base.va_addr, *dims)
        return self


class BaregpuCopyQueue(_Queue):
    _new = staticmethod(lib.hcq_queue_new_copy)

    def __init__(self, dev: "BaregpuDevice", queue_idx: int = 0):
        super().__init__(dev)

    def copy(self, dest: HCQBuffer, src: HCQBuffer, copy_size: int):
        lib.hcq_queue_copy_at(self._handle, _value(self, dest.va_addr), _value(self, src.va_addr), copy_size)
        return self


class BaregpuProgram(HCQProgram):
    def __init__(self, dev: "BaregpuDevice", obj):
        self.dev, self.name, self.lib = dev, obj.name, obj.lib
        # tinygrad's compiler output is a relocatable object (ET_REL); baregpu lays it out and relocates it itself.
        self.program = dev.hdev.load_program(obj.lib, obj.name)
        super().__init__(CLikeArgsState, dev, obj, kernargs_alloc_size=self.program.args_size)

    def fill_kernargs(self, bufs, vals=(), kernargs=None):
        # The kernarg segment is 16-byte aligned (AMDGPU ABI: kernarg_segment_alignment); tinygrad's default 8 is not.
        if kernargs is None:
            offset = self.dev.kernargs_offset_allocator.alloc(round_up(self.kernargs_alloc_size, 16), 16)
            kernargs = self.dev.kernargs_buf.offset(offset=offset, size=self.kernargs_alloc_size)
        return self.args_state_t(kernargs, self, bufs, vals=vals)


class BaregpuAllocator(HCQAllocator):
    def __init__(self, dev: "BaregpuDevice"):
        # Eight 2 MiB staging buffers for copies in and out (tinygrad's default is 32; the copy engine rotates them).
        super().__init__(dev, batch_size=2 << 20, batch_cnt=8)

    def _alloc(self, size: int, options: BufferSpec) -> HCQBuffer:
        if options.external_ptr is not None:
            raise MemoryError(f"{self.dev.device}: buffers at external host pointers are not supported")
        buf = self.dev.hdev.alloc(size, host=options.host)
        address = buf.cpu_address
        view = MMIOInterface(address, size, fmt="B") if address is not None else None
        if options.zero:
            if view is None:
                raise MemoryError(f"{self.dev.device}: a zeroed buffer needs CPU access")
            ctypes.memset(address, 0, size)
        return HCQBuffer(buf.address, size, meta=buf, view=view, owner=self.dev)

    def _do_free(self, opaque: HCQBuffer, options: BufferSpec):
        opaque.meta.close()

    def _do_map(self, buf: HCQBuffer):
        if not isinstance(buf.base.meta, _api.Buffer):
            # Mapping another runtime's memory (tinygrad's CPU device: plain process memory) needs the C API to pin and
            # map foreign host pages, which it cannot do yet.
            raise RuntimeError(f"{self.dev.device}: cannot map a {type(buf.owner).__name__} buffer: only baregpu's own "
                               f"buffers can be mapped into a baregpu device")
        buf.base.meta.map_to(self.dev.hdev)


class BaregpuDevice(HCQCompiled):
    def __init__(self, device: str = ""):
        self.hdev = _api.Device(device_name(device))
        self.props = self.hdev.properties
        BaregpuSignal.ticks_per_microsecond = self.props.timestamp_hz // 1_000_000
        super().__init__(device, BaregpuAllocator(self), [AMDLLVMRenderer], BaregpuProgram, BaregpuSignal,
                         functools.partial(BaregpuComputeQueue, self), functools.partial(BaregpuCopyQueue, self),
                         arch=self.props.arch)

    def device_props(self):
        return {"name": self.props.name, "arch": self.props.arch, "compute_units": self.props.compute_units,
                "wave_size": self.props.wave_size, "vram_bytes": self.props.vram_bytes}


# tinygrad loads tinygrad.runtime.ops_<name>; this module is that runtime for BAREGPU.
sys.modules.setdefault("tinygrad.runtime.ops_baregpu", sys.modules[__name__])
