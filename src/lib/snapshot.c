/*
 * snapshot.c: PyTorch's memory snapshot as evidence.
 *
 * The snapshot (torch.cuda.memory._snapshot(), written by
 * _dump_snapshot(); torch/cuda/memory.py) is a dict with "segments" and
 * "device_traces", built by _memory_snapshot_pickled() in
 * torch/csrc/cuda/memory_snapshot.cpp from the caching allocator's
 * snapshot() (c10/cuda/CUDACachingAllocator.cpp):
 *
 *   segments: [{device, address, total_size, allocated_size, active_size,
 *     requested_size, stream, segment_type: "large"|"small",
 *     is_expandable, frames, blocks: [{address, size, requested_size,
 *     state: "active_allocated"|"active_pending_free"|"inactive",
 *     frames: [{filename, line, name}]}]}]
 *   device_traces: [[{action, addr, size, stream, time_us, frames}]],
 *     one list per device; action "oom" carries device_free instead of
 *     addr (its size is the request)
 *   allocator_settings: {PYTORCH_CUDA_ALLOC_CONF, expandable_segments, ...}
 *
 * Releases before 2.1 give blocks without frames and a "history" list of
 * {addr, real_size, frames} instead (torch/cuda/_memory_viz.py,
 * _block_extra_legacy, reads both); this reads both too.
 *
 * What is measured, for the one device (all exact sums of the blocks):
 * the bytes of inactive (free) blocks, the largest inactive block that the
 * request could have taken (of the request's pool, large above 1 MiB as
 * kSmallSize says, and of its stream when both are known: the allocator's
 * free lists are per pool and stream), the inactive bytes inside segments
 * that still hold a live block (a segment without one would have been
 * released before the allocator gave up: release_cached_blocks), the bytes
 * freed but still in use by a stream (active_pending_free), and what
 * expandable segments would have had to offer (every inactive byte, whose
 * pages it can unmap and map again as one range, and the device's free
 * memory).  The verdict on fragmentation follows:
 *
 *   inconclusive  a free block at least as large as the request was there
 *                 (the snapshot was not taken at the failure, or the block
 *                 was another stream's)
 *   confirmed     no free block fit, but the free blocks together held the
 *                 request: the memory was there, in pieces
 *   partial       they did not alone, but with the device's free memory
 *                 they did: expandable segments would have served it
 *   refuted       not even every free byte and the device's free memory
 *                 together held it: a shortage, not fragmentation
 */
#define _GNU_SOURCE             /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pickle.h"
#include "snapshot.h"

#define SN_SMALL_SIZE ((int64_t)1 << 20)  /* kSmallSize: 1 MiB */
#define SN_SNIFF 4096

const char *
od_snapshot_verdict_name(od_snap_verdict v)
{
	switch (v) {
	case OD_SNAP_CONFIRMED: return "confirmed";
	case OD_SNAP_PARTIAL: return "partial";
	case OD_SNAP_REFUTED: return "refuted";
	case OD_SNAP_INCONCLUSIVE: return "inconclusive";
	default: return NULL;
	}
}

bool
od_snapshot_sniff(const unsigned char *data, size_t len)
{
	size_t i = 0, n;

	if (od_pickle_sniff(data, len))
		return true;
	while (i < len && (data[i] == ' ' || data[i] == '\t' ||
	    data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i == len || data[i] != '{')
		return false;
	/* The keys of the start of the object, as json.dump writes them. */
	n = len - i < SN_SNIFF ? len - i : SN_SNIFF;
	return memmem(data + i, n, "\"segments\"", 10) != NULL ||
	    memmem(data + i, n, "\"device_traces\"", 15) != NULL;
}

od_sniff
od_snapshot_sniff_path(const char *path)
{
	unsigned char buf[SN_SNIFF];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return OD_SNIFF_NONE;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return OD_SNIFF_NONE;
	}
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n <= 0 || !od_snapshot_sniff(buf, (size_t)n))
		return OD_SNIFF_NONE;
	return od_pickle_sniff(buf, (size_t)n) ? OD_SNIFF_PICKLE :
	    OD_SNIFF_JSON;
}

