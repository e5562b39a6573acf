#!/usr/bin/env python3
"""Checks the scenario logs of fixtures/scenarios: each NAME.log has a
NAME.scenario beside it, written by hand from the log (see
fixtures/SOURCES-scenarios.md), with one key=value a line:

    events=N        the events the log must give (0: none)
    top=RULE        the first cause of the first event
    readings=N      how many readings the JSON's context.readings holds
    what=FIGURE     the figure of the last of them
    ranks=A,B,...   the ranks the readings name, sorted
    devices=A,B,... the GPU indices the readings name (nvidia-smi's), sorted

Usage: check_scenarios.py OOMDOC DIR...
"""
import json
import os
import subprocess
import sys


def check(oomdoc, log, want):
    run = subprocess.run([oomdoc, "--format", "json", log],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        return [f"exit status {run.returncode}: {run.stderr.strip()}"]
    events = json.loads(run.stdout)["events"]
    errs = []
    if int(want["events"]) != len(events):
        errs.append(f"expected {want['events']} events, got {len(events)}")
        return errs
    if not events:
        return errs
    ev = events[0]
    causes = ev.get("causes") or []
    top = causes[0]["rule"] if causes else None
    if "top" in want and want["top"] != top:
        errs.append(f"expected top cause {want['top']}, got {top} "
                    f"({[(c['rule'], c['score']) for c in causes]})")
    readings = ev["context"].get("readings") or []
    if "readings" in want and int(want["readings"]) != len(readings):
        errs.append(f"expected {want['readings']} readings, got "
                    f"{len(readings)}")
    if "what" in want and (not readings or readings[-1]["what"] !=
                           want["what"]):
        errs.append(f"expected readings of {want['what']}, got "
                    f"{readings[-1]['what'] if readings else None}")
    if "ranks" in want:
        got = sorted({r["rank"] for r in readings if r["rank"] is not None})
        if ",".join(map(str, got)) != want["ranks"]:
            errs.append(f"expected ranks {want['ranks']}, got {got}")
    if "devices" in want:
        got = sorted({r.get("device") for r in readings
                      if r.get("device") is not None})
        if ",".join(map(str, got)) != want["devices"]:
            errs.append(f"expected devices {want['devices']}, got {got}")
    return errs


def main():
    oomdoc, dirs = sys.argv[1], sys.argv[2:]
    passed = failed = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if not name.endswith(".scenario"):
                continue
            log = os.path.join(d, name[:-len(".scenario")] + ".log")
            want = {}
            with open(os.path.join(d, name)) as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        k, v = line.split("=", 1)
                        want[k] = v
            errs = check(oomdoc, log, want)
            if errs:
                failed += 1
                print(f"FAIL {log}:")
                for e in errs:
                    print(f"    {e}")
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    if passed == 0:
        print("FAIL no scenario found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
