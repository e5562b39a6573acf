"""oomdoc.torch against the real PyTorch 2.0.1 wheel of PyPI, without a
GPU (tests/python_torch.sh installs it and runs this with
CUDA_VISIBLE_DEVICES empty, from the repository root).

What runs here: the real torch._C._cuda_attach_out_of_memory_observer
and torch.cuda.memory._record_memory_history of 2.0.1 (torch/cuda/memory.py
of v2.0.1: enabled a bool, trace_alloc_max_entries,
trace_alloc_record_context), the observer called as the allocator calls
it (c10/cuda/CUDACachingAllocator.cpp of v2.0.1, DeviceCachingAllocator::
malloc: device, the request, the device's total or the allowed bytes, the
free bytes) with torch.cuda unavailable, and PyTorch's own snapshot tools
(torch/cuda/_memory_viz.py of v2.0.1: segments, segsum, trace) on the
snapshot fixtures, against oomdoc's reading of them.  What cannot run
here: an allocation failing on a GPU (tests/gpu/run.sh, step hook), and
the 2.1 history API on a real 2.1 (tests/python/test_package.py runs it
on the stand-in of tests/python/stub).
"""
import collections
import glob
import inspect
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

import torch
from torch.cuda import _memory_viz

import oomdoc
import oomdoc.torch

GIB = 1 << 30
COMMAND = os.path.join(os.path.dirname(sys.executable), "oomdoc")
SNAPSHOTS = "fixtures/snapshot"


