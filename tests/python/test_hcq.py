"""The baregpu package's bindings of the C API, on the virtual Navi31 (sim:navi31)."""
import array
import ctypes
import struct
import threading

import numpy as np
import pytest

import baregpu
from baregpu import _hcq
from conftest import code_object

# Navi31 (RX 7900 XTX) as AMD specifies it: 96 compute units in 6 shader engines of 2 shader arrays, wave32 by
# default, 64 KiB of LDS per workgroup, 24 GiB of VRAM; GC 11.0.0 is gfx1100.
NAVI31 = dict(arch="gfx1100", gfx_target_version=110000, compute_units=96, shader_engines=6,
              shader_arrays_per_engine=2, wave_size=32, lds_bytes=64 << 10, vram_bytes=24 << 30)


def test_api_version_is_the_headers():
    assert baregpu.api_version() == (_hcq.HCQ_API_VERSION_MAJOR, _hcq.HCQ_API_VERSION_MINOR)
    assert _hcq.HCQ_API_VERSION == (_hcq.HCQ_API_VERSION_MAJOR << 16) | _hcq.HCQ_API_VERSION_MINOR


def test_open_unknown_device_raises_with_status_and_message():
    with pytest.raises(baregpu.HcqError) as e:
        baregpu.Device("sim:nosuchgpu")
    assert e.value.status != _hcq.HCQ_OK
    assert "nosuchgpu" in str(e.value)
    assert e.value.status_name.startswith("HCQ_ERROR_")


def test_properties_are_navi31s(device):
    props = device.properties
    for field, expected in NAVI31.items():
        assert getattr(props, field) == expected, field
    assert props.name == "sim:navi31:python"
    assert props.ip_versions["gc"] == (11, 0, 0)
    assert props.ip_versions["sdma"] == (6, 0, 0)
    assert 0 < props.visible_vram_bytes <= props.vram_bytes


@pytest.mark.parametrize("host", [False, True])
def test_copyin_copyout_any_buffer_protocol_object(device, host):
    with device.alloc(4096, host=host) as buf:
        assert buf.size == 4096 and buf.address != 0
        data = np.arange(1024, dtype=np.uint32)
        buf.copyin(data)
        out = np.zeros(1024, dtype=np.uint32)
        buf.copyout(out)
        assert (out == data).all()
        buf.copyin(b"\x01\x02\x03")
        assert bytes(buf.copyout(size=4)) == b"\x01\x02\x03\x00"
        buf.copyin(memoryview(bytearray(b"xyzw"))[1:3])  # a slice: its own address, no copy
        assert bytes(buf.copyout(size=2)) == b"yz"
        buf.copyin(array.array("H", [0xBEEF]))
        assert bytes(buf.copyout(size=2)) == b"\xef\xbe"


def test_copy_arguments_that_are_not_buffers_raise_typeerror(device):
    with device.alloc(64) as buf:
        with pytest.raises(TypeError):
            buf.copyin(12345)
        with pytest.raises(TypeError):
            buf.copyout(b"read-only bytes")
        with pytest.raises(baregpu.HcqError):
            buf.copyin(bytes(128))  # larger than the buffer


def test_cpu_view_sees_the_buffers_memory(device):
    with device.alloc(4096, host=True) as buf:
        view = buf.cpu_view()
        view[:4] = b"abcd"
        assert bytes(buf.copyout(size=4)) == b"abcd"


def test_views_reach_their_part_and_outlive_the_base(device):
    base = device.alloc(8192)
    base.copyin(bytes(range(256)) * 32)
    view = base.view(4096 + 16, 64)
    assert view.address == base.address + 4096 + 16 and view.size == 64
    assert bytes(view.copyout()) == bytes(range(16, 80))
    inner = view.view(8, 8)
    assert bytes(inner.copyout()) == bytes(range(24, 32))
    base.close()  # the memory stays while a view holds it
    view.copyin(b"\xff" * 64)
    assert bytes(inner.copyout()) == b"\xff" * 8
    inner.close()
    view.close()
    with pytest.raises(baregpu.HcqError) as e:
        base.view(0, 1)
    assert e.value.status == _hcq.HCQ_ERROR_FAILED_PRECONDITION


