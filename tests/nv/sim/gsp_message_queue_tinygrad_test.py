#!/usr/bin/env python3
"""tinygrad's own, unmodified GSP message queues (tinygrad/runtime/support/nv/ip.py: NV_GSP.init_rm_args builds the
shared region, NVRpcQueue sends and receives) against the virtual GSP's (nv/sim/gsp_message_queue.h), which runs in
gsp_queue_peer over the same memory (a shared file).

tinygrad lays out the region and its page table in pages the test hands it at scattered bus addresses, prefills the
command queue with its real SET_SYSTEM_INFO and SET_REGISTRY RPCs before the virtual GSP starts, as it does before
GSP-RM boots; the virtual GSP then reads tinygrad's RM arguments, checks every command element (checksum, sequence,
element count, header) and reassembles a 150000-byte RPC from tinygrad's continuation records, and tinygrad reads
the virtual GSP's status elements: GSP_INIT_DONE, a CPU-sequencer event (tinygrad runs its register write), an
error-log event, and the replies its wait_resp waits for, through wrap-around of both queues. Every doorbell tinygrad
rings (NV_PGSP_QUEUE_HEAD) makes the virtual GSP read and answer. Part-way, baregpu's own driver end
(nv/gsp/message_queue.h, in a second gsp_queue_peer) sends the same RPCs into a region with the same page bus
addresses, and its page table, command-queue header and elements must equal tinygrad's byte for byte. Exits 77
(skip) without ../shared/vendor/tinygrad.

Usage: gsp_message_queue_tinygrad_test.py GSP_QUEUE_PEER
"""
import ctypes
import mmap
import os
import pathlib
import subprocess
import sys
import tempfile

