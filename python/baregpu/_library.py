"""Loads libbaregpu and declares its C API (hcq/hcq.h) from the generated ctypes declarations."""
import ctypes
import os

from . import _config
from . import _hcq


class LibraryError(ImportError):
    """libbaregpu cannot be loaded, or it is not the API this package was generated from."""


def _candidates():
    # BAREGPU_LIBRARY first (a path), then the library this package was built or installed with.
    if os.environ.get("BAREGPU_LIBRARY"):
        yield os.environ["BAREGPU_LIBRARY"]
    yield _config.LIBRARY


def load():
    errors = []
    for path in _candidates():
        try:
            # An absolute path: the library finds its virtual GPU and firmware by its own location.
            lib = ctypes.CDLL(os.path.abspath(path) if os.sep in path else path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        raise LibraryError("cannot load libbaregpu (" + "; ".join(errors) +
                           "); set BAREGPU_LIBRARY to the path of libbaregpu.so")
    for name, (restype, argtypes) in _hcq.FUNCTIONS.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise LibraryError(f"{lib._name} has no {name}: it is older than the hcq.h this package was built from "
                               f"(API {_hcq.HCQ_API_VERSION_MAJOR}.{_hcq.HCQ_API_VERSION_MINOR})") from None
        function.restype, function.argtypes = restype, argtypes
    version = lib.hcq_api_version()
    if version >> 16 != _hcq.HCQ_API_VERSION_MAJOR or (version & 0xffff) < _hcq.HCQ_API_VERSION_MINOR:
        raise LibraryError(f"{lib._name} implements HCQ API {version >> 16}.{version & 0xffff}, this package needs "
                           f"{_hcq.HCQ_API_VERSION_MAJOR}.{_hcq.HCQ_API_VERSION_MINOR} or a later minor")
    return lib


lib = load()
