"""Pythonic bindings of baregpu's HCQ C API (hcq/hcq.h): devices, buffers, signals, queues and programs.

Every failing call raises HcqError, which carries the C API's status and its message (hcq_last_error()). Objects
free their C handles when closed, when their `with` block ends, or when garbage-collected; closing a device with
live buffers, signals, queues or programs is allowed (their later calls raise HcqError with status
FAILED_PRECONDITION, and freeing them stays safe), as the C API defines.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence

from . import _buffers
from . import _hcq
from ._library import lib

__all__ = ["HcqError", "Variable", "Device", "DeviceProperties", "Buffer", "Signal", "Queue", "ComputeQueue",
           "CopyQueue", "Program", "Graph", "api_version"]


class HcqError(RuntimeError):
    """A failed C API call: `status` is the hcq_status number, `status_name` its name, `message` the library's text."""

    def __init__(self, status: int, message: str, call: str = ""):
        self.status, self.message, self.call = status, message, call
        self.status_name = _hcq.HCQ_STATUS_NAMES.get(status, f"status {status}")
        super().__init__(f"{call}: {self.status_name}: {message}" if call else f"{self.status_name}: {message}")


def _check(status: int, call: str) -> None:
    if status != _hcq.HCQ_OK:
        raise HcqError(status, lib.hcq_last_error().decode(errors="replace"), call)


def api_version() -> tuple[int, int]:
    """(major, minor) of the loaded library's C API."""
    v = lib.hcq_api_version()
    return v >> 16, v & 0xffff  # HCQ_API_VERSION's packing: (major << 16) | minor


class _Record:
    """A frozen record of named fields, compared and printed by them: what dataclasses.dataclass(frozen=True) gives,
    without importing dataclasses (and inspect) at start-up, ~5 ms of every program's first result."""
    _fields: tuple = ()
    _defaults: dict = {}

    def __init__(self, *args, **kwargs):
        if len(args) > len(self._fields):
            raise TypeError(f"{type(self).__name__} takes {len(self._fields)} arguments, not {len(args)}")
        values = dict(zip(self._fields, args))
        for name, value in kwargs.items():
            if name not in self._fields or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated argument {name!r}")
            values[name] = value
        for name in self._fields:
            if name not in values and name not in self._defaults:
                raise TypeError(f"{type(self).__name__}: missing argument {name!r}")
            object.__setattr__(self, name, values.get(name, self._defaults.get(name)))

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign to {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self):
        return hash(tuple(getattr(self, f) for f in self._fields))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"


class Variable(_Record):
    """A command argument known only at submit: the index-th value of Queue.submit's values, plus `addend`."""
    _fields = ("index", "addend")
    _defaults = {"addend": 0}

    def __add__(self, offset: int) -> "Variable":
        return Variable(self.index, self.addend + offset)


# A union without the typing module (Python 3.10+), which would cost ~5 ms of start-up to import.
Value = int | Variable


def _value(v: Value) -> _hcq.hcq_value:
    if isinstance(v, Variable):
        if v.index < 0 or v.index > 0xffffffff:
            raise ValueError(f"variable index {v.index} is not a uint32")
        return _hcq.hcq_value(v.addend % (1 << 64), v.index, 1)
    if not isinstance(v, int) or v < 0 or v >= 1 << 64:
        raise ValueError(f"{v!r} is neither a Variable nor a uint64")
    return _hcq.hcq_value(v, 0, 0)


def _u64s(values: Sequence[int]):
    """A uint64_t array of the values for the C API (NULL when there are none)."""
    return (ctypes.c_uint64 * len(values))(*values) if values else None


def _address(target) -> Value:
    """A Buffer's address, or the address (or Variable) as given."""
    return target.address if isinstance(target, Buffer) else target


def _dims(dims: Sequence[Value], what: str):
    if len(dims) != 3:
        raise ValueError(f"{what} must have 3 dimensions, not {len(dims)}")
    return (_hcq.hcq_value * 3)(*(_value(d) for d in dims))


