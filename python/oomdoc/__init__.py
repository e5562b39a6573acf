"""oomdoc: find the out-of-memory failures in the logs of GPU jobs.

    >>> import oomdoc
    >>> r = oomdoc.diagnose("fixtures/sample/job.log")
    >>> r["summary"]["top_cause"]
    'fragmentation'

diagnose() returns the JSON report (schema oomdoc.report/2, described
under JSON REPORT in oomdoc(1)) as a dict; report() returns the text,
Markdown or JSON report as a string.  Both call the C library in this
process (ctypes, no subprocess), and load the rules as the command does:
the shipped rules, then each directory of OOMDOC_RULES (colon-separated),
then the rules given.  The oomdoc command is the C program shipped in the
wheel (the console script execs it); oomdoc.torch hooks PyTorch's
out-of-memory observer.
"""
from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from . import _lib

__all__ = [
    "diagnose", "report", "version", "shipped_rules_dir", "Error",
    "RulesError", "InputError",
]

Source = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
RulePaths = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

# Text is handed to the library in chunks of this size.
_CHUNK = 1 << 20


class Error(Exception):
    """An error of oomdoc; errors lists each message (FILE:LINE:COL: TEXT)."""

    def __init__(self, message: str, errors: Optional[List[str]] = None):
        super().__init__(message)
        self.errors: List[str] = list(errors or [message])


class RulesError(Error):
    """A rule file, a rules directory or a fact could not be loaded."""


class InputError(Error, OSError):
    """The log could not be opened or read to its end."""


def version() -> str:
    """The release of the library loaded ("0.1.0")."""
    v = _lib.dll().oomdoc_version()
    return v.decode() if v else ""


def shipped_rules_dir() -> Optional[str]:
    """The directory of the rules shipped with this package, if any."""
    return _lib.shipped_rules_dir()


def _rule_paths(rules: Optional[RulePaths]) -> List[str]:
    if rules is None:
        return []
    if isinstance(rules, (str, os.PathLike)):
        return [os.fsdecode(os.fspath(rules))]
    return [os.fsdecode(os.fspath(r)) for r in rules]


def _load_rules(lib: ctypes.CDLL, rules: Optional[RulePaths],
                default_rules: bool,
                facts: Optional[Mapping[str, Any]]) -> int:
    """A new oomdoc_rules handle (the caller frees it), or RulesError."""
    paths: List[str] = []
    if default_rules:
        shipped = _lib.shipped_rules_dir()
        if shipped is None:
            raise RulesError("cannot find the shipped rules beside %s "
                             "(default_rules=False loads none)"
                             % _lib.library_path())
        paths.append(shipped)
    env = os.environ.get("OOMDOC_RULES", "")
    paths += [d for d in env.split(":") if d]
    paths += _rule_paths(rules)
    h = lib.oomdoc_rules_new()
    if not h:
        raise MemoryError("oomdoc: out of memory")
    try:
        ok = True
        for p in paths:
            ok &= bool(lib.oomdoc_rules_load(h, os.fsencode(p)))
        errors = []
        err = _lib.Error()
        for i in range(lib.oomdoc_rules_error_count(h)):
            if lib.oomdoc_rules_error(h, i, ctypes.byref(err)):
                errors.append(err.text())
        dropped = lib.oomdoc_rules_errors_dropped(h)
        if dropped:
            errors.append("%d more errors" % dropped)
        for name, value in (facts or {}).items():
            nv = "%s=%s" % (name, value)
            if not lib.oomdoc_rules_fact(h, nv.encode(), ctypes.byref(err)):
                errors.append(err.text())
        if not ok or errors:
            raise RulesError("; ".join(errors) or "the rules did not load",
                             errors)
        return int(h)
    except BaseException:
        lib.oomdoc_rules_free(h)
        raise


def _is_path(source: str) -> bool:
    """Whether a str names a file (see diagnose for the rule)."""
    if "\n" in source or "\r" in source:
        return False
    # A string without a line break is a path when it names a file, or
    # when it has no space, as a mistyped path has and a message has not.
    return os.path.exists(source) or not any(c.isspace() for c in source)