json_t *
od_snapshot_parse(const unsigned char *data, size_t len, const char *name,
    od_error *err)
{
	json_t *root;

	if (od_pickle_sniff(data, len))
		root = od_pickle_read(data, len, name, err);
	else {
		json_error_t je;

		root = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES,
		    &je);
		if (root == NULL) {
			od_error_set(err, name, (uint64_t)(je.line > 0 ? je.line : 0),
			    (uint64_t)(je.column > 0 ? je.column : 0), "not a "
			    "snapshot's JSON: %s", je.text);
			return NULL;
		}
	}
	if (root != NULL && !json_is_array(json_object_get(root, "segments"))) {
		od_error_set(err, name, 0, 0, "not a PyTorch memory snapshot: "
		    "no \"segments\" list at the top");
		json_decref(root);
		return NULL;
	}
	return root;
}

json_t *
od_snapshot_load(const char *path, uint64_t *bytes, od_error *err)
{
	unsigned char *data;
	struct stat st;
	json_t *root;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		od_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		od_error_set(err, path, 0, 0, "a snapshot must be a regular file");
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > OD_PICKLE_MAX_BYTES) {
		od_error_set(err, path, 0, 0, "a snapshot of %llu bytes, over the "
		    "bound of %zu MiB", (unsigned long long)st.st_size,
		    OD_PICKLE_MAX_BYTES >> 20);
		close(fd);
		return NULL;
	}
	data = malloc((size_t)st.st_size + 1);
	if (data == NULL) {
		od_error_set(err, path, 0, 0, "out of memory");
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			od_error_set(err, path, 0, 0, "cannot read: %s",
			    strerror(errno));
			free(data);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (bytes != NULL)
		*bytes = got;
	root = od_snapshot_parse(data, got, path, err);
	free(data);
	return root;
}

/* a + b for two byte counts (neither negative), saturating at INT64_MAX:
 * a hostile snapshot's sizes may add up past it. */