def test_view_out_of_range_raises_invalid_argument(device):
    with device.alloc(4096) as buf:
        for offset, size in [(4096, 1), (0, 4097), (4000, 200), (0, 0)]:
            with pytest.raises(baregpu.HcqError) as e:
                buf.view(offset, size)
            assert e.value.status == _hcq.HCQ_ERROR_INVALID_ARGUMENT, (offset, size)


def test_signals_wait_and_time_out(device):
    with device.new_signal(5) as signal:
        assert signal.value == 5
        signal.value = 7
        signal.wait(7)
        with pytest.raises(baregpu.HcqError) as e:
            signal.wait(8, timeout_ms=50)
        assert e.value.status == _hcq.HCQ_ERROR_TIMEOUT


def test_queues_signal_wait_and_timestamp(device):
    with device.new_signal(0) as go, device.new_signal(0) as done:
        q = device.compute_queue().wait(go, 1).timestamp(done).signal(done, 3)
        q.submit()
        assert done.value == 0  # held by the wait
        go.value = 1
        done.wait(3)
        assert done.timestamp_us > 0


def test_copy_queue_copies_between_buffers(device):
    with device.alloc(1 << 16) as src, device.alloc(1 << 16) as dst, device.new_signal() as done:
        payload = np.random.default_rng(1).integers(0, 255, 1 << 16, dtype=np.uint8)
        src.copyin(payload)
        device.copy_queue().copy(dst, src, 1 << 16).signal(done, 1).submit()
        done.wait(1)
        assert (np.frombuffer(dst.copyout(), dtype=np.uint8) == payload).all()


def test_bound_queue_replays_with_variables_for_addresses_and_values(device):
    # A graph-style queue: the signal's address and the value are variables, given at each submit.
    with device.alloc(4096, host=True) as slots:
        q = device.compute_queue().signal(baregpu.Variable(0), baregpu.Variable(1)).bind()
        for slot, value in [(0, 11), (16, 22), (0, 33)]:
            q.submit([slots.address + slot, value])
            device.synchronize()
            done = device.new_signal()
            device.compute_queue().signal(done, 1).submit()
            done.wait(1)
            assert struct.unpack_from("<I", slots.cpu_view(), slot)[0] == value
        with pytest.raises(baregpu.HcqError) as e:
            q.submit([slots.address])  # variable 1 missing
        assert e.value.status == _hcq.HCQ_ERROR_INVALID_ARGUMENT


