/*
 * snapshot.h: PyTorch's memory snapshot as evidence (snapshot.c): read it
 * (a pickle through pickle.c, or its JSON form), measure the segments and
 * blocks of one device, and join the figures to an event or make an
 * event of the trace's oom entry.
 */
#ifndef OD_SNAPSHOT_H
#define OD_SNAPSHOT_H

#include <jansson.h>

#include "core.h"

/* Whether data (the first bytes of a file) is a snapshot: a pickle
 * (od_pickle_sniff), or a JSON object whose first keys include
 * "segments" or "device_traces". */
bool od_snapshot_sniff(const unsigned char *data, size_t len);

/* What od_snapshot_sniff_path found. */
typedef enum {
	OD_SNIFF_NONE,          /* not a snapshot, or not a regular file */
	OD_SNIFF_PICKLE,        /* a pickle: a snapshot or an error */
	OD_SNIFF_JSON,          /* JSON that names a snapshot's keys */
} od_sniff;

/* What the file at path looks like, when it is a regular file (opened
 * without blocking; OD_SNIFF_NONE on any error). */
od_sniff od_snapshot_sniff_path(const char *path);

/* Reads data[0..len), a pickle or JSON, as a snapshot: a new reference,
 * or NULL with err filled in (name is the file's, for errors); a value
 * with no "segments" list is not one. */
json_t *od_snapshot_parse(const unsigned char *data, size_t len,
    const char *name, od_error *err);

/* Reads the regular file at path (at most OD_PICKLE_MAX_BYTES) and
 * parses it; *bytes gets its size. */
json_t *od_snapshot_load(const char *path, uint64_t *bytes, od_error *err);

/*
 * Measures device's segments and blocks (device -1: the device of the
 * trace's last oom entry, else of the first segment) against the request
 * and the device's free memory: those of the oom entry when the trace has
 * one, else request and device_free (OD_UNKNOWN: not known).  Fills *out
 * (out->present set); false, with *out cleared, when memory ran out.
 */
bool od_snapshot_measure(const json_t *root, int device, int64_t request,
    int64_t device_free, od_snapshot_facts *out);

/*
 * The event of a snapshot alone, from its trace's oom entry: the request,
 * the device's free memory, and PyTorch's reserved and allocated bytes
 * from the segments; input is its index among the run's inputs.  False
 * (ev left empty) when the trace has no oom entry, or when memory ran out
 * (then ev->snap.from_trace is set).  ev is initialised here; its message
 * is the caller's to free as any event's is.
 */
bool od_snapshot_event(const json_t *root, int input, od_event *ev);

/*
 * Joins the snapshot to the event of set it belongs to (see oomdoc(1),
 * SNAPSHOTS): a fatal event of PyTorch's allocator on the snapshot's
 * device (or one that names none), the last whose request matches the oom
 * entry's size, else the last one.  Returns its index, -1 when set has
 * no such event, or -2 when memory ran out.
 */
long od_snapshot_join(const json_t *root, od_events *set);

/* The verdict's name: "confirmed", "partial", "refuted", "inconclusive",
 * NULL for OD_SNAP_UNKNOWN. */
const char *od_snapshot_verdict_name(od_snap_verdict v);

#endif
