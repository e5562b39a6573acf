/*
 * live_report.c: the report of `oomdoc live` and `oomdoc probe`: the
 * device, what the probes took, and for each event the verdict on each
 * cause that names a probe, with the measurements behind it and the
 * memory activity it caused; in the format asked for (live_report.h), and
 * what the writers share.
 */
#include <string.h>

#include "live_report.h"

lr_count
lr_counts(const lv_report *r)
{
	lr_count c;
	int i, k;

	memset(&c, 0, sizeof c);
	for (i = 0; i < r->nevents; i++)
		for (k = 0; k < r->events[i].nv; k++) {
			pb_outcome o = r->events[i].v[k].outcome;

			c.total++;
			if (o == PB_CONFIRMED)
				c.confirmed++;
			else if (o == PB_REFUTED)
				c.refuted++;
			else
				c.inconclusive++;
		}
	return c;
}

void
lr_value(const pb_meas *m, char *buf, size_t len)
{
	char sz[32];

	switch (m->type) {
	case PM_BYTES:
		if (m->i < 0) {
			snprintf(buf, len, "unknown");
		} else if (m->i <= 1024) {
			snprintf(buf, len, "%lld bytes", (long long)m->i);
		} else {
			od_size_format(m->i, sz, sizeof sz);
			snprintf(buf, len, "%s (%lld bytes)", sz,
			    (long long)m->i);
		}
		break;
	case PM_INT:
		snprintf(buf, len, "%lld", (long long)m->i);
		break;
	case PM_NUM:
		snprintf(buf, len, "%.3g", m->d);
		break;
	case PM_RATE:
		/* A rate below zero is none measured (a device of no known
		 * clock or width: it printed as -0.0 GB/s). */
		if (m->d >= 0)
			snprintf(buf, len, "%.1f GB/s", m->d / 1e9);
		else
			snprintf(buf, len, "unknown");
		break;
	case PM_BOOL:
		snprintf(buf, len, "%s", m->b ? "yes" : "no");
		break;
	case PM_STR:
		snprintf(buf, len, "%s", m->s);
		break;
	}
}

void
lv_report_write(FILE *out, const lv_report *r)
{
	if (r->format == OD_FORMAT_JSON)
		lr_json_report(out, r);
	else if (r->format == OD_FORMAT_MARKDOWN)
		lr_markdown(out, r);
	else
		lr_text(out, r);
}