static int64_t
sn_sum(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* An integer member of obj, or OD_UNKNOWN when absent, not a whole
 * number or negative. */
static int64_t
sn_int(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (json_is_integer(v) && json_integer_value(v) >= 0)
		return (int64_t)json_integer_value(v);
	return OD_UNKNOWN;
}

/* A device's number as the snapshot gives it, -1 when not. */
static int
sn_device(const json_t *seg)
{
	int64_t d = sn_int(seg, "device");

	return d >= 0 && d < 65536 ? (int)d : -1;
}

/* The last oom entry of device's trace (device -1: of the device whose
 * last oom entry is the latest, or the first with one when the entries
 * have no time); *dev gets its device. */
static const json_t *
sn_oom(const json_t *root, int device, int *dev)
{
	const json_t *traces = json_object_get(root, "device_traces");
	const json_t *best = NULL;
	int64_t best_time = -1;
	size_t d, i;

	if (!json_is_array(traces))
		return NULL;
	for (d = 0; d < json_array_size(traces) && d < 65536; d++) {
		const json_t *list = json_array_get(traces, d);
		const json_t *last = NULL;

		if (device >= 0 && (size_t)device != d)
			continue;
		if (!json_is_array(list))
			continue;
		for (i = 0; i < json_array_size(list); i++) {
			const json_t *e = json_array_get(list, i);
			const char *a = json_string_value(json_object_get(e,
			    "action"));

			if (a != NULL && strcmp(a, "oom") == 0)
				last = e;
		}
		if (last == NULL)
			continue;
		if (best == NULL || sn_int(last, "time_us") > best_time) {
			best = last;
			best_time = sn_int(last, "time_us");
			*dev = (int)d;
		}
	}
	return best;
}

/* The frame that owns a block: its first frame outside PyTorch and
 * Python's own files (the innermost user code), else its first; written
 * as "file:line in name".  False when the block has no frames. */
static bool
sn_owner(const json_t *block, char *buf, size_t cap)
{
	const json_t *frames = json_object_get(block, "frames");
	const json_t *pick = NULL;
	size_t i;

	if (!json_is_array(frames) || json_array_size(frames) == 0) {
		/* Before 2.1: the frames of the block's history. */
		const json_t *h = json_object_get(block, "history");

		frames = json_is_array(h) && json_array_size(h) > 0 ?
		    json_object_get(json_array_get(h, 0), "frames") : NULL;
	}
	if (!json_is_array(frames) || json_array_size(frames) == 0)
		return false;
	for (i = 0; i < json_array_size(frames) && pick == NULL; i++) {
		const char *f = json_string_value(json_object_get(
		    json_array_get(frames, i), "filename"));

		if (f != NULL && f[0] != '<' && strstr(f, "/torch/") == NULL &&
		    strstr(f, "/python3") == NULL && strstr(f, ".cpp") == NULL &&
		    strstr(f, ".h") == NULL && strcmp(f, "??") != 0)
			pick = json_array_get(frames, i);
	}
	if (pick == NULL)
		pick = json_array_get(frames, 0);
	snprintf(buf, cap, "%s:%lld in %s",
	    json_string_value(json_object_get(pick, "filename")) != NULL ?
	    json_string_value(json_object_get(pick, "filename")) : "?",
	    (long long)sn_int(pick, "line"),
	    json_string_value(json_object_get(pick, "name")) != NULL ?
	    json_string_value(json_object_get(pick, "name")) : "?");
	return true;
}

/* The verdict of the measured figures, as the header says. */
static od_snap_verdict
sn_verdict(const od_snapshot_facts *s)
{
	if (s->request < 0)
		return OD_SNAP_UNKNOWN;
	if (s->largest_free >= s->request)
		return OD_SNAP_INCONCLUSIVE;
	if (s->inactive >= s->request)
		return OD_SNAP_CONFIRMED;
	if (s->device_free < 0)
		return OD_SNAP_UNKNOWN;
	if (sn_sum(s->inactive, s->device_free) >= s->request)
		return OD_SNAP_PARTIAL;
	return OD_SNAP_REFUTED;
}

bool
od_snapshot_measure(const json_t *root, int device, int64_t request,
    int64_t device_free, od_snapshot_facts *out)
{
	const json_t *segs = json_object_get(root, "segments");
	const json_t *oom;
	json_t *owners = json_object();
	int64_t stream = OD_UNKNOWN;
	size_t i, j;
	int dev = device;

	memset(out, 0, sizeof *out);
	if (owners == NULL)
		return false;
	out->present = true;
	out->expandable = -1;
	out->owner_bytes = OD_UNKNOWN;
	oom = sn_oom(root, device, &dev);
	if (oom != NULL) {
		out->from_trace = true;
		request = sn_int(oom, "size");
		device_free = sn_int(oom, "device_free");
		stream = sn_int(oom, "stream");
	}
	if (dev < 0)
		for (i = 0; i < json_array_size(segs) && dev < 0; i++)
			dev = sn_device(json_array_get(segs, i));
	out->device = dev;
	out->request = request;
	out->device_free = device_free;
	for (i = 0; i < json_array_size(segs); i++) {
		const json_t *seg = json_array_get(segs, i);
		const json_t *blocks = json_object_get(seg, "blocks");
		const char *type = json_string_value(json_object_get(seg,
		    "segment_type"));
		const json_t *exp = json_object_get(seg, "is_expandable");
		int64_t seg_stream = sn_int(seg, "stream"), seg_free = 0;
		bool live = false, pool;

		if (sn_device(seg) != dev || !json_is_object(seg))
			continue;
		out->segments++;
		if (sn_int(seg, "total_size") > 0)
			out->reserved = sn_sum(out->reserved,
			    sn_int(seg, "total_size"));
		if (json_is_boolean(exp))
			out->expandable = out->expandable == 1 ||
			    json_is_true(exp);
		/* Could the request have taken a block of this segment?  The
		 * pool of its size, and its stream when both are known. */
		pool = (type == NULL || request < 0 ||
		    (strcmp(type, "large") == 0) == (request > SN_SMALL_SIZE)) &&
		    (stream < 0 || seg_stream < 0 || stream == seg_stream);
		for (j = 0; j < json_array_size(blocks); j++) {
			const json_t *b = json_array_get(blocks, j);
			const char *state = json_string_value(json_object_get(b,
			    "state"));
			int64_t size = sn_int(b, "size");
			char who[sizeof out->owner];

			if (state == NULL || size < 0)
				continue;
			if (strcmp(state, "inactive") == 0) {
				seg_free = sn_sum(seg_free, size);
				if (pool && size > out->largest_free)
					out->largest_free = size;
				continue;
			}
			live = true;
			if (strcmp(state, "active_pending_free") == 0) {
				out->pending_free = sn_sum(out->pending_free,
				    size);
				out->pending_blocks++;
				continue;
			}
			if (strcmp(state, "active_allocated") != 0)
				continue;
			out->allocated = sn_sum(out->allocated, size);
			if (sn_owner(b, who, sizeof who)) {
				json_t *sum = json_object_get(owners, who);
				int64_t was = sum != NULL ? (int64_t)
				    json_integer_value(sum) : 0;

				out->history = true;
				if (json_object_set_new(owners, who,
				    json_integer((json_int_t)sn_sum(was < 0 ? 0 :
				    was, size))) != 0) {
					json_decref(owners);
					memset(out, 0, sizeof *out);
					return false;
				}
			}
		}
		out->inactive = sn_sum(out->inactive, seg_free);
		if (live)
			out->split_free = sn_sum(out->split_free, seg_free);
	}
	out->expandable_offer = sn_sum(out->inactive, device_free > 0 ?
	    device_free : 0);
	if (device_free < 0)
		out->expandable_offer = OD_UNKNOWN;
	{
		const char *key;
		json_t *v;

		json_object_foreach(owners, key, v) {
			int64_t b = (int64_t)json_integer_value(v);

			/* The largest, and of equal ones the first by name,
			 * so the choice does not hang on the hash order. */
			if (b > out->owner_bytes || (b == out->owner_bytes &&
			    strcmp(key, out->owner) < 0)) {
				out->owner_bytes = b;
				snprintf(out->owner, sizeof out->owner, "%s", key);
			}
		}
		json_decref(owners);
	}
	out->verdict = sn_verdict(out);
	return true;
}

bool
od_snapshot_event(const json_t *root, int input, od_event *ev)
{
	const json_t *conf = json_object_get(json_object_get(root,
	    "allocator_settings"), "PYTORCH_CUDA_ALLOC_CONF");
	od_snapshot_facts s;
	char msg[256];
	int n;

	od_event_init(ev);
	if (!od_snapshot_measure(root, -1, OD_UNKNOWN, OD_UNKNOWN, &s)) {
		ev->snap.from_trace = true;     /* out of memory */
		return false;
	}
	if (!s.from_trace)
		return false;
	ev->kind = OD_KIND_CUDA_CACHING_ALLOCATOR;
	ev->framework = od_kind_framework(ev->kind);
	ev->confidence = OD_CONF_HIGH;
	ev->fatal = true;
	ev->input = input;
	ev->device = s.device;
	ev->mem.requested = s.request;
	ev->mem.free = s.device_free;
	ev->mem.reserved = s.reserved;
	ev->mem.allocated = s.allocated;
	/* Allocated blocks lie inside the segments, unless the snapshot
	 * contradicts itself. */
	ev->mem.reserved_unallocated = s.reserved >= s.allocated ?
	    s.reserved - s.allocated : OD_UNKNOWN;
	if (json_is_string(conf))
		snprintf(ev->ctx.alloc_conf, sizeof ev->ctx.alloc_conf, "%s",
		    json_string_value(conf));
	ev->snap = s;
	/* The message is oomdoc's account of the entry, not text of the
	 * file. */
	n = snprintf(msg, sizeof msg, "PyTorch memory snapshot: the trace's "
	    "oom entry on device %d asked for %lld bytes", s.device,
	    (long long)s.request);
	if (s.device_free >= 0)
		n += snprintf(msg + n, sizeof msg - (size_t)n, " with %lld bytes "
		    "free on the device", (long long)s.device_free);
	ev->message = strdup(msg);
	if (ev->message == NULL)
		return false;
	ev->message_len = strlen(ev->message);
	return true;
}

/* Whether a's request is b's as the message prints it: to three
 * significant digits ("2.00 GiB"), so within 1 %, or 2 MiB for the
 * rounding of a segment's size. */
static bool
sn_same_request(int64_t a, int64_t b)
{
	int64_t d = a > b ? a - b : b - a;

	return a >= 0 && b >= 0 && (d <= ((int64_t)2 << 20) || d <= b / 100);
}

long
od_snapshot_join(const json_t *root, od_events *set)
{
	od_snapshot_facts s;
	long pick = -1, match = -1;
	size_t i;

	if (!od_snapshot_measure(root, -1, OD_UNKNOWN, OD_UNKNOWN, &s))
		return -2;
	for (i = 0; i < od_events_count(set); i++) {
		const od_event *ev = od_events_get(set, i);

		if (!ev->fatal || (ev->kind != OD_KIND_CUDA_CACHING_ALLOCATOR &&
		    ev->kind != OD_KIND_HIP))
			continue;
		if (s.from_trace && ev->device >= 0 && ev->device != s.device)
			continue;
		pick = (long)i;
		if (s.from_trace && sn_same_request(ev->mem.requested, s.request))
			match = (long)i;
	}
	if (match >= 0)
		pick = match;
	if (pick >= 0) {
		od_event *ev = od_events_get(set, (size_t)pick);

		/* Without an oom entry, the request and the free memory are
		 * the message's. */
		if (!od_snapshot_measure(root, s.from_trace || ev->device < 0 ?
		    s.device : ev->device, ev->mem.requested, ev->mem.free,
		    &ev->snap))
			return -2;
	}
	return pick;
}
