"""A stand-in for PyTorch, for testing oomdoc.torch's wiring only.

It has the few names oomdoc.torch uses, with the signatures of PyTorch
2.x (torch/cuda/memory.py, torch/csrc/cuda/Module.cpp), and fail(), which
does what the CUDA caching allocator does when an allocation fails
(c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator::malloc): it
calls each observer with (device, requested bytes, the device's total or
the allowed bytes, free bytes), then raises OutOfMemoryError with the
message.  It proves that oomdoc.torch is called the way PyTorch calls it
and does what it should with the numbers; it proves nothing about
PyTorch itself (tests/gpu/run.sh runs the real one).
"""
import pickle
import types

__version__ = "0.0-stub"


class OutOfMemoryError(RuntimeError):
    pass


_observers = []


def _attach(fn):
    _observers.append(fn)


_C = types.SimpleNamespace(_cuda_attach_out_of_memory_observer=_attach)

# The allocator's state, set by the test.
state = {
    "total": 80 << 30, "allowed": None, "allocated": 0, "reserved": 0,
    "history": None,
}


def _memory_stats(device=None):
    return {
        "allocated_bytes.all.current": state["allocated"],
        "reserved_bytes.all.current": state["reserved"],
        "num_ooms": 1,
    }


# The API of PyTorch 2.1 and later (torch/cuda/memory.py of v2.1.0): a
# bool enabled goes to _record_memory_history_legacy, the 2.0 signature.
def _record_memory_history(enabled="all", *args, **kwargs):
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled, *args, **kwargs)
    return _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_impl(enabled="all", context="all", stacks="all",
                                max_entries=0, device=None):
    state["history"] = None if enabled is None else (enabled, max_entries)


def _record_memory_history_legacy(enabled, record_context=True,
                                  trace_alloc_max_entries=1,
                                  trace_alloc_record_context=False,
                                  device=None, record_context_cpp=False):
    raise AssertionError("oomdoc.torch used the legacy API on PyTorch 2.1+")


def _dump_snapshot(filename="dump_snapshot.pickle"):
    with open(filename, "wb") as f:
        pickle.dump({"segments": [], "device_traces": [[]],
                     "stub_history": state["history"]}, f)


def _mem_get_info(device=None):
    return (0, state["total"])


cuda = types.SimpleNamespace(
    memory_stats=_memory_stats,
    get_device_name=lambda device=None: "NVIDIA H100 80GB HBM3",
    mem_get_info=_mem_get_info,
    is_available=lambda: True,
    is_initialized=lambda: True,
    memory=types.SimpleNamespace(
        _record_memory_history=_record_memory_history,
        _record_memory_history_legacy=_record_memory_history_legacy,
        _dump_snapshot=_dump_snapshot),
)


def fail(device, requested, free, message):
    """An allocation of requested bytes failing on device."""
    third = state["allowed"] if state["allowed"] is not None else state["total"]
    for obs in list(_observers):
        obs(device, requested, third, free)
    raise OutOfMemoryError(message)
