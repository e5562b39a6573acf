/*
 * probe_plan.c: which probes an event's causes ask for.  Each rule names
 * its probe (the cause's `probe`, `confirm_with` in the rule files); the
 * plan finds the probe by its name, has the session run it with the
 * event's figures (a run with the same figures is reused) and has the
 * judge give the verdict on the cause.
 */
#include <string.h>

#include "probe.h"
#include "rules.h"

/* The names the rules give the probes (the rule files' confirm_with). */
static const char *const pb_names[PB_COUNT] = {
	[PB_CONTEXT_COST] = "context_cost",
	[PB_FITS_NOW] = "fits_now",
	[PB_LARGEST_ALLOCATION] = "largest_allocation",
	[PB_FRAGMENTATION] = "fragmentation",
	[PB_PROCESSES] = "processes",
	[PB_HEALTH] = "health",
};

const char *
pb_name(pb_probe p)
{
	return p < PB_COUNT ? pb_names[p] : "unknown";
}

int
pb_find(const char *name)
{
	int i;

	for (i = 0; name != NULL && i < PB_COUNT; i++)
		if (strcmp(name, pb_names[i]) == 0)
			return i;
	return -1;
}

int
pb_withheld(const od_event *ev, const char *why, pb_verdict *v, int cap)
{
	int i, n = 0;

	for (i = 0; i < ev->ncauses && n < cap; i++) {
		const od_cause *c = &ev->causes[i];
		int p;

		if (c->probe == NULL || c->rule == NULL)
			continue;
		memset(&v[n], 0, sizeof v[n]);
		v[n].probe_name = c->probe;
		p = pb_find(c->probe);
		v[n].probe = p < 0 ? PB_COUNT : (pb_probe)p;
		v[n].cause = c->rule;
		v[n].outcome = PB_INCONCLUSIVE;
		snprintf(v[n].summary, sizeof v[n].summary, "%s", why);
		n++;
	}
	return n;
}

int
pb_verdicts(pb_session *s, const od_event *ev, pb_verdict *v, int cap)
{
	int i, n = 0;

	for (i = 0; i < ev->ncauses && n < cap; i++) {
		const od_cause *c = &ev->causes[i];
		int p;

		/* A report read back may come from an oomdoc that named a
		 * probe for another vendor's event: none runs for it. */
		if (c->probe == NULL || c->rule == NULL || !rl_probe_runs(ev))
			continue;
		memset(&v[n], 0, sizeof v[n]);
		v[n].probe_name = c->probe;
		p = pb_find(c->probe);
		if (p < 0) {
			v[n].probe = PB_COUNT;
			v[n].cause = c->rule;
			v[n].outcome = PB_INCONCLUSIVE;
			snprintf(v[n].summary, sizeof v[n].summary, "There is "
			    "no probe named '%s'.", c->probe);
		} else {
			pb_judge(c->rule, ev, pb_run(s, (pb_probe)p, ev), &v[n]);
		}
		n++;
	}
	return n;
}
