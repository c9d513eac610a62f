"""tinygrad's side of tools/bench/compare: the work baregpu's benchmarks time, done by tinygrad's own code, imported
unmodified from a checkout and run in this process. Times are this thread's CPU time (time.thread_time_ns), which is
what Google Benchmark reports as cpu_time for baregpu's single-threaded benchmarks.

No GPU is involved. Where tinygrad's code expects a device, it gets a small stand-in object holding only the
attributes the timed methods read; each stand-in below says what it holds and why it removes nothing from what is
timed. What is stubbed, in short:
  - Queue builds: AMDComputeQueue/AMDCopyQueue get a stand-in AMDDevice holding tinygrad's own packet modules and
    register tables for Navi31's IP versions; the program is a stand-in AMDProgram whose fields come from the
    vector_add code object's kernel descriptor; the signal, buffers and kernel arguments are tinygrad's own
    HCQSignal/HCQBuffer/CLikeArgsState over host memory instead of GPU memory.
  - Page tables: AMMemoryManager (unmodified) over a stand-in AMDev whose VRAM is anonymous host memory; its GMC is
    tinygrad's AM_GMC with the TLB flush (MMIO register writes and polls, which need a GPU) replaced by a no-op.
    A page-table entry class that differs from AMPageTableEntry in one method only, supports_huge_page, chooses the
    page size, as PageTable's huge_pages flag does in baregpu's benchmark.
  - TLSF and the RDNA3 emulator need no stand-ins.
"""
import contextlib
import ctypes
import io
import mmap
import sys
import time

# Navi31's IP versions (baregpu's virtual GPU reports the same in its discovery table, am/sim/discovery_table.cc).
GC_VERSION = (11, 0, 0)
NBIO_VERSION = (4, 3, 0)
SDMA_VERSION = (6, 0, 0)
GFX_TARGET = (11, 0, 0)

# The same launch and copy as tests/bench/hcq_bench.cc's BM_BuildExecSignalPairs and BM_BuildCopySignal.
EXEC_GLOBAL = (4, 1, 1)
EXEC_LOCAL = (64, 1, 1)
COPY_BYTES = 1 << 20

# tests/bench/am_bench.cc: BM_TlsfAllocFree's allocator and pattern, and the 1 GiB mappings (virtual address 16 TiB
# into the managed range, VRAM address 2 GiB; 2 GiB + 2 MiB for 2 MiB pages so that no 1 GiB page fits).
TLSF_BYTES = 24 << 30
TLSF_LIVE = 512
GIB = 1 << 30
MAP_VA_OFFSET = 16 << 40
MAP_PADDR_4KIB = 2 << 30
MAP_PADDR_2MIB = (2 << 30) + (2 << 20)


def time_per_iteration(run_batch, min_time, max_iterations=1 << 24):
    """Calls run_batch(n) with n growing (as Google Benchmark grows its iteration count) until one call takes at
    least min_time seconds of this thread's CPU time; returns that call's nanoseconds per iteration."""
    iterations = 1
    while True:
        start = time.thread_time_ns()
        run_batch(iterations)
        elapsed = time.thread_time_ns() - start
        if elapsed >= min_time * 1e9 or iterations >= max_iterations:
            return elapsed / iterations
        grow = 10.0 if elapsed <= 0 else min(10.0, max(2.0, 1.4 * min_time * 1e9 / elapsed))
        iterations = min(max_iterations, int(iterations * grow) + 1)


class HostMemory:
    """Zeroed host memory at a fixed address, kept alive as long as this object."""

    def __init__(self, size):
        self.buffer = (ctypes.c_uint8 * size)()
        self.address = ctypes.addressof(self.buffer)
        self.size = size


