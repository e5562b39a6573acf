/*
 * report.c: the reports of a run, in the format asked for (report.h), and
 * what their writers share: the input names, the top cause, the memory
 * bar.
 */
#include <string.h>

#include "report.h"

const char *
rp_input_name(const od_input *in)
{
	return strcmp(in->name, "-") == 0 ? "(standard input)" : in->name;
}

const char *
rp_top_cause(od_events *set)
{
	size_t i, n = od_events_count(set);

	for (i = 0; i < n; i++) {
		od_event *ev = od_events_get(set, i);

		if (ev->fatal && ev->ncauses > 0)
			return ev->causes[0].rule;
	}
	for (i = 0; i < n; i++) {
		od_event *ev = od_events_get(set, i);

		if (ev->ncauses > 0)
			return ev->causes[0].rule;
	}
	return NULL;
}

/*
 * The memory picture as one bar over the device's capacity.  Each part
 * gets its share of the cells by largest remainder, and at least one cell
 * when it is not zero, so that a small free figure still shows.  Parts the
 * message does not give are left blank.  The request that failed is drawn
 * below on the same scale.
 */
void
rp_bar(FILE *out, const od_memory *m, const char *indent)
{
	static const char marks[] = "on#+.";
	int64_t part[5], others = 0, known = 0, sum;
	double want[5];
	int cells[5], used = 0, target, i, k, big;
	char bar[RP_BAR_WIDTH + 1];

	if (m->total <= 0 || m->allocated < 0)
		return;
	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].bytes > 0)
			others += m->procs[i].bytes;
	part[0] = others;
	part[1] = m->non_framework;
	part[2] = m->allocated;
	part[3] = m->reserved_unallocated;
	part[4] = m->free;
	for (k = 0; k < 5; k++) {
		if (part[k] < 0)
			part[k] = 0;
		known += part[k];
	}
	/* Inconsistent figures (Windows shared memory) scale to their sum. */
	sum = known > m->total ? known : m->total;
	target = (int)((double)known / (double)sum * RP_BAR_WIDTH + 0.5);
	for (k = 0; k < 5; k++) {
		want[k] = (double)part[k] / (double)sum * RP_BAR_WIDTH;
		cells[k] = (int)want[k];
		if (cells[k] == 0 && part[k] > 0)
			cells[k] = 1;
		want[k] -= cells[k];
		used += cells[k];
	}
	while (used < target) {
		for (big = 0, k = 1; k < 5; k++)
			if (want[k] > want[big])
				big = k;
		cells[big]++;
		want[big] -= 1.0;
		used++;
	}
	while (used > target) {
		for (big = 0, k = 1; k < 5; k++)
			if (cells[k] > cells[big])
				big = k;
		cells[big]--;
		used--;
	}
	for (used = 0, k = 0; k < 5; k++)
		for (i = 0; i < cells[k]; i++)
			bar[used++] = marks[k];
	while (used < RP_BAR_WIDTH)
		bar[used++] = ' ';
	bar[used] = '\0';
	fprintf(out, "%s[%s]\n", indent, bar);
	if (m->requested > 0) {
		int w = (int)((double)m->requested / (double)sum * RP_BAR_WIDTH +
		    0.5);

		w = w < 1 ? 1 : w > RP_BAR_WIDTH ? RP_BAR_WIDTH : w;
		memset(bar, ' ', RP_BAR_WIDTH);
		memset(bar, '=', (size_t)w);
		fprintf(out, "%s[%s]%s\n", indent, bar,
		    m->requested > m->total ? " >" : "");
	}
	fprintf(out, "%s o other processes  n non-PyTorch  # allocated  "
	    "+ reserved, unallocated\n%s . free  = the request that "
	    "failed\n", indent, indent);
}

bool
od_report_write(FILE *out, const od_report_opts *opts, const od_input *inputs,
    int ninputs, od_events *set)
{
	if (opts->format == OD_FORMAT_JSON)
		return rp_json(out, opts, inputs, ninputs, set);
	if (opts->format == OD_FORMAT_MARKDOWN)
		rp_markdown(out, opts, inputs, ninputs, set);
	else
		rp_text(out, opts, inputs, ninputs, set);
	return true;
}
