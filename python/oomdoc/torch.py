"""oomdoc.torch: a diagnosis from inside a PyTorch process, at the moment
its CUDA caching allocator runs out of memory.

    import oomdoc.torch
    oomdoc.torch.attach(record_history=True)

attach() registers an out-of-memory observer with PyTorch
(torch._C._cuda_attach_out_of_memory_observer, as PyTorch's "Understanding
CUDA Memory Usage" page, torch_cuda_memory.html, shows).  The allocator
calls it when an allocation fails, after it has freed what it could and
before it raises torch.OutOfMemoryError (c10/cuda/CUDACachingAllocator.cpp,
DeviceCachingAllocator::malloc), with four numbers: the device, the
request in bytes, the device's total memory (or, under
torch.cuda.set_per_process_memory_fraction, the bytes the process is
allowed), and the free bytes that cudaMemGetInfo gave.  The observer then

  1. writes the allocator's snapshot (torch.cuda.memory._dump_snapshot,
     or pickle.dump of torch.cuda.memory._snapshot() on PyTorch 2.0, which
     has no _dump_snapshot: a pickle that https://pytorch.org/memory_viz
     reads; it holds the allocation history when
     attach(record_history=True) started it) and
     torch.cuda.memory_stats(device) as JSON, beside the log, when this
     process has a CUDA allocator to dump (else it says why not);
  2. writes the message PyTorch is about to raise, from those numbers and
     the allocator's statistics, in PyTorch 2.2's words and rounding
     (format_size of that file), after the context a log would show
     before it (the allocator settings of the environment, the GPU's
     name, the Python stack of the failing allocation), and diagnoses it
     with oomdoc (the allowed bytes, when a fraction is set, given as the
     fact "allowed");
  3. prints oomdoc's report on stderr (or the stream given), and returns:
     the exception then propagates as it would have.

"Beside the log" is, in this order: attach(dump_dir=...), the directory
named by OOMDOC_DUMP_DIR, the directory of the file that standard error
(else standard output) is redirected to, the current directory.  The
files are oomdoc-oom-HOST-PID-N.pickle and oomdoc-oom-HOST-PID-N.stats.json.

Nothing here runs on a failure that is not the caching allocator's: a
cudaMalloc failure inside a library (cuBLAS, NCCL) or a host OOM kill
reaches no observer; diagnose the log for those.
"""
from __future__ import annotations

import importlib
import json
import os
import socket
import stat
import sys
import threading
import traceback
from typing import Any, Dict, List, Optional, TextIO, Tuple

from . import RulePaths, diagnose, report

__all__ = ["attach", "detach", "Attachment", "format_size", "oom_message",
           "history_api"]


def format_size(size: int) -> str:
    """A size as PyTorch's allocator prints it (format_size of
    c10/cuda/CUDACachingAllocator.cpp): bytes up to 1024, then KiB, MiB
    and GiB with two decimals."""
    if size <= 1024:
        return "%d bytes" % size
    if size <= 1048576:
        return "%.2f KiB" % (size / 1024.0)
    if size <= 1073741824:
        return "%.2f MiB" % (size / 1048576.0)
    return "%.2f GiB" % (size / 1073741824.0)


