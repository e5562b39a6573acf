/*
 * fingerprint.c: the fingerprints of events and of a report, 16 hex
 * digits of a 64-bit FNV-1a hash, so that the same failure seen in two
 * jobs can be matched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

/* FNV-1a of a string, continuing h. */
static uint64_t
rl_hash(uint64_t h, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ '|') * 1099511628211ULL;
}

/*
 * The fingerprint names the failure, not the job: the kind, the top cause,
 * the exception and the user's failing frame (file, line, function).  No
 * figure, pid, rank or time goes in, so the same failure in another job
 * hashes the same.
 */
void
rl_fingerprint(od_event *ev)
{
	uint64_t h = 1469598103934665603ULL;
	const od_frame *uf = NULL;
	char line[32];
	int i;

	for (i = ev->nframes - 1; i >= 0 && uf == NULL; i--)
		if (ev->frames[i].user)
			uf = &ev->frames[i];
	h = rl_hash(h, od_kind_name(ev->kind));
	h = rl_hash(h, ev->ncauses > 0 ? ev->causes[0].rule : "none");
	h = rl_hash(h, ev->exception);
	h = rl_hash(h, ev->error);
	if (uf != NULL) {
		snprintf(line, sizeof line, "%lld", (long long)uf->line);
		h = rl_hash(h, uf->file);
		h = rl_hash(h, line);
		h = rl_hash(h, uf->func);
	}
	snprintf(ev->fingerprint, sizeof ev->fingerprint, "%016llx",
	    (unsigned long long)h);
}

static int
rl_cmp_fp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
rl_report_fingerprint(od_events *set, char out[17])
{
	const char *fps[OD_EVENTS_MAX];
	uint64_t h = 1469598103934665603ULL;
	size_t n = 0, i, count = od_events_count(set);
	bool any_fatal = false;

	for (i = 0; i < count; i++)
		any_fatal |= od_events_get(set, i)->fatal;
	for (i = 0; i < count; i++) {
		od_event *ev = od_events_get(set, i);

		if (ev->fatal || !any_fatal)
			fps[n++] = ev->fingerprint;
	}
	out[0] = '\0';
	if (n == 0)
		return;
	qsort(fps, n, sizeof fps[0], rl_cmp_fp);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(fps[i], fps[i - 1]) != 0)
			h = rl_hash(h, fps[i]);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}