class Tinygrad:
    """Imports tinygrad from `checkout` (a directory holding the tinygrad package and its test/ tree)."""

    def __init__(self, checkout, code_object_path):
        sys.dont_write_bytecode = True  # the checkout is read-only to us: no __pycache__ in it
        if str(checkout) not in sys.path:
            sys.path.insert(0, str(checkout))
        from tinygrad.runtime.support import hcq, memory
        from tinygrad.runtime.support.elf import elf_loader
        from tinygrad.runtime.autogen import amdgpu_kd
        self.hcq, self.memory = hcq, memory
        with open(code_object_path, "rb") as file:
            self.code = elf_loader(file.read())
        image, sections, _ = self.code
        self.rodata = next(s.header.sh_addr for s in sections if s.name == ".rodata")
        size = ctypes.sizeof(amdgpu_kd.llvm_amdhsa_kernel_descriptor_t)
        self.descriptor = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t.from_buffer_copy(
            bytes(image[self.rodata:self.rodata + size]))
        self._keep = []  # host memory the stand-ins and the emulator's dispatch point at
        self._vector_add = {}  # elements -> (dispatch, lane-instructions per dispatch), prepared once
        self._builders = None  # (build_compute, build_copy), made once

    def _host_buffer(self, size):
        """A tinygrad HCQBuffer over host memory: its va_addr is the host address, its cpu_view that memory."""
        memory = HostMemory(size)
        self._keep.append(memory)
        return self.hcq.HCQBuffer(memory.address, size, view=self.hcq.MMIOInterface(memory.address, size))

    # --- Queue builds -------------------------------------------------------------------------------------------

    def queue_builders(self):
        """build_compute(pairs) and build_copy(), each returning a queue built by tinygrad's AMDComputeQueue or
        AMDCopyQueue."""
        import importlib
        from tinygrad.runtime import ops_amd
        from tinygrad.runtime.support.amd import AMDIP, import_module, import_soc
        from tinygrad.runtime.autogen import hsa
        from tinygrad.dtype import dtypes
        offsets = importlib.import_module("tinygrad.runtime.autogen.am.navi_offsets")

        def bases(prefix, segments):
            return {i: tuple(getattr(offsets, f"{prefix}_BASE__INST{i}_SEG{s}", 0) for s in range(segments))
                    for i in range(6)}

        class QueueDevice:
            """What AMDComputeQueue.exec/signal and AMDCopyQueue.copy/signal read of an AMDDevice: its packet
            modules and IP register tables (tinygrad's autogen, for Navi31's versions, built as AMDDevice.__init__
            builds them), one XCC, the gfx target, no SQTT, and the scratch buffer whose address exec writes.
            Building never touches the device's queues, allocator or interface, so none is given."""
            target = GFX_TARGET
            xccs = 1
            sqtt_enabled = False
            tmpring_size = 0  # vector_add uses no scratch; exec only writes the value into COMPUTE_TMPRING_SIZE

            def __init__(self, scratch):
                self.soc = import_soc(GFX_TARGET)
                self.pm4 = importlib.import_module("tinygrad.runtime.autogen.am.pm4_nv")
                self.sdma = import_module("sdma", SDMA_VERSION)
                self.gc = AMDIP("gc", GC_VERSION, bases=bases("GC", 6))
                self.nbio = AMDIP("nbio", NBIO_VERSION, bases=bases("NBIO", 9))
                self.scratch = scratch

        device = QueueDevice(self._host_buffer(4096))
        descriptor, image_va = self.descriptor, 0x7f0000000000

        class Program:
            """The AMDProgram fields exec reads, derived from vector_add-O2.co's kernel descriptor the way
            AMDProgram.__init__ derives them (gfx11: rsrc1's PRIV bit; rsrc2's LDS size). Their values only pick
            which packets exec writes (for vector_add: no scratch or dispatch-pointer registers), not the cost
            of writing them. `signature` is what CLikeArgsState reads for the value argument n."""
            dev = device
            properties = descriptor.kernel_code_properties
            wave32 = properties & 0x400 == 0x400
            rsrc1 = descriptor.compute_pgm_rsrc1 | (1 << 20)
            lds_granules = ((descriptor.group_segment_fixed_size + 511) // 512) & 0x1ff
            rsrc2 = descriptor.compute_pgm_rsrc2 | (lds_granules << 15)
            rsrc3 = descriptor.compute_pgm_rsrc3
            prog_addr = image_va + self.rodata + descriptor.kernel_code_entry_byte_offset
            enable_dispatch_ptr = properties & hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_PTR
            enable_private_segment_sgpr = properties & hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER
            signature = (("n", 3, dtypes.uint32, ()),)

        program = Program()
        a, b, c = (self._host_buffer(4096) for _ in range(3))
        args = self.hcq.CLikeArgsState(self._host_buffer(4096), program, (a, b, c), vals=(64,))
        # owner=None: no device to return the signal to. tinygrad's AM path (is_am()) writes the same single
        # RELEASE_MEM for a signal as this does; only KFD adds an interrupt mailbox packet.
        signal = ops_amd.AMDSignal(base_buf=self._host_buffer(16))
        source, destination = self._host_buffer(4096), self._host_buffer(4096)
        counter = [0]

        def build_compute(pairs):
            # A new queue per build: tinygrad has no reset and builds a fresh queue for every dispatch
            # (HCQProgram.__call__); baregpu resets a warmed-up one.
            queue = ops_amd.AMDComputeQueue(device)
            value = counter[0]
            for _ in range(pairs):
                value += 1
                queue.exec(program, args, EXEC_GLOBAL, EXEC_LOCAL).signal(signal, value)
            counter[0] = value
            return queue

        def build_copy():
            # max_copy_size as AMDDevice gives it for SDMA 5 and later; COPY_BYTES fits one packet on both sides.
            queue = ops_amd.AMDCopyQueue(device, max_copy_size=0x40000000)
            counter[0] += 1
            queue.copy(destination, source, COPY_BYTES).signal(signal, counter[0])
            return queue

        return build_compute, build_copy

    def queue_build_ns(self, min_time):
        """{row key: (ns per build, dwords per build)} for compute queues of 1, 8, 64 exec+signal pairs and a copy."""
        if self._builders is None:
            self._builders = self.queue_builders()
        build_compute, build_copy = self._builders
        results = {}
        for pairs in (1, 8, 64):
            def batch(n, pairs=pairs):
                for _ in range(n):
                    build_compute(pairs)
            build_compute(pairs)  # warm: tinygrad caches register tables and packet encoders on first use
            results[f"build_compute_{pairs}"] = (time_per_iteration(batch, min_time), len(build_compute(pairs)._q))

        def copy_batch(n):
            for _ in range(n):
                build_copy()
        build_copy()
        results["build_copy"] = (time_per_iteration(copy_batch, min_time), len(build_copy()._q))
        return results

    # --- TLSF ---------------------------------------------------------------------------------------------------

    def tlsf_ns(self, min_time):
        """ns per free + alloc pair: BM_TlsfAllocFree's pattern on tinygrad's TLSFAllocator. Sizes are whole 4 KiB
        pages at 4 KiB alignment, as tinygrad's MemoryManager.palloc asks (baregpu: a 4 KiB granule)."""
        allocator = self.memory.TLSFAllocator(TLSF_BYTES)
        live = [allocator.alloc(4096 * (1 + i % 7), 0x1000) for i in range(TLSF_LIVE)]
        state = {"next": 0}

        def batch(n):
            next_slot = state["next"]
            for _ in range(n):
                slot = next_slot % TLSF_LIVE
                next_slot += 1
                allocator.free(live[slot])
                live[slot] = allocator.alloc(4096 * (1 + slot % 13), 0x1000)
            state["next"] = next_slot
        return time_per_iteration(batch, min_time)

    # --- Page tables --------------------------------------------------------------------------------------------

    def memory_manager(self, leaf_level):
        """tinygrad's AMMemoryManager with Navi31's page-table layout (as AMDev.init_sw creates it: 4 levels from
        PDB2, 48-bit VA, large BAR) over a stand-in device. Pages are no larger than `leaf_level` allows."""
        from tinygrad.runtime.support.am.amdev import AMDev, AMMemoryManager, AMPageTableEntry
        from tinygrad.runtime.support.am.ip import AM_GMC
        from tinygrad.runtime.autogen.am import am

        class PageTable(AMPageTableEntry):
            # AMPageTableEntry allows a page at every level (lv >= PDB2) and checks only the virtual address's
            # alignment, so given baregpu's 2 MiB-aligned physical address it would write one 1 GiB entry; this
            # limits the levels, like baregpu's PageTable(huge_pages) option. The same one comparison.
            def supports_huge_page(self, paddr):
                return self.lv >= leaf_level

        vram_bytes = 4 << 30
        mmio = self.hcq.MMIOInterface

        class PageTableDevice:
            """What MemoryManager/AMPageTableEntry read of an AMDev: `vram` (anonymous host memory, reserved but
            only touched where page tables are written), `gmc` (tinygrad's AM_GMC: its own PTE flag encoding;
            paddr_base 0, no XGMI hive; the 44-bit address mask AM_GMC.init_sw sets for GC 11), its IP versions,
            and AMDev's own paddr2xgmi/xgmi2paddr."""
            paddr2xgmi = AMDev.paddr2xgmi
            xgmi2paddr = AMDev.xgmi2paddr
            smi_dev = False
            devfmt = "compare"

            def __init__(self):
                self.backing = mmap.mmap(-1, vram_bytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
                self.vram = mmio(ctypes.addressof(ctypes.c_char.from_buffer(self.backing)), vram_bytes)
                self.ip_ver = {am.GC_HWIP: GC_VERSION}
                self.gmc = AM_GMC(self)
                self.gmc.paddr_base = 0
                self.gmc.address_space_mask = (1 << 44) - 1
                # The TLB flush after each map is two MMIO register sequences (HDP flush, invalidate request, ack
                # poll) on a real GPU. baregpu's benchmark times am::PageTable, which does not flush either
                # (am::MemoryManager does, outside that benchmark), so neither side's figure includes it.
                self.gmc.flush_tlb = lambda ip, vmid, flush_type=0: None
                self.is_booting = True  # the root table comes from boot memory, as in AMDev

        device = PageTableDevice()
        device.mm = AMMemoryManager(device, vram_bytes, boot_size=32 << 20, pt_t=PageTable, va_shifts=[12, 21, 30, 39],
                                    va_bits=48, first_lv=am.AMDGPU_VM_PDB2, va_base=AMMemoryManager.va_allocator.base,
                                    reserve_ptable=False, palloc_ranges=[])
        device.is_booting = False
        return device

    def map_unmap_ns(self, page_bytes, min_time):
        """ns per map_range + unmap_range of 1 GiB in pages of `page_bytes`, after checking (untimed) that
        tinygrad's mapping really has that many entries of that size."""
        from tinygrad.runtime.autogen.am import am
        from tinygrad.runtime.support.memory import AddrSpace, PageTableTraverseContext
        leaf_level, paddr = {4096: (am.AMDGPU_VM_PTB, MAP_PADDR_4KIB), 2 << 20: (am.AMDGPU_VM_PDB0, MAP_PADDR_2MIB)}[
            page_bytes]
        device = self.memory_manager(leaf_level)
        mm = device.mm
        va = mm.va_base + MAP_VA_OFFSET
        mm.map_range(va, GIB, [(paddr, GIB)], AddrSpace.PHYS)
        entries = {}
        for _, _, _, count, covers in PageTableTraverseContext(device, mm.root_page_table, va, inspect=True).next(GIB):
            entries[covers] = entries.get(covers, 0) + count
        mm.unmap_range(va, GIB)
        if entries != {page_bytes: GIB // page_bytes}:
            raise RuntimeError(f"tinygrad mapped 1 GiB as {entries} (page size: entries), not as "
                               f"{GIB // page_bytes} pages of {page_bytes} bytes")

        def batch(n):
            for _ in range(n):
                mm.map_range(va, GIB, [(paddr, GIB)], AddrSpace.PHYS)
                mm.unmap_range(va, GIB)
        return time_per_iteration(batch, min_time)

    # --- The RDNA3 emulator -------------------------------------------------------------------------------------

    def vector_add(self, elements, min_time):
        """(ns per dispatch, lane-instructions per dispatch) of tinygrad's RDNA3 emulator (test/mockgpu/amd/emu.py
        run_asm, called as its mock GPU calls it) running vector_add-O2.co over `elements` floats in host memory.
        The count is of the wave-instructions the emulator itself traces at DEBUG=5 (one line per instruction per
        wave, counted on one untimed dispatch of the same size) times the wave width, as baregpu counts them."""
        if elements not in self._vector_add:
            self._vector_add[elements] = self._prepare_vector_add(elements)
        dispatch, lane_instructions = self._vector_add[elements]

        def batch(n):
            for _ in range(n):
                dispatch()
        return time_per_iteration(batch, min_time, max_iterations=1 << 10), lane_instructions

    def _prepare_vector_add(self, elements):
        """dispatch() and its lane-instruction count, after a first dispatch (untimed: tinygrad compiles each
        instruction into a CPU kernel, cached for the process) whose result is checked."""
        if elements % 64:
            raise ValueError("elements must be whole workgroups of 64")
        from tinygrad.helpers import Context
        from test.mockgpu.amd import emu
        image, _, _ = self.code
        # The code image, with room after it for the emulator's 16-byte instruction fetch past the last one.
        code = HostMemory(len(image) + 4096)
        ctypes.memmove(code.address, bytes(image), len(image))
        entry = code.address + self.rodata + self.descriptor.kernel_code_entry_byte_offset
        a, b, c = (HostMemory(elements * 4) for _ in range(3))
        floats_a = (ctypes.c_float * elements).from_address(a.address)
        floats_b = (ctypes.c_float * elements).from_address(b.address)
        floats_c = (ctypes.c_float * elements).from_address(c.address)
        for i in range(elements):
            floats_a[i], floats_b[i] = float(i), 0.5 * i
        kernargs = HostMemory(256)
        (ctypes.c_uint64 * 3).from_address(kernargs.address)[:] = [a.address, b.address, c.address]
        ctypes.c_uint32.from_address(kernargs.address + 24).value = elements
        self._keep += [code, a, b, c, kernargs]
        wave_width = 32 if self.descriptor.kernel_code_properties & 0x400 else 64
        rsrc2, scratch = self.descriptor.compute_pgm_rsrc2, self.descriptor.private_segment_fixed_size

        def dispatch():
            emu.run_asm(entry, len(image), elements // 64, 1, 1, 64, 1, 1, kernargs.address, rsrc2, scratch, "rdna3",
                        None)

        dispatch()
        for i in range(0, elements, 4099):
            if floats_c[i] != 1.5 * i:
                raise RuntimeError(f"tinygrad's emulator computed c[{i}] = {floats_c[i]}, want {1.5 * i}")
        trace = io.StringIO()
        with contextlib.redirect_stdout(trace), Context(DEBUG=5):
            dispatch()
        wave_instructions = sum(1 for line in trace.getvalue().splitlines() if line.startswith("  exec gid="))
        return dispatch, wave_instructions * wave_width