def oom_message(device: int, requested: int, total: int, free: int,
                allocated: Optional[int], reserved: Optional[int]) -> str:
    """The message of torch.OutOfMemoryError (str() of the exception) as
    PyTorch 2.x words it
    (DeviceCachingAllocator::malloc), without the clause on the process's
    memory in use, which PyTorch reads from NVML and the observer is not
    given.  allocated and reserved are the allocator's statistics; when
    they are unknown (None: torch.cuda.memory_stats gave nothing) the
    sentence that states them is left out rather than printed with
    zeros."""
    head = ("CUDA out of memory. Tried to allocate "
            "%s. GPU %d has a total capacity of %s of which %s is free. "
            % (format_size(requested), device, format_size(total),
               format_size(free)))
    held = ""
    if allocated is not None and reserved is not None:
        held = ("Of the allocated memory %s is allocated by PyTorch, and %s "
                "is reserved by PyTorch but unallocated. "
                % (format_size(allocated),
                   format_size(max(reserved - allocated, 0))))
    return (head + held +
            "If reserved but "
            "unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
            "fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def history_api(torch: Any) -> str:
    """Which torch.cuda.memory._record_memory_history this PyTorch has:
    "2.1" for the one of PyTorch 2.1 and later (torch/cuda/memory.py of
    v2.1.0: enabled="all"|"state"|None, context, stacks, max_entries; a
    bool enabled is handed to _record_memory_history_legacy, which that
    release added), "2.0" for the one of PyTorch 2.0 (torch/cuda/memory.py
    of v2.0.1: enabled a bool, record_context, trace_alloc_max_entries,
    trace_alloc_record_context, device, record_context_cpp), "" when it
    has none."""
    mem = getattr(getattr(torch, "cuda", None), "memory", None)
    if getattr(mem, "_record_memory_history", None) is None:
        return ""
    return "2.1" if hasattr(mem, "_record_memory_history_legacy") else "2.0"


def _history_call(api: str, start: bool,
                  max_entries: int) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The arguments of _record_memory_history that start (keeping the
    last max_entries events, with their Python stacks) or stop the
    history, in the API history_api() named."""
    if api == "2.1":
        if start:
            return (), {"enabled": "all", "max_entries": max_entries}
        return (), {"enabled": None}
    if start:
        return (True,), {"trace_alloc_max_entries": max_entries,
                         "trace_alloc_record_context": True}
    return (False,), {}


def _dump_snapshot(torch: Any, path: str) -> None:
    """Writes the allocator's snapshot to path as PyTorch's own
    torch.cuda.memory._dump_snapshot does from 2.1 on (pickle.dump of
    _snapshot(), torch/cuda/memory.py of v2.1.0); PyTorch 2.0 has
    _snapshot but no _dump_snapshot (torch/cuda/memory.py of v2.0.1)."""
    mem = torch.cuda.memory
    dump = getattr(mem, "_dump_snapshot", None)
    if dump is not None:
        dump(path)
        return
    import pickle
    snap = mem._snapshot()
    with open(path, "wb") as f:
        pickle.dump(snap, f)


def _cuda_state(torch: Any) -> Optional[str]:
    """None when this process's CUDA allocator has state to dump (CUDA is
    available and initialised), else why not, in words."""
    cuda = torch.cuda
    try:
        if not cuda.is_available():
            return ("CUDA is not available to this process "
                    "(torch.cuda.is_available() is False)")
        init = getattr(cuda, "is_initialized", None)
        if init is not None and not init():
            return ("CUDA is not initialised in this process "
                    "(torch.cuda.is_initialized() is False): the allocator "
                    "holds nothing")
    except Exception as e:
        return "torch.cuda cannot say whether CUDA is available: %s" % e
    return None


def _redirected_dir(fd: int) -> Optional[str]:
    """The directory of the regular file that fd writes to, if it does."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        path = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return None
    if not path.startswith("/") or path.endswith(" (deleted)"):
        return None
    return os.path.dirname(path)


def _dump_dir(explicit: Optional[str]) -> str:
    if explicit:
        return explicit
    env = os.environ.get("OOMDOC_DUMP_DIR")
    if env:
        return env
    for fd in (2, 1):
        d = _redirected_dir(fd)
        if d is not None:
            return d
    return os.getcwd()


# The allocator settings PyTorch reads (c10/core/AllocatorConfig.cpp and
# c10/cuda/CUDAAllocatorConfig.cpp of PyTorch 2.x).
_ALLOC_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
               "PYTORCH_HIP_ALLOC_CONF")


def _context_lines(torch: Any, device: int) -> List[str]:
    """The lines a log shows before the message and that oomdoc reads for
    context, with this process's values: the allocator settings of its
    environment, the GPU's name (torch.cuda.get_device_name), and the
    Python stack of the allocation that failed, which is the traceback
    the exception will print (without this module's frames)."""
    lines = ["%s=%s\n" % (v, os.environ[v]) for v in _ALLOC_VARS
             if os.environ.get(v)]
    try:
        lines.append("GPU %d: %s\n" % (device,
                                        torch.cuda.get_device_name(device)))
    except Exception:
        pass
    here = os.path.abspath(__file__)
    frames = [f for f in traceback.extract_stack()
              if os.path.abspath(f.filename) != here]
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines += traceback.format_list(frames)
    return lines


