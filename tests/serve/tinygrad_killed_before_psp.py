"""A tinygrad client whose process dies the moment its AM driver starts the PSP, after the memory controller and
the interrupt ring are up: a client killed mid-boot at a chosen point rather than after a time (run by
tinygrad_end_to_end.py). tinygrad itself is not changed; this process replaces AM_PSP.init_hw in its own copy.

Why not a kill from outside: a kill that lands while the PSP bootloader is part-way through its components leaves a
chip tinygrad's AM driver cannot boot again. It resets only when both the sOS and the SMU firmware run
(AMDev.__init__), and otherwise hands the bootloader its components again, which a bootloader left part-way refuses.
baregpu's own boot resets that chip through PCI (issue 23). A kill timed from outside lands in that window or not,
depending on the machine's load."""
import os
import signal

from tinygrad.runtime.support.am import ip


def die_at_the_psp(self):
  print("killed as the PSP starts", flush=True)
  os.kill(os.getpid(), signal.SIGKILL)


ip.AM_PSP.init_hw = die_at_the_psp

from tinygrad import Tensor  # noqa: E402 (after the replacement, before the device opens)

Tensor([1.0, 2.0]).numpy()
