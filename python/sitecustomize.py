"""The build tree's stand-in for the installed baregpu-tinygrad.pth (PYTHONPATH=BUILD/python): registers DEV=BAREGPU
with tinygrad, then runs the sitecustomize this one shadows (Debian's), if any."""
import os
import sys

import _baregpu_tinygrad  # noqa: F401

_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    if _entry and os.path.abspath(_entry) != _here:
        _path = os.path.join(_entry, "sitecustomize.py")
        if os.path.isfile(_path):
            import importlib.util  # only then: it costs ~8 ms of start-up (contextlib and friends)

            _spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize", _path)
            _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
            break
