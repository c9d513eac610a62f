"""The address and length of any object with the buffer protocol, without copying it."""
import contextlib
import ctypes


class _PyBuffer(ctypes.Structure):
    # Py_buffer as CPython's Include/pybuffer.h lays it out (stable since Python 3.3).
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


# Include/pybuffer.h: PyBUF_SIMPLE asks for one contiguous block of bytes, PyBUF_WRITABLE for a writable one.
_PyBUF_SIMPLE = 0
_PyBUF_WRITABLE = 0x0001

_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
_release_buffer.restype = None


@contextlib.contextmanager
def exported(obj, writable=False):
    """Yields (address, nbytes) of obj's memory, held (not copied) for the duration of the block.

    TypeError when obj has no buffer protocol, is not contiguous, or is read-only and writable memory is needed
    (the exporter's own message says which)."""
    view = _PyBuffer()
    try:
        _get_buffer(obj, ctypes.byref(view), _PyBUF_WRITABLE if writable else _PyBUF_SIMPLE)
    except (BufferError, TypeError, ValueError) as e:
        need = "a writable, contiguous" if writable else "a contiguous"
        raise TypeError(f"{type(obj).__name__} object is not {need} buffer: {e}") from None
    try:
        yield view.buf or 0, view.len
    finally:
        _release_buffer(ctypes.byref(view))