SKIP = 77
SOURCE_ROOT = pathlib.Path(os.environ.get("BAREGPU_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[3]))
TINYGRAD = pathlib.Path(os.environ.get("BAREGPU_TINYGRAD", SOURCE_ROOT.parent / "shared/vendor/tinygrad"))
PAGE = 0x1000
PAGES = 0x100  # of system memory for tinygrad's boot allocations
BUS_BASE = 0x7_0000_0000
ELEMENTS = 63  # (0x40000 - 0x1000) / 0x1000 per queue
RPCS = 60  # 24000-byte RPCs: 360 command elements, 60 status elements
ECHO = 1024  # gsp_queue_peer replies with the first 1024 bytes of a command's parameters


class Peer:
    """gsp_queue_peer over pipes: one request line, answers until "ok"; any "error" line fails the test."""

    def __init__(self, binary, path):
        self.proc = subprocess.Popen([binary, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.commands = []

    def request(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        while True:
            answer = self.proc.stdout.readline()
            if not answer:
                raise RuntimeError(f"gsp_queue_peer exited after {line[:60]!r}")
            answer = answer.rstrip("\n")
            if answer == "ok":
                return
            if answer.startswith("error "):
                raise RuntimeError(f"virtual GSP: {answer[6:]} (after {line[:60]!r})")
            verb, function, sequence, records, first, payload = (answer.split(" ") + [""])[:6]
            assert verb == "command", answer
            self.commands.append((int(function, 16), int(sequence, 16), int(records, 16), int(first, 16),
                                  bytes.fromhex(payload)))

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def pattern(size, seed):
    x, out = seed * 2654435761 + 1, bytearray(size)
    for i in range(size):
        x = (x * 1103515245 + 12345) & 0xffffffff
        out[i] = (x >> 16) & 0xff
    return bytes(out)


def main():
    if not (TINYGRAD / "tinygrad/runtime/support/nv/ip.py").is_file():
        print(f"skip: tinygrad is not at {TINYGRAD}")
        return SKIP
    sys.path.insert(0, str(TINYGRAD))
    try:
        from tinygrad.runtime.autogen import nv
        from tinygrad.runtime.autogen import nv_570 as nv_gpu
        from tinygrad.runtime.support.hcq import MMIOInterface
        from tinygrad.runtime.support.nv.ip import NV_GSP, NVRpcQueue
    except ImportError as e:
        print(f"skip: cannot import tinygrad's NV driver: {e}")
        return SKIP

    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: {got!r}, expected {want!r}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sysmem")
        with open(path, "wb") as f:
            f.truncate(PAGES * PAGE)
        fd = os.open(path, os.O_RDWR)
        mem = mmap.mmap(fd, PAGES * PAGE, mmap.MAP_SHARED)
        base = ctypes.addressof(ctypes.c_char.from_buffer(mem))
        peer = Peer(sys.argv[1], path)

        class QueueHead:
            def write(self, value):
                check("doorbell value", value, 0)
                peer.request("doorbell")

        class Pci:
            def bar_info(self, bar):
                return (0xf000_0000 + bar * 0x1000_0000, 0x100_0000)

            def read_config(self, offset, size):
                return {0: 0x268410de, 0x2c: 0x16f310de, 8: 0xa1}[offset]

        class Device:
            """What NV_GSP's queue code asks of tinygrad's NVDev: system-memory pages, the doorbell register."""
            devfmt, fmc_boot, is_err_state, pci_dev = "0000:01:00.0", False, False, Pci()
            NV_PGSP_QUEUE_HEAD = [QueueHead()]

            def __init__(self):
                self.next_page, self.pages, self.writes = 0, [], []

            def _alloc_boot_mem(self, size, data=None, contiguous=False, sysmem=None):
                # Pages in file order, bus addresses descending with gaps: only the page table says which is where.
                n = (size + PAGE - 1) // PAGE
                first, self.next_page = self.next_page, self.next_page + n
                bus = [BUS_BASE + (PAGES - 1 - p) * 2 * PAGE for p in range(first, first + n)]
                self.pages += [(b, p * PAGE) for b, p in zip(bus, range(first, first + n))]
                view = MMIOInterface(base + first * PAGE, n * PAGE)
                if data is not None:
                    view[:size] = data
                return view, None, bus

            def wreg(self, addr, value):
                self.writes.append((addr, value))

        dev = Device()
        gsp = NV_GSP(dev)
        gsp.init_rm_args()
        for bus, offset in dev.pages:
            peer.request(f"map {bus:x} {offset:x}")

        sent = []
        tinygrad_send = gsp.cmd_q.send_rpc

        def record_send(func, msg):  # what tinygrad sends, to compare with what the virtual GSP read
            sent.append((func, bytes(msg)))
            tinygrad_send(func, msg)

        gsp.cmd_q.send_rpc = record_send
        # Prefilled before GSP-RM runs (NV_GSP.init_sw): the virtual GSP is not started, the doorbells find nothing.
        gsp.rpc_set_gsp_system_info()
        gsp.rpc_set_registry_table()
        peer.request(f"start {gsp.rm_args_sysmem:x}")
        peer.request("event 1001 " + pattern(64, 1).hex())  # GSP_INIT_DONE
        # NV_GSP.init_hw's three queue lines.
        gsp.stat_q = NVRpcQueue(gsp, gsp.stat_q_view, gsp.cmd_q_view)
        gsp.cmd_q.rx_view = gsp.stat_q_view.view(gsp.stat_q.tx.rxHdrOff, fmt='I')
        init_done = gsp.stat_q.wait_resp(nv.NV_VGPU_MSG_EVENT_GSP_INIT_DONE)
        check("GSP_INIT_DONE parameters", init_done[:64], pattern(64, 1))
        peer.request("doorbell")  # the prefilled commands
        check("prefilled commands", [(c[0], c[4]) for c in peer.commands], sent)
        check("prefilled records", [c[2] for c in peer.commands], [1, 1])

        # A control RPC through tinygrad's own rpc_rm_control, after a CPU-sequencer event it must run first:
        # rpc_run_cpu_sequencer_v17_00 (bufferSizeDWord, cmdIndex 3, regSaveArea[8]), then opcode 0 (register write)
        # 0x110804 <- 0xcafe.
        sequencer = (3).to_bytes(4, "little") * 2 + bytes(32) + b"".join(
            v.to_bytes(4, "little") for v in (0, 0x110804, 0xcafe))
        peer.request("event 1002 " + sequencer.hex())
        gsp.priv_root = 0xc1e00004  # what NV_GSP.init_hw sets before its first control
        params = nv_gpu.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS(index=0, flags=2, length=7)
        reply = gsp.rpc_rm_control(0xcf000001, nv_gpu.NV2080_CTRL_CMD_GPU_GET_GID_INFO, params)
        check("sequencer register writes", dev.writes, [(0x110804, 0xcafe)])
        check("control reply", (reply.flags, reply.length), (2, 7))
        check("control command", peer.commands[-1][4], sent[-1][1])

        # 150000 bytes of GSP_RM_CONTROL: tinygrad's send_rpc cuts 65456 + 65456 + 19088; the virtual GSP's sizer
        # reads paramsSize from rpc_gsp_rm_control_v03_00 (24 bytes) and joins the records.
        big = bytearray(pattern(150000, 2))
        big[:24] = bytes(nv.rpc_gsp_rm_control_v(hClient=1, hObject=2, cmd=3, paramsSize=150000 - 24))
        gsp.cmd_q.send_rpc(nv.NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, bytes(big))
        check("large RPC records", peer.commands[-1][2], 3)
        check("large RPC reassembled", peer.commands[-1][4] == bytes(big), True)
        check("large RPC reply", gsp.stat_q.wait_resp(nv.NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL)[:ECHO], bytes(big[:ECHO]))

        # 24000-byte RPCs take 6 elements each (48 + 32 + 24000 bytes): enough of them wrap the command queue, some
        # straddling its end; each reply takes one status element, so the status queue wraps too.
        def compare_with_our_driver(records):
            # The same RPCs through baregpu's driver (nv/gsp/message_queue.h), in another file, with the same page
            # bus addresses: the page table, the command queue's header and every element must be tinygrad's, byte
            # for byte (58 elements so far, so nothing was overwritten).
            path2 = os.path.join(tmp, "driver")
            with open(path2, "wb") as f:
                f.truncate(0x81 * PAGE)
            driver = Peer(sys.argv[1], path2)
            driver.request("driver 0 " + " ".join(f"{b:x}" for b, _ in dev.pages[:0x81]))
            for func, msg in records:
                driver.request(f"send {func:x} {msg.hex()}")
            driver.close()
            ours, theirs = open(path2, "rb").read(), bytes(mem[:0x81 * PAGE])
            check("page table like tinygrad's", ours[:PAGE] == theirs[:PAGE], True)
            check("command queue header like tinygrad's", ours[PAGE:PAGE + 32], theirs[PAGE:PAGE + 32])
            for e in range(ELEMENTS):
                at = 2 * PAGE + e * PAGE
                if ours[at:at + PAGE] != theirs[at:at + PAGE]:
                    failures.append(f"command element {e} differs from tinygrad's")

        straddled = False
        for i in range(RPCS):
            payload = pattern(24000, 10 + i)
            gsp.cmd_q.send_rpc(nv.NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, payload)
            function, _, records, first, got = peer.commands[-1]
            straddled |= first + 6 > ELEMENTS
            check(f"RPC {i} read back", (function, records, got == payload),
                  (nv.NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, 1, True))
            if i == 2:
                compare_with_our_driver(sent)
            if i == 20:  # an error-log event between a command and its reply: tinygrad prints it, marks an error
                log = bytes(12) + b"virtual GSP says hello".ljust(256, b"\0")
                peer.request("event 1006 " + log.hex())
            check(f"RPC {i} reply", gsp.stat_q.wait_resp(nv.NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY)[:ECHO], payload[:ECHO])
        check("a command straddled the queue's end", straddled, True)
        check("error-log event seen", dev.is_err_state, True)
        status_write = gsp.stat_q.tx_view[4]  # msgqTxHeader.writePtr
        replies = 2 + 1 + 1 + RPCS + 3  # prefilled, control, large, the loop's, and 3 events: more than 63
        check("the status queue wrapped", replies > ELEMENTS, True)
        check("status queue writePtr after wrapping", status_write, replies % ELEMENTS)
        peer.close()
        os.close(fd)  # the mapping stays until the process ends: tinygrad's views point into it

    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"ok: {len(peer.commands)} commands read by the virtual GSP, {replies} status messages read by tinygrad")
    return 0


if __name__ == "__main__":
    sys.exit(main())