class _Handle:
    """A C handle freed once, by close(), the end of a `with` block or garbage collection."""
    _free = None

    def __init__(self, handle: int):
        self._handle = handle
        self._lock = threading.Lock()

    @property
    def handle(self) -> int:
        if not self._handle:
            raise HcqError(_hcq.HCQ_ERROR_FAILED_PRECONDITION, f"this {type(self).__name__} was closed")
        return self._handle

    def close(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        if handle:
            type(self)._free(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            self.close()


def _is_ip_version(field: str) -> bool:
    return field.endswith("_version") and field != "gfx_target_version"


class DeviceProperties(_Record):
    """hcq_device_properties: what a device is (IP versions as (major, minor, revision)). Its fields are the
    generated struct's (none kept by hand): strings decoded, the *_version IP fields gathered into ip_versions
    {"gc": (11, 0, 0), ...}."""
    _fields = tuple(f for f, _ in _hcq.hcq_device_properties._fields_
                    if f != "struct_size" and not _is_ip_version(f)) + ("ip_versions",)


def _properties_from_c(p: _hcq.hcq_device_properties) -> DeviceProperties:
    values, ips = {}, {}
    for field, _ in p._fields_:
        v = getattr(p, field)
        if _is_ip_version(field):
            # IP_VERSION(major, minor, revision) = (major << 16) | (minor << 8) | revision, as hcq.h says.
            ips[field[:-len("_version")]] = ((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff)
        elif field != "struct_size":
            values[field] = v.decode(errors="replace") if isinstance(v, bytes) else v
    return DeviceProperties(ip_versions=ips, **values)


class Device(_Handle):
    """An opened GPU: "sim:navi31" (the virtual RX 7900 XTX), "sim:navi31:NAME" (another one) or a PCI address.

    with Device("sim:navi31") as dev:
        buf = dev.alloc(4096)
    """
    _free = staticmethod(lib.hcq_device_close)

    def __init__(self, name: str = "sim:navi31", profile: bool = False):
        handle = ctypes.c_void_p()
        flags = _hcq.HCQ_DEVICE_PROFILE if profile else 0
        _check(lib.hcq_device_open_flags(name.encode(), flags, ctypes.byref(handle)), f"open {name}")
        super().__init__(handle.value)
        self.name = name
        self._timeline = Signal._borrowed(self, lib.hcq_device_timeline_signal(handle))

    def __repr__(self):
        return f"Device({self.name!r})"

    @property
    def properties(self) -> DeviceProperties:
        p = _hcq.hcq_device_properties()
        p.struct_size = ctypes.sizeof(p)
        _check(lib.hcq_device_get_properties(self.handle, ctypes.byref(p)), "properties")
        return _properties_from_c(p)

    def synchronize(self) -> None:
        """Waits until everything submitted so far finished (HcqError TIMEOUT names the stuck queue)."""
        _check(lib.hcq_device_synchronize(self.handle), "synchronize")

    @property
    def timeline_signal(self) -> "Signal":
        return self._timeline

    @property
    def timeline_value(self) -> int:
        return lib.hcq_device_timeline_value(self.handle)

    def next_timeline(self) -> int:
        return lib.hcq_device_next_timeline(self.handle)

    def alloc(self, size: int, host: bool = False) -> "Buffer":
        """`size` bytes of VRAM (host=False) or of host memory the device reaches by DMA (host=True)."""
        handle = ctypes.c_void_p()
        _check(lib.hcq_buffer_alloc(self.handle, size, 1 if host else 0, ctypes.byref(handle)), f"alloc {size}")
        return Buffer(self, handle.value)

    def new_signal(self, value: int = 0) -> "Signal":
        handle = ctypes.c_void_p()
        _check(lib.hcq_signal_new(self.handle, value, ctypes.byref(handle)), "new_signal")
        return Signal(self, handle.value)

    def compute_queue(self) -> "ComputeQueue":
        return ComputeQueue(self)

    def copy_queue(self) -> "CopyQueue":
        return CopyQueue(self)

    def load_program(self, code_object: bytes, kernel: str) -> "Program":
        """Kernel `kernel` of a code object (ELF bytes) for this device's arch."""
        handle = ctypes.c_void_p()
        with _buffers.exported(code_object) as (address, size):
            _check(lib.hcq_program_load(self.handle, address, size, kernel.encode(), ctypes.byref(handle)),
                   f"load {kernel}")
        return Program(self, handle.value, kernel)

    def share_signals_with(self, peer: "Device") -> None:
        """Lets peer's queues wait on and write this device's signals."""
        _check(lib.hcq_device_share_signals(self.handle, peer.handle), f"share signals with {peer.name}")

    def profile_json(self) -> str:
        """The profiled spans (Device(profile=True), after synchronize()) as Chrome trace JSON."""
        length = ctypes.c_size_t()
        status = lib.hcq_device_profile_json(self.handle, None, 0, ctypes.byref(length))
        if status not in (_hcq.HCQ_OK, _hcq.HCQ_ERROR_RESOURCE_EXHAUSTED):
            _check(status, "profile_json")
        out = ctypes.create_string_buffer(length.value + 1)
        _check(lib.hcq_device_profile_json(self.handle, out, len(out), ctypes.byref(length)), "profile_json")
        return out.value.decode()


class Buffer(_Handle):
    """Device memory at a GPU virtual address (`address`), with the CPU's view when the CPU maps it."""
    _free = staticmethod(lib.hcq_buffer_free)

    def __init__(self, device: Device, handle: int, base: Buffer | None = None):
        super().__init__(handle)
        self.device, self.base = device, base

    def __repr__(self):
        return f"Buffer(address={self.address:#x}, size={self.size})" if self._handle else "Buffer(closed)"

    @property
    def address(self) -> int:
        return lib.hcq_buffer_address(self.handle)

    @property
    def size(self) -> int:
        return lib.hcq_buffer_size(self.handle)

    @property
    def cpu_address(self) -> int | None:
        """The CPU's address of the buffer, None when the CPU cannot map it (or the device was closed)."""
        return lib.hcq_buffer_cpu(self.handle) or None

    def cpu_view(self) -> memoryview:
        """A writable memoryview of the buffer's memory (no copy); valid while the buffer and its device live."""
        address = self.cpu_address
        if address is None:
            raise HcqError(_hcq.HCQ_ERROR_FAILED_PRECONDITION, "the CPU cannot map this buffer", "cpu_view")
        return memoryview((ctypes.c_char * self.size).from_address(address)).cast("B")

    def copyin(self, data) -> None:
        """Copies any contiguous buffer-protocol object (bytes, bytearray, numpy array, memoryview) to the start.

        Ordered by the device's timeline: it returns before the copy landed, so a queue that reads the buffer waits
        for (device.timeline_signal, device.timeline_value - 1) first."""
        with _buffers.exported(data) as (address, size):
            _check(lib.hcq_buffer_copyin(self.handle, address, size), "copyin")

    def copyout(self, out=None, size: int | None = None):
        """Copies the buffer's first bytes into `out` (a writable buffer-protocol object) or a new bytearray."""
        if out is None:
            out = bytearray(self.size if size is None else size)
        with _buffers.exported(out, writable=True) as (address, length):
            _check(lib.hcq_buffer_copyout(address, self.handle, length if size is None else min(size, length)),
                   "copyout")
        return out

    def view(self, offset: int, size: int) -> "Buffer":
        """A Buffer of [offset, offset + size) of this one; the memory lives until this buffer and all views close."""
        handle = ctypes.c_void_p()
        _check(lib.hcq_buffer_view(self.handle, offset, size, ctypes.byref(handle)), f"view {offset}+{size}")
        return Buffer(self.device, handle.value, base=self)

    def map_to(self, device: Device) -> None:
        """Maps this buffer into another device's page tables at the same address (peer access)."""
        _check(lib.hcq_buffer_map(device.handle, self.handle), f"map to {device.name}")


class Signal(_Handle):
    """A 32-bit value and a timestamp that queues write and wait on."""
    _free = staticmethod(lib.hcq_signal_free)

    def __init__(self, device: Device, handle: int):
        super().__init__(handle)
        self.device = device

    @classmethod
    def _borrowed(cls, device: Device, handle: int) -> "Signal":
        signal = cls(device, handle)
        signal._free_handle = False
        return signal

    def close(self) -> None:
        if getattr(self, "_free_handle", True):
            super().close()
        else:
            self._handle = None  # the device's timeline signal is the device's; close releases nothing

    @property
    def value(self) -> int:
        return lib.hcq_signal_value(self.handle)

    @value.setter
    def value(self, value: int) -> None:
        lib.hcq_signal_set_value(self.handle, value)

    @property
    def timestamp_us(self) -> float:
        return lib.hcq_signal_timestamp_us(self.handle)

    def wait(self, value: int, timeout_ms: int = 0) -> None:
        """Until value >= `value`; HcqError TIMEOUT after timeout_ms.

        0: HCQDEV_WAIT_TIMEOUT_MS as it was when the device opened, or 30 s."""
        _check(lib.hcq_signal_wait(self.handle, value, timeout_ms), f"wait for {value}")


class Queue(_Handle):
    """A command queue: build it by chaining commands, then submit() it (or bind() once and submit many times).

    Commands never fail on the spot: a bad one makes the next bind() or submit() raise. A command's value may be
    a Variable, given at submit(values)."""
    _free = staticmethod(lib.hcq_queue_free)
    _new = None

    def __init__(self, device: Device):
        handle = ctypes.c_void_p()
        _check(type(self)._new(device.handle, ctypes.byref(handle)), type(self).__name__)
        super().__init__(handle.value)
        self.device = device
        self._keep: list = []  # what the commands reference until the queue is reset or closed

    def wait(self, signal: Signal | Value, value: Value) -> "Queue":
        """Waits until the signal (a Signal, or the address of a 16-byte signal slot) is >= value."""
        return self._signal_like(lib.hcq_queue_wait, lib.hcq_queue_wait_var, lib.hcq_queue_wait_at, signal, value)

    def signal(self, signal: Signal | Value, value: Value) -> "Queue":
        """Sets the signal (a Signal, or the address of a signal slot) to value once earlier commands are done."""
        return self._signal_like(lib.hcq_queue_signal, lib.hcq_queue_signal_var, lib.hcq_queue_signal_at, signal, value)

    def _signal_like(self, constant, variable, at, signal, value):
        if isinstance(signal, Signal):
            if isinstance(value, Variable):
                if value.addend:
                    raise ValueError("a Signal's value variable cannot have an addend; pass the signal's address")
                variable(self.handle, signal.handle, value.index)
            else:
                constant(self.handle, signal.handle, value)
            self._keep.append(signal)
        else:
            at(self.handle, _value(signal), _value(value))
        return self

    def timestamp(self, signal: Signal | Value) -> "Queue":
        """Writes the GPU clock into the signal's timestamp (or at a timestamp address) when earlier work is done."""
        if isinstance(signal, Signal):
            lib.hcq_queue_timestamp(self.handle, signal.handle)
            self._keep.append(signal)
        else:
            lib.hcq_queue_timestamp_at(self.handle, _value(signal))
        return self

    def bind(self) -> "Queue":
        _check(lib.hcq_queue_bind(self.handle), "bind")
        return self

    def submit(self, values: Sequence[int] = ()) -> "Queue":
        _check(lib.hcq_queue_submit(self.handle, _u64s(values), len(values)), "submit")
        return self

    def reset(self) -> "Queue":
        lib.hcq_queue_reset(self.handle)
        self._keep.clear()
        return self


class ComputeQueue(Queue):
    _new = staticmethod(lib.hcq_queue_new_compute)

    def memory_barrier(self) -> "ComputeQueue":
        lib.hcq_queue_memory_barrier(self.handle)
        return self

    def exec(self, program: "Program", buffers: Sequence[Buffer] = (), values: Sequence[int] = (),
             global_size: Sequence[int] = (1, 1, 1), local_size: Sequence[int] = (1, 1, 1)) -> "ComputeQueue":
        """Runs program over global_size workgroups of local_size work-items, with the buffers' addresses and then
        the 32-bit values as its arguments."""
        handles = (ctypes.c_void_p * len(buffers))(*(b.handle for b in buffers))
        vals = (ctypes.c_uint32 * len(values))(*values)
        lib.hcq_queue_exec(self.handle, program.handle, handles, len(buffers), vals, len(values),
                           (ctypes.c_uint32 * 3)(*global_size), (ctypes.c_uint32 * 3)(*local_size))
        self._keep += [program, *buffers]
        return self

    def exec_at(self, program: "Program", args: Buffer, offset: int, global_size: Sequence[Value],
                local_size: Sequence[Value]) -> "ComputeQueue":
        """Runs program with the kernel arguments the caller wrote at `offset` of `args` (Program.args_size bytes);
        the queue adds the hidden arguments. Dimensions may be Variables."""
        lib.hcq_queue_exec_at(self.handle, program.handle, args.handle, offset, _dims(global_size, "global_size"),
                              _dims(local_size, "local_size"))
        self._keep += [program, args]
        return self


class CopyQueue(Queue):
    _new = staticmethod(lib.hcq_queue_new_copy)

    def copy(self, destination: Buffer | Value, source: Buffer | Value, size: int) -> "CopyQueue":
        """Copies size bytes between device addresses (Buffers, addresses, or Variables)."""
        lib.hcq_queue_copy_at(self.handle, _value(_address(destination)), _value(_address(source)), size)
        self._keep += [b for b in (destination, source) if isinstance(b, Buffer)]
        return self


class Program(_Handle):
    """A kernel loaded into device memory."""
    _free = staticmethod(lib.hcq_program_free)

    def __init__(self, device: Device, handle: int, name: str):
        super().__init__(handle)
        self.device, self.name = device, name

    def __repr__(self):
        return f"Program({self.name!r})"

    @property
    def kernarg_size(self) -> int:
        return lib.hcq_program_kernarg_size(self.handle)

    @property
    def args_size(self) -> int:
        """Bytes of argument memory one ComputeQueue.exec_at needs."""
        return lib.hcq_program_args_size(self.handle)

    @property
    def arguments(self) -> list[tuple[int, int]]:
        """(offset, size) of each explicit kernel argument, from the code object's metadata ([] without it)."""
        count = ctypes.c_size_t()
        _check(lib.hcq_program_arguments(self.handle, None, None, 0, ctypes.byref(count)), "arguments")
        offsets, sizes = (ctypes.c_uint32 * count.value)(), (ctypes.c_uint32 * count.value)()
        _check(lib.hcq_program_arguments(self.handle, offsets, sizes, count.value, ctypes.byref(count)), "arguments")
        return list(zip(offsets, sizes))

    @property
    def required_local_size(self) -> tuple[int, int, int] | None:
        """The kernel's reqd_work_group_size, None when it has none."""
        local = (ctypes.c_uint32 * 3)()
        _check(lib.hcq_program_required_local(self.handle, local), "required_local_size")
        return tuple(local) if any(local) else None

    def __call__(self, *buffers: Buffer, values: Sequence[int] = (), global_size: Sequence[int] = (1, 1, 1),
                 local_size: Sequence[int] = (1, 1, 1), wait: bool = True) -> float | None:
        """Runs the kernel ordered by the device's timeline; with wait, returns its GPU time in seconds."""
        handles = (ctypes.c_void_p * len(buffers))(*(b.handle for b in buffers))
        vals = (ctypes.c_uint32 * len(values))(*values)
        seconds = ctypes.c_double()
        _check(lib.hcq_program_run(self.handle, handles, len(buffers), vals, len(values),
                                   (ctypes.c_uint32 * 3)(*global_size), (ctypes.c_uint32 * 3)(*local_size),
                                   1 if wait else 0, ctypes.byref(seconds)), f"run {self.name}")
        return seconds.value if wait else None


class Graph(_Handle):
    """Kernels and copies recorded once (on one device or several) and replayed with new variable values.

    g = Graph(variables=1)
    g.add_kernel(program, [a, b, c], values=[Variable(0)], global_size=(4, 1, 1), local_size=(64, 1, 1))
    g.finalize()
    g.run([256]); g.wait()

    Recording never fails on the spot: a bad entry makes finalize() raise."""
    _free = staticmethod(lib.hcq_graph_free)

    def __init__(self, variables: int = 0):
        handle = ctypes.c_void_p()
        _check(lib.hcq_graph_new(variables, ctypes.byref(handle)), "graph")
        super().__init__(handle.value)
        self._keep: list = []

    def add_kernel(self, program: Program, buffers: Sequence[Buffer] = (), values: Sequence[Value] = (),
                   global_size: Sequence[Value] = (1, 1, 1), local_size: Sequence[Value] = (1, 1, 1)) -> "Graph":
        handles = (ctypes.c_void_p * len(buffers))(*(b.handle for b in buffers))
        vals = (_hcq.hcq_value * len(values))(*(_value(v) for v in values))
        lib.hcq_graph_add_kernel(self.handle, program.handle, handles, len(buffers), vals, len(values),
                                 _dims(global_size, "global_size"), _dims(local_size, "local_size"))
        self._keep += [program, *buffers]
        return self

    def add_copy(self, device: Device, destination: Buffer | int, source: Buffer | int,
                 size: int) -> "Graph":
        lib.hcq_graph_add_copy(self.handle, device.handle, _address(destination), _address(source), size)
        self._keep += [device] + [b for b in (destination, source) if isinstance(b, Buffer)]
        return self

    def finalize(self) -> "Graph":
        _check(lib.hcq_graph_finalize(self.handle), "graph finalize")
        return self

    def run(self, values: Sequence[int] = ()) -> "Graph":
        _check(lib.hcq_graph_run(self.handle, _u64s(values), len(values)), "graph run")
        return self

    def wait(self) -> None:
        _check(lib.hcq_graph_wait(self.handle), "graph wait")