class Attachment:
    """The observer attach() registered, and what it did at each failure.

    failures holds one dict per failure seen: device, requested_bytes,
    total_bytes, free_bytes, allowed_bytes (None without a fraction),
    allocated_bytes, reserved_bytes, message, snapshot and memory_stats
    (the paths written, None where writing failed), report (oomdoc's JSON
    report as a dict) and errors (what failed, as text).
    """

    def __init__(self, torch: Any, *, record_history: bool,
                 max_entries: int, max_reports: int, dump_dir: Optional[str],
                 stream: Optional[TextIO], rules: Optional[RulePaths],
                 default_rules: bool, facts: Optional[Dict[str, Any]]):
        self._torch = torch
        self.record_history = record_history
        self.max_entries = max_entries
        self.max_reports = max_reports
        self.seen = 0
        self.dump_dir = dump_dir
        self.stream = stream
        self.rules = rules
        self.default_rules = default_rules
        self.facts = dict(facts or {})
        self.failures: List[Dict[str, Any]] = []
        self.active = True
        # The API of _record_memory_history (history_api()), and why the
        # history is not recorded when attach() was asked to and PyTorch
        # refused (None otherwise).
        self.history_api = history_api(torch)
        self.history_error: Optional[str] = None
        # The function that registered this observer.
        self.registered_with: Any = None
        self._lock = threading.Lock()

    def detach(self) -> None:
        """Stops acting on failures (PyTorch has no way to remove an
        observer: it stays registered and does nothing), and stops the
        memory history when attach() started it."""
        self.active = False
        if self.record_history:
            args, kw = _history_call(self.history_api, False, 0)
            self._torch.cuda.memory._record_memory_history(*args, **kw)
            self.record_history = False

    # The observer itself: never raises, since an exception here would
    # replace the out-of-memory error PyTorch is about to raise.
    def __call__(self, device: int, alloc: int, device_total: int,
                 device_free: int) -> None:
        if not self.active:
            return
        try:
            with self._lock:
                self._observe(int(device), int(alloc), int(device_total),
                              int(device_free))
        except BaseException as e:  # noqa: B902 - see above
            try:
                (self.stream or sys.stderr).write(
                    "oomdoc.torch: the out-of-memory observer failed: %s\n"
                    % (e,))
            except BaseException:
                pass

    def _observe(self, device: int, alloc: int, device_total: int,
                 device_free: int) -> None:
        torch = self._torch
        errors: List[str] = []
        self.seen += 1
        n = self.seen
        if n > self.max_reports:
            # A program that catches its failures (cuDNN's algorithm search
            # does, retrying with less workspace) can fail many times:
            # one line for the first beyond the cap, then nothing.
            if n == self.max_reports + 1:
                out = self.stream or sys.stderr
                out.write("oomdoc.torch: more CUDA out-of-memory failures "
                          "on GPU %d, not reported (max_reports=%d)\n"
                          % (device, self.max_reports))
                out.flush()
            return
        where = _dump_dir(self.dump_dir)
        base = os.path.join(where, "oomdoc-oom-%s-%d-%d"
                            % (socket.gethostname(), os.getpid(), n))
        stats: Dict[str, Any] = {}
        stats_path: Optional[str] = None
        snap_path: Optional[str] = None
        # Without a CUDA allocator in this process (the observer called by
        # hand, or torch.cuda unavailable) there is nothing to dump:
        # memory_stats() would give {} and the snapshot no segments, which
        # must not pass for the allocator's state.
        why = _cuda_state(torch)
        if why is not None:
            errors.append("memory_stats: not written: %s" % why)
            errors.append("snapshot: not written: %s" % why)
        else:
            try:
                stats = dict(torch.cuda.memory_stats(device))
                with open(base + ".stats.json", "w") as f:
                    json.dump(stats, f, indent=1, sort_keys=True,
                              default=str)
                stats_path = base + ".stats.json"
            except Exception as e:
                errors.append("memory_stats: %s" % e)
            try:
                _dump_snapshot(torch, base + ".pickle")
                snap_path = base + ".pickle"
            except Exception as e:
                errors.append("snapshot: %s" % e)
        # The device's capacity: the third number is the allowed bytes
        # instead when a memory fraction is set.  The allocator's total
        # comes from cudaMemGetInfo, as torch.cuda.mem_get_info's does
        # (the device properties' total_memory is cudaDeviceProp's, which
        # need not be the same number).
        total = device_total
        try:
            total = int(torch.cuda.mem_get_info(device)[1])
        except Exception as e:
            errors.append("mem_get_info: %s" % e)
        allowed = device_total if device_total < total else None
        # The allocator's figures, None when memory_stats gave none.
        allocated: Optional[int] = None
        reserved: Optional[int] = None
        if "allocated_bytes.all.current" in stats and \
                "reserved_bytes.all.current" in stats:
            allocated = int(stats["allocated_bytes.all.current"])
            reserved = int(stats["reserved_bytes.all.current"])
        message = oom_message(device, alloc, total, device_free, allocated,
                              reserved)
        facts = dict(self.facts)
        if allowed is not None:
            facts.setdefault("allowed", allowed)
        name = "PyTorch out-of-memory observer, GPU %d" % device
        # The context a log would show before the message, as this
        # process knows it, then the message as the traceback's last line
        # will show it.
        text = "".join(_context_lines(torch, device)) + \
            "torch.OutOfMemoryError: " + message + "\n"
        rep = diagnose(text, rules=self.rules,
                       default_rules=self.default_rules, facts=facts,
                       name=name)
        printed = report(text, format="text", rules=self.rules,
                         default_rules=self.default_rules, facts=facts,
                         name=name)
        out = self.stream or sys.stderr
        out.write("oomdoc.torch: CUDA out of memory on GPU %d (the caching "
                  "allocator is raising torch.OutOfMemoryError, which the "
                  "program may still catch); allocator snapshot: %s; "
                  "memory_stats: %s\n"
                  % (device, snap_path or "not written",
                     stats_path or "not written"))
        for what in errors:
            out.write("oomdoc.torch: %s\n" % what)
        out.write(printed)
        out.flush()
        self.failures.append({
            "device": device, "requested_bytes": alloc,
            "total_bytes": total, "free_bytes": device_free,
            "allowed_bytes": allowed, "allocated_bytes": allocated,
            "reserved_bytes": reserved, "message": message,
            "snapshot": snap_path, "memory_stats": stats_path,
            "report": rep, "errors": errors,
        })


