"""Makes tinygrad's `tinygrad.runtime.ops_baregpu` import baregpu.tinygrad (DEV=BAREGPU) without importing tinygrad
or baregpu before tinygrad asks for it. Loaded at start-up by baregpu-tinygrad.pth (installed) or the build tree's
sitecustomize.py."""
import importlib
import importlib.machinery
import sys

RUNTIME = "tinygrad.runtime.ops_baregpu"


# Plain classes, not importlib.abc's: the import system needs only these methods, and importing importlib.abc costs
# every Python process that loads this file ~30 ms (it pulls in importlib.resources and typing on Python 3.11).
class _Loader:
    def create_module(self, spec):
        return importlib.import_module("baregpu.tinygrad")

    def exec_module(self, module):
        pass  # baregpu.tinygrad ran when create_module imported it


class _Finder:
    def find_spec(self, fullname, path=None, target=None):
        return importlib.machinery.ModuleSpec(fullname, _Loader()) if fullname == RUNTIME else None


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


install()
