/*
 * fuzz_pickle.c: libFuzzer target for the memory-snapshot reader
 * (src/lib/pickle.c, src/lib/snapshot.c), which reads pickles and JSON made
 * elsewhere, perhaps by someone hostile.
 *
 * Each input is parsed as a snapshot (a pickle when it starts with PROTO,
 * else JSON).  A refusal must come with a message and the file's name.
 * What is read must be an object with a "segments" list, must dump as JSON
 * (a value that contained itself would not end), and must measure the
 * same after a round trip through its JSON text: the pickle reader and
 * the JSON form feed one analysis.  The measured figures must keep their
 * bounds (the owner NUL-terminated, the free bytes in segments in use and
 * the largest free block within all free bytes, a confirmed verdict only
 * where its comparisons hold), and the snapshot's event must be writable
 * as a report's event.  Any crash,
 * leak, sanitizer report or broken invariant is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fz_check(const od_snapshot_facts *s)
{
	if (!s->present || memchr(s->owner, '\0', sizeof s->owner) == NULL)
		abort();
	if (s->inactive < 0 || s->split_free < 0 || s->largest_free < 0 ||
	    s->split_free > s->inactive || s->largest_free > s->inactive ||
	    s->segments < 0 || s->pending_blocks < 0)
		abort();
	if (s->verdict == OD_SNAP_CONFIRMED && !(s->largest_free < s->request &&
	    s->inactive >= s->request))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	od_snapshot_facts a, b;
	od_error err;
	json_t *root, *again;
	char *text;
	od_event ev;

	memset(&err, 0, sizeof err);
	root = od_snapshot_parse(data, size, "fuzz.pickle", &err);
	if (root == NULL) {
		if (err.msg[0] == '\0' || strcmp(err.file, "fuzz.pickle") != 0)
			abort();
		return 0;
	}
	if (!json_is_array(json_object_get(root, "segments")))
		abort();
	text = json_dumps(root, JSON_ENCODE_ANY | JSON_COMPACT);
	if (text == NULL)
		abort();
	again = json_loads(text, JSON_ALLOW_NUL, NULL);
	if (again == NULL)
		abort();
	/* Out of memory (never under libFuzzer's limits) is no finding. */
	if (od_snapshot_measure(root, -1, OD_UNKNOWN, OD_UNKNOWN, &a) &&
	    od_snapshot_measure(again, -1, OD_UNKNOWN, OD_UNKNOWN, &b)) {
		if (memcmp(&a, &b, sizeof a) != 0)
			abort();
		fz_check(&a);
	}
	if (od_snapshot_event(root, 0, &ev)) {
		char name[] = "fuzz.pickle";
		od_input in = { .name = name, .compression = "none" };
		od_json_ctx cx = { .inputs = &in };
		json_t *j = od_event_to_json(&ev, &cx);

		if (j == NULL)
			abort();
		json_decref(j);
	}
	od_event_clear(&ev);
	free(text);
	json_decref(again);
	json_decref(root);
	return 0;
}