def test_program_metadata_and_run():
    code = code_object("vector_add-O2")
    with baregpu.Device("sim:navi31:python-run") as dev:
        program = dev.load_program(code, "vector_add")
        # vector_add(const float* a, const float* b, float* c, int n): three pointers and an int.
        assert program.arguments == [(0, 8), (8, 8), (16, 8), (24, 4)]
        assert program.args_size >= program.kernarg_size >= 28
        n = 1000
        a, b = np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float32) * 2 + 1
        bufs = [dev.alloc(4 * n) for _ in range(3)]
        bufs[0].copyin(a)
        bufs[1].copyin(b)
        seconds = program(*bufs, values=[n], global_size=((n + 63) // 64, 1, 1), local_size=(64, 1, 1))
        assert seconds > 0
        c = np.zeros(n, dtype=np.float32)
        bufs[2].copyout(c)
        assert (c == a + b).all()
        with pytest.raises(baregpu.HcqError) as e:
            program(*bufs[:2], values=[n], global_size=(1, 1, 1), local_size=(64, 1, 1))  # one buffer short
        assert "vector_add" in str(e.value)


def test_exec_at_with_caller_written_arguments_and_variable_grid():
    code = code_object("vector_add-O2")
    with baregpu.Device("sim:navi31:python-exec-at") as dev:
        program = dev.load_program(code, "vector_add")
        n = 256
        bufs = [dev.alloc(4 * n) for _ in range(3)]
        bufs[0].copyin(np.full(n, 1.5, dtype=np.float32))
        bufs[1].copyin(np.full(n, 2.0, dtype=np.float32))
        args = dev.alloc(4096)
        offset = 256
        layout = struct.pack("<QQQi", bufs[0].address, bufs[1].address, bufs[2].address, n)
        args.cpu_view()[offset:offset + len(layout)] = layout
        done = dev.new_signal()
        # copyin is ordered by the device's timeline (it returns before its copy ran): wait for it, as HCQ queues do.
        q = dev.compute_queue().wait(dev.timeline_signal, dev.timeline_value - 1).memory_barrier()
        q.exec_at(program, args, offset, (baregpu.Variable(0), 1, 1), (64, 1, 1)).signal(done, 1)
        q.submit([n // 64])
        done.wait(1)
        out = np.zeros(n, dtype=np.float32)
        bufs[2].copyout(out)
        assert (out == 3.5).all()
        q2 = dev.compute_queue().exec_at(program, args, offset + 8, (1, 1, 1), (64, 1, 1))
        with pytest.raises(baregpu.HcqError) as e:
            q2.submit()  # not 16-byte aligned
        assert e.value.status == _hcq.HCQ_ERROR_INVALID_ARGUMENT


def test_profile_json_names_the_kernel():
    code = code_object("vector_add-O2")
    with baregpu.Device("sim:navi31:python-profile", profile=True) as dev:
        program = dev.load_program(code, "vector_add")
        bufs = [dev.alloc(256) for _ in range(3)]
        program(*bufs, values=[64], global_size=(1, 1, 1), local_size=(64, 1, 1))
        dev.synchronize()
        trace = dev.profile_json()
        assert '"traceEvents"' in trace and "vector_add" in trace


def test_closing_a_device_with_live_objects():
    dev = baregpu.Device("sim:navi31:python-close")
    buf, signal, queue = dev.alloc(4096), dev.new_signal(), dev.compute_queue()
    dev.close()
    with pytest.raises(baregpu.HcqError) as e:
        buf.copyin(b"x")
    assert e.value.status == _hcq.HCQ_ERROR_FAILED_PRECONDITION
    assert buf.cpu_address is None
    with pytest.raises(baregpu.HcqError):
        queue.signal(signal, 1).submit()
    with pytest.raises(baregpu.HcqError):
        dev.alloc(16)
    buf.close(), signal.close(), queue.close()  # freeing after the device is fine
    buf.close()  # and closing twice is a no-op


def test_threads_each_with_their_own_queue(device):
    errors = []

    def worker(index):
        try:
            with device.alloc(4096) as src, device.alloc(4096) as dst, device.new_signal() as done:
                payload = bytes([index]) * 4096
                src.copyin(payload)
                for round_ in range(1, 6):
                    device.copy_queue().copy(dst, src, 4096).signal(done, round_).submit()
                    done.wait(round_)
                assert bytes(dst.copyout()) == payload
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


def test_buffer_wait_on_a_slot_the_caller_lays_out(device):
    from baregpu.hcq import lib  # the raw binding: the package's tinygrad backend waits this way
    with device.alloc(4096, host=True) as slots:
        device.compute_queue().signal(slots.address + 32, 9).submit()
        assert lib.hcq_buffer_wait(slots.handle, 32, 9, 10000) == _hcq.HCQ_OK
        assert lib.hcq_buffer_wait(slots.handle, 32, 10, 50) == _hcq.HCQ_ERROR_TIMEOUT
        assert "still 9" in lib.hcq_last_error().decode()
        assert lib.hcq_buffer_wait(slots.handle, 30, 1, 50) == _hcq.HCQ_ERROR_INVALID_ARGUMENT  # misaligned
        assert lib.hcq_buffer_wait(slots.handle, 4096, 1, 50) == _hcq.HCQ_ERROR_INVALID_ARGUMENT  # outside


def test_cpu_visible_buffers_sit_at_their_cpu_address(device):
    # tinygrad's HCQ (as KFD gives it) writes buffers through their GPU address.
    for host in (True, False):
        with device.alloc(8192, host=host) as buf:
            assert buf.address == buf.cpu_address
            ctypes.memset(buf.address, 0x5A, 8192)
            assert bytes(buf.copyout(size=4)) == b"\x5a" * 4


def test_required_local_size_and_a_wrong_local_size():
    code = code_object("vector_add-O2")
    with baregpu.Device("sim:navi31:python-reqd") as dev:
        program = dev.load_program(code, "vector_add")
        assert program.required_local_size == (64, 1, 1)  # the corpus kernel's reqd_work_group_size
        bufs = [dev.alloc(256) for _ in range(3)]
        with pytest.raises(baregpu.HcqError) as e:
            program(*bufs, values=[64], global_size=(1, 1, 1), local_size=(32, 1, 1))
        assert "64" in str(e.value) and "32" in str(e.value)


def test_two_devices_share_buffers_and_signals():
    with baregpu.Device("sim:navi31:python-peer-a") as a, baregpu.Device("sim:navi31:python-peer-b") as b:
        src = a.alloc(4096)
        src.copyin(bytes(range(256)) * 16)
        dst = b.alloc(4096)
        dst.map_to(a)  # a's copy engine writes b's VRAM at the same address
        done = b.new_signal()
        b.share_signals_with(a)  # and signals b's signal
        a.copy_queue().copy(dst, src, 4096).signal(done, 1).submit()
        done.wait(1)
        assert bytes(dst.copyout()) == bytes(range(256)) * 16


def test_a_graph_replays_a_kernel_and_a_copy_with_new_values():
    code = code_object("vector_add-O2")
    with baregpu.Device("sim:navi31:python-graph") as dev:
        program = dev.load_program(code, "vector_add")
        n_max = 256
        a, b, c, copy = (dev.alloc(4 * n_max) for _ in range(4))
        a.copyin(np.full(n_max, 1.0, dtype=np.float32))
        b.copyin(np.full(n_max, 2.5, dtype=np.float32))
        graph = baregpu.Graph(variables=2)
        graph.add_kernel(program, [a, b, c], values=[baregpu.Variable(0)], global_size=(baregpu.Variable(1), 1, 1),
                         local_size=(64, 1, 1))
        graph.add_copy(dev, copy, c, 4 * n_max).finalize()
        for n in (64, 192):
            c.copyin(np.zeros(n_max, dtype=np.float32))
            graph.run([n, (n + 63) // 64]).wait()
            out = np.zeros(n_max, dtype=np.float32)
            copy.copyout(out)
            assert (out[:n] == 3.5).all() and (out[n:] == 0).all(), n
        bad = baregpu.Graph(0).add_kernel(program, [a, b], values=[1], global_size=(1, 1, 1), local_size=(64, 1, 1))
        with pytest.raises(baregpu.HcqError):
            bad.finalize()  # one buffer short of vector_add's arguments


def test_a_fault_ends_the_wait_at_once_with_what_the_device_reported():
    # vector_add with its first instruction replaced by an encoding gfx1100 does not have: the wave stops with the SQ's
    # illegal-instruction error and the dispatch would never end; the wait ends with the decoded fault.
    code = bytearray(code_object("vector_add-O2"))
    section_headers, = struct.unpack_from("<Q", code, 0x28)  # Elf64_Ehdr e_shoff (elf.h)
    entry_size, count, names_index = struct.unpack_from("<HHH", code, 0x3A)  # e_shentsize, e_shnum, e_shstrndx

    def section(i):  # Elf64_Shdr: sh_name, sh_type, sh_flags, sh_addr, sh_offset, ...
        return struct.unpack_from("<IIQQQ", code, section_headers + i * entry_size)

    names = section(names_index)[4]
    text = next(section(i)[4] for i in range(count)
                if code[names + section(i)[0]:].split(b"\0", 1)[0] == b".text")
    code[text:text + 4] = b"\xff\xff\xff\xff"
    with baregpu.Device("sim:navi31:python-illegal") as dev:
        program = dev.load_program(bytes(code), "vector_add")
        bufs = [dev.alloc(256) for _ in range(3)]
        program(*bufs, values=[64], global_size=(1, 1, 1), local_size=(64, 1, 1), wait=False)
        # The SQ's error interrupt ends the wait at once (a 30 s limit), decoded, and the queue is reset.
        with pytest.raises(baregpu.HcqError) as e:
            dev.timeline_signal.wait(dev.timeline_value - 1, timeout_ms=30_000)
        assert e.value.status == _hcq.HCQ_ERROR_DEVICE_FAULT
        assert e.value.status_name == "HCQ_ERROR_DEVICE_FAULT"
        assert "SQ_INTERRUPT_ID: error ILLEGAL_INST" in str(e.value), str(e.value)
        assert "the device reset its busy queues" in str(e.value), str(e.value)