_current: Optional[Attachment] = None


def attach(*, record_history: bool = False, max_entries: int = 100000,
           max_reports: int = 5, dump_dir: Optional[str] = None, stream: Optional[TextIO] = None,
           rules: Optional[RulePaths] = None, default_rules: bool = True,
           facts: Optional[Dict[str, Any]] = None) -> Attachment:
    """Registers oomdoc's out-of-memory observer with PyTorch and returns
    it.  record_history starts torch.cuda.memory._record_memory_history
    (keeping the last max_entries allocation events, with their stacks),
    which makes the snapshot show what allocated the memory; it costs
    some speed at every allocation.  The allocator calls the observer at
    every failure, also those the program catches and retries (cuDNN's
    algorithm search): the first max_reports are dumped and reported, the
    one after them gets one line, the rest nothing.  rules, default_rules and facts are
    those of oomdoc.diagnose; stream receives the report (sys.stderr by
    default).  Called again while attached, it returns the attachment in
    place.  Raises RuntimeError when this PyTorch has no CUDA support (a
    CPU-only build has no out-of-memory observer) or when PyTorch cannot
    register the observer (CUDA cannot start: no driver, no GPU), with
    PyTorch's reason.  When the history cannot be recorded (PyTorch
    refuses), the observer is registered all the same, one line says why
    on stream, and the attachment's history_error holds the reason.
    Both APIs of _record_memory_history are used as upstream defines them
    (history_api())."""
    global _current
    # The real PyTorch (this module is oomdoc.torch).
    torch = importlib.import_module("torch")

    if _current is not None and _current.active:
        return _current
    hook = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if hook is None:
        raise RuntimeError("oomdoc.torch: this PyTorch (%s) is built without "
                           "CUDA: it has no out-of-memory observer"
                           % getattr(torch, "__version__", "?"))
    att = Attachment(torch, record_history=record_history,
                     max_entries=max_entries, max_reports=max_reports,
                     dump_dir=dump_dir,
                     stream=stream, rules=rules, default_rules=default_rules,
                     facts=facts)
    # Registering starts CUDA (PyTorch 2.0.1 initialises the allocator of
    # every device first), so it fails where CUDA cannot start, with
    # PyTorch's reason ("CUDA driver version is insufficient for CUDA
    # runtime version" without a driver, "No CUDA GPUs are available"
    # with CUDA_VISIBLE_DEVICES empty).
    try:
        hook(att)
    except Exception as e:
        raise RuntimeError("oomdoc.torch: PyTorch %s could not register the "
                           "out-of-memory observer: %s: %s"
                           % (getattr(torch, "__version__", "?"),
                              type(e).__name__, e)) from e
    att.registered_with = hook
    if record_history:
        if not att.history_api:
            att.history_error = ("this PyTorch (%s) has no "
                                 "torch.cuda.memory._record_memory_history"
                                 % getattr(torch, "__version__", "?"))
        else:
            args, kw = _history_call(att.history_api, True, max_entries)
            try:
                torch.cuda.memory._record_memory_history(*args, **kw)
            except TypeError:
                # A signature this module does not know is a bug here,
                # not a state of the machine: let it be seen.
                raise
            except Exception as e:
                # PyTorch refuses when CUDA cannot start (no driver, no
                # GPU); the observer is registered all the same.
                att.history_error = "%s: %s" % (type(e).__name__, e)
        if att.history_error is not None:
            att.record_history = False
            (stream or sys.stderr).write(
                "oomdoc.torch: the memory history is not recorded: %s\n"
                % att.history_error)
    _current = att
    return att


def detach() -> None:
    """Detaches the observer attach() registered, if any."""
    global _current
    if _current is not None:
        _current.detach()
        _current = None
