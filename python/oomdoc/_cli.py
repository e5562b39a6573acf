"""The oomdoc command of the wheel: execs the C program shipped in it.

The program finds its rules from its own location (/proc/self/exe, then
../share/oomdoc/rules), which the wheel's layout gives, so it needs
nothing from this launcher but its arguments.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional

from . import _lib


def main(argv: Optional[List[str]] = None) -> int:
    """Replaces this process with the oomdoc program; returns only when
    the program cannot be run (status 2, as a usage error)."""
    args = sys.argv[1:] if argv is None else argv
    path = _lib.command_path()
    try:
        os.execv(path, ["oomdoc"] + list(args))
    except OSError as e:
        sys.stderr.write("oomdoc: cannot run %s: %s (is the package installed "
                         "from a wheel?)\n" % (path, e.strerror or e))
    return 2
