"""Re-analyse an archive of job logs with oomdoc over a Dask cluster.

    pip install '.[fleet]'          # oomdoc, dask and distributed
    python examples/fleet_dask.py --workers 2 --out rows.jsonl ARCHIVE/...

Each task diagnoses one log in a worker process (oomdoc.diagnose: the C
library through ctypes, no subprocess) and sends back one small row, not
the report: the path, the number of events, their kinds, the top cause
and the fingerprint.  The client writes the rows as JSON lines, in the
order of the inputs, and prints how many logs share each fingerprint: the
same failure across many jobs.  A log that cannot be read gives a row
with its error, and the run goes on.

Without --scheduler a LocalCluster of --workers processes (one thread
each) is started here and stopped at the end; with --scheduler
tcp://HOST:8786 the tasks go to a cluster that is already running, whose
workers must have the package installed and see the same paths.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from typing import Any, Dict, Iterable, List


def diagnose_row(path: str) -> Dict[str, Any]:
    """One log's row; runs on a worker."""
    import oomdoc

    try:
        r = oomdoc.diagnose(path)
    except oomdoc.Error as e:
        return {"path": path, "error": str(e)}
    s = r["summary"]
    return {
        "path": path,
        "events": s["events"],
        "kinds": [e["kind"] for e in r["events"]],
        "top_cause": s["top_cause"],
        "fingerprint": s["fingerprint"],
    }


def log_files(args: Iterable[str]) -> List[str]:
    """The files named, and the *.log, *.gz and *.zst files under each
    directory named, in name order."""
    out: List[str] = []
    for a in args:
        if os.path.isdir(a):
            for d, dirs, files in os.walk(a):
                dirs.sort()
                out += [os.path.join(d, f) for f in sorted(files)
                        if f.endswith((".log", ".gz", ".zst"))]
        else:
            out.append(a)
    return out


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", help="log files or directories")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes of the local cluster (default 2)")
    p.add_argument("--scheduler", help="address of a running scheduler")
    p.add_argument("--out", help="write the rows here (default: stdout)")
    a = p.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    paths = log_files(a.paths)
    cluster = None
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        futures = client.map(diagnose_row, paths, pure=False)
        rows = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    out = open(a.out, "w") if a.out else sys.stdout
    try:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")
    finally:
        if a.out:
            out.close()
    counts = collections.Counter(r["fingerprint"] for r in rows
                                 if r.get("fingerprint"))
    failed = sum(1 for r in rows if r.get("events"))
    errors = sum(1 for r in rows if "error" in r)
    sys.stderr.write("fleet_dask: %d logs, %d with an out-of-memory failure, "
                     "%d unreadable; %d distinct fingerprints\n"
                     % (len(rows), failed, errors, len(counts)))
    for fp, n in counts.most_common(10):
        sys.stderr.write("  %6d  %s\n" % (n, fp))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