def _scan(lib: ctypes.CDLL, sc: int, source: Source, name: Optional[str]) -> None:
    err = _lib.Error()
    if isinstance(source, os.PathLike) or (isinstance(source, str) and
                                           _is_path(source)):
        path = os.fsdecode(os.fspath(source))
        if not lib.oomdoc_scanner_scan_file(sc, os.fsencode(path),
                                            ctypes.byref(err)):
            raise InputError(err.text() or "cannot read %s" % path)
        return
    if isinstance(source, str):
        data = source.encode("utf-8", "surrogateescape")
    else:
        data = bytes(source)
    label = (name if name is not None else "(text)").encode("utf-8",
                                                          "surrogateescape")
    if not lib.oomdoc_scanner_begin(sc, label, ctypes.byref(err)):
        raise MemoryError(err.text() or "oomdoc: cannot start the input")
    ok = True
    for off in range(0, len(data), _CHUNK):
        piece = data[off:off + _CHUNK]
        ok &= bool(lib.oomdoc_scanner_feed(sc, piece, len(piece)))
    ok &= bool(lib.oomdoc_scanner_finish(sc))
    if not ok:
        raise MemoryError("oomdoc: out of memory while scanning the text")


def report(source: Source, *, format: str = "text",
           rules: Optional[RulePaths] = None, default_rules: bool = True,
           facts: Optional[Mapping[str, Any]] = None,
           name: Optional[str] = None) -> str:
    """The report of one log, as a string, in format "text" (as the
    command prints it, without colours), or in any other format of the
    command's --format: "markdown", "json", "jsonl", "github",
    "prometheus" or "html".

    The arguments are those of diagnose().
    """
    if format not in _lib.FORMATS:
        raise ValueError("format must be one of %s, not %r"
                         % (", ".join(sorted(_lib.FORMATS)), format))
    lib = _lib.dll()
    rh = _load_rules(lib, rules, default_rules, facts)
    err = _lib.Error()
    # The scanner reads the other stacks' messages with the recognisers of
    # the rules loaded (oomdoc_options.recognisers), as the command does;
    # without them it would read PyTorch's messages only.
    opts = _lib.Options()
    lib.oomdoc_options_init(ctypes.byref(opts))
    opts.recognisers = rh
    sc = lib.oomdoc_scanner_new(ctypes.byref(opts), ctypes.byref(err))
    if not sc:
        lib.oomdoc_rules_free(rh)
        raise MemoryError(err.text() or "oomdoc: out of memory")
    try:
        _scan(lib, sc, source, name)
        n = ctypes.c_size_t(0)
        text = lib.oomdoc_scanner_report_string(sc, rh,
                                                _lib.FORMATS[format], False,
                                                ctypes.byref(n))
        if not text:
            raise MemoryError("oomdoc: out of memory writing the report")
        try:
            return ctypes.string_at(text, n.value).decode("utf-8",
                                                          "surrogateescape")
        finally:
            lib.oomdoc_free(text)
    finally:
        lib.oomdoc_scanner_free(sc)
        lib.oomdoc_rules_free(rh)


def diagnose(source: Source, *, rules: Optional[RulePaths] = None,
             default_rules: bool = True,
             facts: Optional[Mapping[str, Any]] = None,
             name: Optional[str] = None) -> Dict[str, Any]:
    """Diagnoses one log and returns its JSON report (oomdoc.report/2) as
    a dict: "inputs", "events" (each with its figures, causes and fixes)
    and "summary" (events, events_omitted, top_cause, fingerprint).

    source is a log file (plain, gzip or zstd, told by its first bytes) or
    the log's text.  An os.PathLike is a path and bytes are text; a str is
    text when it has a line break, and otherwise a path when it names a
    file or has no white space (so that a mistyped path raises
    InputError, not an empty report), and text when it has white space
    (one message, such as str() of a torch.OutOfMemoryError).  name is
    the input's name in the report for text ("(text)" by default).

    rules: a rule file or directory, or a list of them, loaded after the
    shipped rules (default_rules=False leaves those out) and those of
    OOMDOC_RULES.  facts: facts the log lacks, {"batch_size": 32,
    "total": "80GiB"}, as the command's --fact.

    Raises InputError when the file cannot be opened or read to its end,
    and RulesError when a rule or a fact has an error.
    """
    doc: Dict[str, Any] = json.loads(report(source, format="json",
                                            rules=rules,
                                            default_rules=default_rules,
                                            facts=facts, name=name))
    return doc
