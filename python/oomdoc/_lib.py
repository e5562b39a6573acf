"""The C library, liboomdoc.so.0, through ctypes.

The wheel puts the library, the command and the shipped rules inside this
package, in the layout CMake installs (lib/liboomdoc.so.0, bin/oomdoc,
share/oomdoc/rules), so each is found from this file's directory.  Outside
a wheel (a build tree, a system install), OOMDOC_LIBRARY names the library
and the rules are looked for beside it, as CMake lays them out in the
build tree (share/oomdoc/rules beside the library) and in an installed
prefix (../share/oomdoc/rules from lib/).

Every declaration below is one of include/oomdoc/oomdoc.h; the argument
and result types are set for each function used, so that ctypes never
guesses an int for a pointer.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))

# The report formats of oomdoc_report_format, in the header's order.
# oomdoc_report_format of oomdoc.h: the command's --format names.
FORMATS = {"text": 0, "json": 1, "markdown": 2, "jsonl": 3, "github": 4,
           "prometheus": 5, "html": 6}


class Error(ctypes.Structure):
    """struct oomdoc_error."""

    _fields_ = [
        ("file", ctypes.c_char * 256),
        ("line", ctypes.c_uint64),
        ("col", ctypes.c_uint64),
        ("message", ctypes.c_char * 256),
    ]

    def text(self) -> str:
        """The error as the command prints it: FILE:LINE:COL: MESSAGE."""
        msg = self.message.decode("utf-8", "replace")
        name = self.file.decode("utf-8", "replace")
        if not name:
            return str(msg)
        if self.line == 0:
            return "%s: %s" % (name, msg)
        return "%s:%d:%d: %s" % (name, self.line, self.col, msg)


class Options(ctypes.Structure):
    """struct oomdoc_options (filled by oomdoc_options_init)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("jit", ctypes.c_bool),
        ("max_events", ctypes.c_size_t),
        ("recognisers", ctypes.c_void_p),
    ]


def library_path() -> str:
    """The path of liboomdoc.so.0 this package loads."""
    env = os.environ.get("OOMDOC_LIBRARY")
    if env:
        return env
    return os.path.join(_HERE, "lib", "liboomdoc.so.0")


def shipped_rules_dir() -> Optional[str]:
    """The shipped rules directory, or None when there is none."""
    lib_dir = os.path.dirname(os.path.abspath(library_path()))
    for d in (os.path.join(_HERE, "share", "oomdoc", "rules"),
              os.path.join(lib_dir, "share", "oomdoc", "rules"),
              os.path.join(lib_dir, os.pardir, "share", "oomdoc", "rules")):
        if os.path.isdir(d):
            return os.path.normpath(d)
    return None


def command_path() -> str:
    """The path of the oomdoc program shipped in the wheel."""
    return os.path.join(_HERE, "bin", "oomdoc")


_lock = threading.Lock()
_dll: Optional[ctypes.CDLL] = None


def _declare(dll: ctypes.CDLL) -> None:
    p, b, sz, i = ctypes.c_void_p, ctypes.c_bool, ctypes.c_size_t, ctypes.c_int
    s = ctypes.c_char_p
    err = ctypes.POINTER(Error)
    table = {
        "oomdoc_version": (s, []),
        "oomdoc_api_version": (i, []),
        "oomdoc_options_init": (None, [p]),
        "oomdoc_scanner_new": (p, [p, err]),
        "oomdoc_scanner_free": (None, [p]),
        "oomdoc_scanner_begin": (b, [p, s, err]),
        "oomdoc_scanner_feed": (b, [p, p, sz]),
        "oomdoc_scanner_finish": (b, [p]),
        "oomdoc_scanner_scan_file": (b, [p, s, err]),
        "oomdoc_scanner_report_string": (p, [p, p, i, b, ctypes.POINTER(sz)]),
        "oomdoc_free": (None, [p]),
        "oomdoc_rules_new": (p, []),
        "oomdoc_rules_free": (None, [p]),
        "oomdoc_rules_load": (b, [p, s]),
        "oomdoc_rules_error_count": (i, [p]),
        "oomdoc_rules_error": (b, [p, i, err]),
        "oomdoc_rules_errors_dropped": (i, [p]),
        "oomdoc_rules_fact": (b, [p, s, err]),
    }
    for name, (res, args) in table.items():
        fn = getattr(dll, name)
        fn.restype = res
        fn.argtypes = args


def dll() -> ctypes.CDLL:
    """The loaded library (loaded once, on first use)."""
    global _dll
    with _lock:
        if _dll is None:
            path = library_path()
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise ImportError(
                    "oomdoc: cannot load the library %s (%s): install the "
                    "package with pip, or set OOMDOC_LIBRARY to a "
                    "liboomdoc.so.0 built with -DOOMDOC_SHARED=ON" % (path, e)
                ) from e
            _declare(lib)
            _dll = lib
        return _dll