def torch_reason(fn, *args, **kwargs):
    """What fn raises, as type and text (None when it returns)."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: B902 - the reason is what is tested
        return "%s: %s" % (type(e).__name__, e)
    return None


class Release(unittest.TestCase):
    def test_the_pinned_release(self):
        self.assertTrue(torch.__version__.startswith("2.0.1"), torch.__version__)
        self.assertTrue(callable(torch._C._cuda_attach_out_of_memory_observer))
        self.assertFalse(torch.cuda.is_available())
        self.assertEqual(oomdoc.torch.history_api(torch), "2.0")


class Attach(unittest.TestCase):
    def tearDown(self):
        oomdoc.torch.detach()

    def test_attach_says_why_not(self):
        # The real function refuses without CUDA; attach() must pass on
        # PyTorch's own reason, not a guess.
        reason = torch_reason(torch._C._cuda_attach_out_of_memory_observer,
                              lambda *a: None)
        self.assertIsNotNone(reason, "registering worked without CUDA")
        with self.assertRaises(RuntimeError) as cm:
            oomdoc.torch.attach(stream=io.StringIO())
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(
            "oomdoc.torch: PyTorch %s could not register the out-of-memory "
            "observer: " % torch.__version__), msg)
        self.assertIn(reason.splitlines()[0], msg)
        self.assertIsNone(oomdoc.torch._current)

    def test_history_call_fits_this_release(self):
        # The arguments oomdoc.torch hands to _record_memory_history bind
        # to this release's signature, to start and to stop; the 2.1 form
        # does not (the call the hook made before it knew both APIs).
        sig = inspect.signature(torch.cuda.memory._record_memory_history)
        api = oomdoc.torch.history_api(torch)
        for start in (True, False):
            args, kw = oomdoc.torch._history_call(api, start, 1000)
            sig.bind(*args, **kw)
            # Without a device PyTorch refuses, but not for the arguments.
            r = torch_reason(torch.cuda.memory._record_memory_history,
                             *args, **kw)
            self.assertFalse(r is not None and r.startswith("TypeError"), r)
        args, kw = oomdoc.torch._history_call("2.1", True, 1000)
        self.assertRaises(TypeError, sig.bind, *args, **kw)
        r = torch_reason(torch.cuda.memory._record_memory_history, *args, **kw)
        self.assertTrue(r is not None and r.startswith("TypeError"), r)


class Observer(unittest.TestCase):
    def test_called_as_pytorch_calls_it_without_cuda(self):
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as d:
            att = oomdoc.torch.Attachment(
                torch, record_history=False, max_entries=0, max_reports=5,
                dump_dir=d, stream=out, rules=None, default_rules=True,
                facts=None)
            # (device, alloc, device_allocated, device_free), as
            # DeviceCachingAllocator::malloc calls its observers.
            att(0, 2 * GIB, 80 * GIB, 1 * GIB)
            written = os.listdir(d)
        text = out.getvalue()
        self.assertEqual(written, [], "files written without an allocator")
        self.assertEqual(len(att.failures), 1, text)
        f = att.failures[0]
        self.assertIsNone(f["snapshot"])
        self.assertIsNone(f["memory_stats"])
        self.assertIsNone(f["allocated_bytes"])
        self.assertIsNone(f["reserved_bytes"])
        self.assertIn("allocator snapshot: not written; memory_stats: not "
                      "written", text)
        self.assertIn("oomdoc.torch: snapshot: not written: CUDA is not "
                      "available to this process (torch.cuda.is_available() "
                      "is False)", text)
        # mem_get_info's own refusal is reported, and the total is then
        # the observer's third number.
        why = torch_reason(torch.cuda.mem_get_info, 0)
        self.assertIn("oomdoc.torch: mem_get_info: " + why.split(": ", 1)[1],
                      text)
        # The message states no allocator figures it does not have.
        self.assertNotIn("allocated by PyTorch", f["message"])
        self.assertIn("oomdoc: 1 out-of-memory event found in PyTorch "
                      "out-of-memory observer, GPU 0", text)
        ev = f["report"]["events"]
        self.assertEqual(len(ev), 1)
        m = ev[0]["memory"]
        self.assertEqual((m["requested_bytes"], m["total_bytes"],
                          m["free_bytes"], m["allocated_bytes"]),
                         (2 * GIB, 80 * GIB, 1 * GIB, None), m)


def oomdoc_reading(path):
    """oomdoc's reading of a snapshot fixture (the wheel's command): the
    snapshot object of its event, joined to job.log's matching event when
    the snapshot has no oom entry of its own."""
    args = [path] if not path.endswith("no-oom-entry.pickle") else \
        ["--snapshot", path, os.path.join(SNAPSHOTS, "job.log")]
    p = subprocess.run([COMMAND, "--format", "json"] + args,
                       capture_output=True, text=True)
    rep = json.loads(p.stdout)
    snaps = [e["snapshot"] for e in rep["events"] if e.get("snapshot")]
    assert len(snaps) == 1, (path, p.stderr)
    return snaps[0]


def flame_bytes(data):
    """The bytes of each block state, and of each frame among allocated
    blocks, as PyTorch's segments() writes them for flamegraph.pl (one
    line per block, or per history entry: STACK SIZE)."""
    state = collections.Counter()
    frames = collections.Counter()
    for line in _memory_viz.segments(data, format_flamegraph=lambda s: s).splitlines():
        path, n = line.rsplit(" ", 1)
        parts = path.split(";")
        state[parts[2]] += int(n)
        if parts[2] == "active_allocated":
            for fr in set(parts[3:]):
                frames[fr] += int(n)
    return state, frames


class Snapshots(unittest.TestCase):
    """The fixtures read by PyTorch's own code: the totals of its tools
    are oomdoc's.  segsum asserts that each segment's blocks add up to
    its size; trace prints the oom entry."""

    def test_fixtures_by_pytorchs_tools(self):
        paths = sorted(glob.glob(os.path.join(SNAPSHOTS, "*.pickle"))) + \
            [os.path.join(SNAPSHOTS, "fragmentation-json.json")]
        self.assertGreaterEqual(len(paths), 8)
        Bytes = _memory_viz.Bytes
        for path in paths:
            with self.subTest(path=path):
                if path.endswith(".json"):
                    with open(path) as fh:
                        data = json.load(fh)
                else:
                    with open(path, "rb") as fh:
                        data = pickle.load(fh)
                got = oomdoc_reading(path)
                state, frames = flame_bytes(data)
                self.assertEqual(got["allocated_bytes"],
                                 state["active_allocated"])
                self.assertEqual(got["inactive_bytes"], state["inactive"])
                self.assertEqual(got["pending_free_bytes"],
                                 state["active_pending_free"])
                self.assertEqual(got["reserved_bytes"], sum(state.values()))
                try:
                    summary = _memory_viz.segsum(data)
                except ZeroDivisionError:
                    # segsum's _report_free divides by a segment's free
                    # bytes (PyTorch 2.0.1): a snapshot with a segment
                    # without a free block cannot be summarised by it.
                    self.assertTrue(any(
                        all(b["state"] != "inactive" for b in seg["blocks"])
                        for seg in data["segments"]), path)
                    summary = None
                if summary is not None:
                    self.assertIn("segments: %d\n" % got["segments"], summary)
                    self.assertIn("total_reserved: %r\n"
                                  % Bytes(got["reserved_bytes"]), summary)
                ooms = [l for l in _memory_viz.trace(data).splitlines()
                        if l.startswith("raise OutOfMemoryError()")]
                if got["from_trace"]:
                    self.assertEqual(ooms, [
                        "raise OutOfMemoryError() # %r requested, %r free in CUDA"
                        % (Bytes(got["request_bytes"]),
                           Bytes(got["device_free_bytes"]))])
                else:
                    self.assertEqual(ooms, [])
                if got.get("owner") and frames:
                    # Only the 2.0 layout's block histories carry frames
                    # that 2.0.1's segments() writes.  PyTorch names a
                    # frame file:line:function, oomdoc /path/file:line in
                    # function.
                    where, func = got["owner"].rsplit(" in ", 1)
                    key = "%s:%s" % (os.path.basename(where), func)
                    self.assertEqual(got["owner_bytes"], frames[key],
                                     (key, dict(frames)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
