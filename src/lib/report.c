/*
 * report.c: the reports of a run, in the format asked for (report.h), and
 * what their writers share: the input names, the top cause, the memory
 * bar.
 */
#include <string.h>

#include "account.h"
#include "facts.h"
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

		/* A report that follows from the first failure does not
		 * give the run's cause. */
		if (ev->fatal && ev->secondary == NULL && ev->ncauses > 0)
			return ev->causes[0].rule;
	}
	for (i = 0; i < n; i++) {
		od_event *ev = od_events_get(set, i);

		if (ev->secondary == NULL && ev->ncauses > 0)
			return ev->causes[0].rule;
	}
	return NULL;
}

/* The marks of the bar, by part of the account, and its drawing order:
 * free last, so that the request is drawn against it at the right. */
static const char rp_marks[OD_PART_COUNT] = {
	[OD_PART_OTHER_PROCESSES] = 'o',
	[OD_PART_NON_FRAMEWORK] = 'n',
	[OD_PART_ALLOCATED] = '#',
	[OD_PART_RESERVED_UNALLOCATED] = '+',
	[OD_PART_FREE] = '.',
	[OD_PART_UNACCOUNTED] = '~',
};
static const od_part rp_order[OD_PART_COUNT] = {
	OD_PART_OTHER_PROCESSES, OD_PART_NON_FRAMEWORK, OD_PART_ALLOCATED,
	OD_PART_RESERVED_UNALLOCATED, OD_PART_UNACCOUNTED, OD_PART_FREE,
};

/* The SGR colour of a mark of the bar, "" for none. */
static const char *
rp_mark_color(char mark)
{
	switch (mark) {
	case 'o': return "\033[35m";   /* other processes: magenta */
	case 'n': return "\033[34m";   /* outside the allocator: blue */
	case '#': return "\033[31m";   /* allocated: red */
	case '+': return "\033[33m";   /* reserved, unallocated: yellow */
	case '~': return "\033[2m";    /* unaccounted: dim */
	case '.': return "\033[32m";   /* free: green */
	case '=': return "\033[1;36m"; /* the request: bold cyan */
	default: return "";
	}
}

/* Writes s (marks of the bar), each run of one mark in its colour when
 * color. */
static void
rp_marks_out(FILE *out, const char *s, size_t n, bool color)
{
	size_t i;
	char last = ' ';

	for (i = 0; i < n; i++) {
		if (color && s[i] != last) {
			fputs(last != ' ' && rp_mark_color(last)[0] != '\0' ?
			    "\033[0m" : "", out);
			fputs(rp_mark_color(s[i]), out);
			last = s[i];
		}
		fputc(s[i], out);
	}
	if (color && last != ' ' && rp_mark_color(last)[0] != '\0')
		fputs("\033[0m", out);
}

/* One line of the legend: mark, label, size, and how it was known. */
static void
rp_legend(FILE *out, const char *indent, char mark, const char *label,
    int64_t v, bool known, const char *how, bool color)
{
	char sz[48];

	if (!known) {
		fprintf(out, "%s   %-34s  not in the message\n", indent, label);
		return;
	}
	if (v < 0) {
		od_size_format(-v, sz + 1, sizeof sz - 1);
		sz[0] = '-';
	} else {
		od_size_format(v, sz, sizeof sz);
	}
	fprintf(out, "%s ", indent);
	rp_marks_out(out, &mark, 1, color);
	fprintf(out, " %-34s %14s  %s\n", label, sz, how);
}

bool
rp_bar_parts(const od_event *ev, od_account *a, int64_t *part,
    int64_t *known, int64_t *sum)
{
	int k;

	od_account_of(ev, a);
	if (!a->valid || !(a->part[OD_PART_ALLOCATED].known ||
	    a->part[OD_PART_FREE].known))
		return false;
	*known = 0;
	for (k = 0; k < OD_PART_COUNT; k++) {
		part[k] = a->part[k].known && a->part[k].bytes > 0 ?
		    a->part[k].bytes : 0;
		if (k != OD_PART_UNACCOUNTED)
			*known += part[k];
	}
	/* Without the free figure, what the known parts leave is drawn as
	 * such: the message does not say whose it is, or if it is free. */
	if (!a->part[OD_PART_UNACCOUNTED].known)
		part[OD_PART_UNACCOUNTED] = a->total > *known ?
		    a->total - *known : 0;
	*known += part[OD_PART_UNACCOUNTED];
	/* Inconsistent figures (Windows shared memory) scale to their sum. */
	*sum = *known > a->total ? *known : a->total;
	return *sum > 0;
}

/*
 * The memory account as one bar over the device's capacity, and its
 * legend.  Each part gets its share of the cells by largest remainder,
 * and at least one cell when it is not zero, so that a small free figure
 * still shows; when some figure is missing, what the known parts leave is
 * drawn as unaccounted, never blank.  The request that failed is drawn
 * below on the same scale, from where the free memory starts: what runs
 * past the bar's end did not fit.
 */
void
rp_bar(FILE *out, const od_event *ev, const char *indent, bool color,
    int n)
{
	const od_memory *m = &ev->mem;
	od_account a;
	int64_t part[OD_PART_COUNT], known, sum;
	double want[OD_PART_COUNT];
	int cell[OD_PART_COUNT], used = 0, target, i, k, big, free_at = -1;
	char bar[RP_BAR_WIDTH + 1];

	if (!rp_bar_parts(ev, &a, part, &known, &sum))
		return;
	n = n < RP_BAR_CELLS_MIN ? RP_BAR_CELLS_MIN : n > RP_BAR_WIDTH ?
	    RP_BAR_WIDTH : n;
	target = (int)((double)known / (double)sum * n + 0.5);
	for (i = 0; i < OD_PART_COUNT; i++) {
		k = rp_order[i];
		want[k] = (double)part[k] / (double)sum * n;
		cell[k] = (int)want[k];
		if (cell[k] == 0 && part[k] > 0)
			cell[k] = 1;
		want[k] -= cell[k];
		used += cell[k];
	}
	while (used < target) {
		for (big = 0, k = 1; k < OD_PART_COUNT; k++)
			if (want[k] > want[big])
				big = k;
		cell[big]++;
		want[big] -= 1.0;
		used++;
	}
	while (used > target) {
		for (big = 0, k = 1; k < OD_PART_COUNT; k++)
			if (cell[k] > cell[big])
				big = k;
		cell[big]--;
		used--;
	}
	for (used = 0, i = 0; i < OD_PART_COUNT; i++) {
		k = rp_order[i];
		if (k == OD_PART_FREE && cell[k] > 0)
			free_at = used;
		for (int c = 0; c < cell[k]; c++)
			bar[used++] = rp_marks[k];
	}
	while (used < n)
		bar[used++] = ' ';
	bar[used] = '\0';
	fprintf(out, "%s[", indent);
	rp_marks_out(out, bar, (size_t)n, color);
	fputs("]\n", out);
	if (m->requested > 0) {
		int w = (int)((double)m->requested / (double)sum * n +
		    0.5), at = free_at >= 0 ? free_at : target, past;

		w = w < 1 ? 1 : w;
		/* A request larger than the free memory runs past it, however
		 * the two round to cells. */
		if (free_at >= 0 && m->requested > part[OD_PART_FREE] &&
		    w <= cell[OD_PART_FREE])
			w = cell[OD_PART_FREE] + 1;
		past = at + w > n ? at + w - n : 0;
		memset(bar, ' ', (size_t)n);
		memset(bar + at, '=', (size_t)(w - past));
		fprintf(out, "%s[", indent);
		rp_marks_out(out, bar, (size_t)n, color);
		fputc(']', out);
		rp_marks_out(out, "==========", (size_t)(past < 10 ? past : 10),
		    color);
		fputs(past > 10 ? ">\n" : "\n", out);
	}
	for (i = 0; i < OD_PART_COUNT; i++) {
		k = rp_order[i];
		/* Unaccounted, when figures are missing, is what the known
		 * parts leave. */
		rp_legend(out, indent, rp_marks[k], k == OD_PART_UNACCOUNTED &&
		    !a.part[k].known && part[k] > 0 ?
		    "free or unaccounted (no free figure)" :
		    od_part_label((od_part)k),
		    a.part[k].known ? a.part[k].bytes : part[k],
		    a.part[k].known || part[k] > 0, a.part[k].known &&
		    !a.part[k].derived ? "printed" : "derived", color);
	}
	if (m->requested >= 0)
		rp_legend(out, indent, '=', "the request that failed",
		    m->requested, true, "printed", color);
	if (a.shortfall >= 0)
		rp_legend(out, indent, ' ', "shortfall (request - free)",
		    a.shortfall, true, "derived", color);
	for (i = 0; i < a.nnotes; i++) {
		fprintf(out, "%s   ", indent);
		od_escape_text(out, a.notes[i], strlen(a.notes[i]), "");
		fputc('\n', out);
	}
}

void
rp_explains(FILE *out, const char *indent, const od_cause *c,
    const od_event *ev)
{
	char held[48], expl[48], sf[48];
	od_account a;

	if (c->cause_bytes < 0)
		return;
	od_account_of(ev, &a);
	od_size_format(c->cause_bytes, held, sizeof held);
	if (c->explains_bytes < 0 || a.shortfall < 0) {
		fprintf(out, "%saccounts for %s (the shortfall is not known)\n",
		    indent, held);
		return;
	}
	od_size_format(c->explains_bytes, expl, sizeof expl);
	od_size_format(a.shortfall, sf, sizeof sf);
	if (c->explains_bytes == 0)
		fprintf(out, "%saccounts for none of the %s shortfall\n", indent,
		    sf);
	else if (c->explains_bytes == a.shortfall)
		fprintf(out, "%saccounts for %s: all of the %s shortfall\n",
		    indent, held, sf);
	else
		fprintf(out, "%saccounts for %s: %s of the %s shortfall\n",
		    indent, held, expl, sf);
}

bool
od_report_write(FILE *out, const od_report_opts *opts, const od_input *inputs,
    int ninputs, od_events *set)
{
	if (opts->format == OD_FORMAT_JSON)
		return rp_json(out, opts, inputs, ninputs, set);
	if (opts->format == OD_FORMAT_GITHUB)
		return rp_github(out, opts, inputs, ninputs, set);
	if (opts->format == OD_FORMAT_PROMETHEUS)
		return rp_prometheus(out, opts, inputs, ninputs, set);
	if (opts->format == OD_FORMAT_HTML)
		return rp_html(out, opts, inputs, ninputs, set);
	if (opts->format == OD_FORMAT_MARKDOWN)
		rp_markdown(out, opts, inputs, ninputs, set);
	else if (opts->format == OD_FORMAT_JSONL) {
		size_t i;

		/* Out of memory: false, as for the JSON report, for the
		 * caller to say (the library prints nothing). */
		for (i = 0; i < od_events_count(set); i++)
			if (!od_report_jsonl_event(out, inputs,
			    od_events_get(set, i)))
				return false;
	} else
		return rp_text(out, opts, inputs, ninputs, set);
	return true;
}

const char *
rp_row_name(const od_summary_row *r)
{
	return strcmp(r->name, "-") == 0 ? "(standard input)" : r->name;
}

void
rp_aftermath(const od_event *ev, char *after, char *root, size_t cap)
{
	const od_aftermath *a = &ev->after;
	char wd[160] = "", st[96] = "";

	after[0] = root[0] = '\0';
	if (a->watchdog > 0) {
		int n = snprintf(wd, sizeof wd, "%d NCCL watchdog line%s (the "
		    "first", a->watchdog, a->watchdog == 1 ? "" : "s");

		if (n > 0 && a->watchdog_rank >= 0)
			n += snprintf(wd + n, sizeof wd - (size_t)n, " from rank %d,",
			    a->watchdog_rank);
		if (n > 0 && (size_t)n < sizeof wd)
			snprintf(wd + n, sizeof wd - (size_t)n, " at line %lld)",
			    (long long)a->watchdog_line);
	}
	if (a->sigterm > 0)
		snprintf(st, sizeof st, "%d \"closing signal SIGTERM\" line%s "
		    "of torchrun", a->sigterm, a->sigterm == 1 ? "" : "s");
	if (wd[0] != '\0' || st[0] != '\0')
		snprintf(after, cap, "%s%s%s followed it: consequences of this "
		    "failure, not failures of their own (while one rank is "
		    "down, the others wait in their next collective until the "
		    "NCCL watchdog ends them, and torchrun stops the ranks "
		    "still running)", wd, wd[0] != '\0' &&
		    st[0] != '\0' ? " and " : "", st);
	if (a->root_cause_rank < 0)
		return;
	if (ev->rank < 0)
		snprintf(root, cap, "torchrun's ChildFailedError table (line "
		    "%lld) names rank %d as its root cause: the first exit "
		    "torchrun saw, which need not be the first failure; this "
		    "report names no rank", (long long)a->root_cause_line,
		    a->root_cause_rank);
	else if (ev->rank == a->root_cause_rank)
		snprintf(root, cap, "torchrun's ChildFailedError table (line "
		    "%lld) names rank %d as its root cause, the rank of this "
		    "failure", (long long)a->root_cause_line, a->root_cause_rank);
	else
		snprintf(root, cap, "torchrun's ChildFailedError table (line "
		    "%lld) names rank %d as its root cause, not rank %d, which "
		    "failed first in log order: the table's root cause is the "
		    "first exit torchrun saw", (long long)a->root_cause_line,
		    a->root_cause_rank, ev->rank);
}

const char *
rp_events_noun(od_events *set)
{
	size_t i, n = od_events_count(set);

	for (i = 0; i < n; i++)
		if (od_events_get(set, i)->fatal)
			return "event";
	return n > 0 ? "warning" : "event";
}

const od_event *
rp_first_failure(od_events *set, size_t *index)
{
	size_t i, n = od_events_count(set);

	for (i = 0; i < n; i++) {
		const od_event *ev = od_events_get(set, i);

		if (ev->first_failure) {
			if (index != NULL)
				*index = i;
			return ev;
		}
	}
	return NULL;
}

const char *
rp_confidence_color(od_confidence c)
{
	return c == OD_CONF_HIGH ? "\033[32m" : c == OD_CONF_MEDIUM ?
	    "\033[33m" : "\033[31m";
}

/* One figure line into rows[*n]. */
static void
rp_figure_add(rp_figure *rows, int *n, const char *label, int depth,
    int64_t bytes, bool always)
{
	rp_figure *f = &rows[(*n)++];

	snprintf(f->label, sizeof f->label, "%s", label);
	f->depth = depth;
	f->bytes = bytes;
	f->always = always;
}

int
rp_snapshot_figures(const od_event *ev, rp_figure *rows)
{
	const od_snapshot_facts *s = &ev->snap;
	int n = 0;

	if (!s->present)
		return 0;
	if (s->request >= 0)
		rp_figure_add(rows, &n, s->from_trace ? "requested (oom entry)" :
		    "requested (message)", 0, s->request, false);
	if (s->device_free >= 0)
		rp_figure_add(rows, &n, s->from_trace ?
		    "device free (oom entry)" : "device free (message)", 0,
		    s->device_free, false);
	rp_figure_add(rows, &n, "reserved in segments", 0, s->reserved, false);
	rp_figure_add(rows, &n, "allocated blocks", 1, s->allocated, false);
	rp_figure_add(rows, &n, "free blocks", 1, s->inactive, false);
	rp_figure_add(rows, &n, "in segments in use", 2, s->split_free, false);
	rp_figure_add(rows, &n, "largest it could take", 2, s->largest_free,
	    false);
	if (s->pending_blocks > 0)
		rp_figure_add(rows, &n, "freed, awaiting streams", 1,
		    s->pending_free, false);
	rp_figure_add(rows, &n, "expandable segments' offer", 0,
	    s->expandable_offer, false);
	return n;
}

int
rp_figures(const od_event *ev, rp_figure *rows)
{
	const od_memory *m = &ev->mem;
	int i, n = 0, self = fc_self(ev);
	bool pytorch = ev->kind == OD_KIND_CUDA_CACHING_ALLOCATOR ||
	    ev->kind == OD_KIND_HIP || ev->kind == OD_KIND_XPU ||
	    ev->kind == OD_KIND_NPU;
	/* MPS prints no device size: its total is the allocator's "max
	 * allowed" (MPSAllocator.mm m_max_total_allowed_size), which is also
	 * its limit, shown once. */
	bool mps = ev->kind == OD_KIND_MPS && m->total >= 0 &&
	    m->total == m->allowed;

	rp_figure_add(rows, &n, "requested", 0, m->requested, false);
	rp_figure_add(rows, &n, mps ? "max allowed (MPS)" : "total capacity", 0,
	    m->total, false);
	rp_figure_add(rows, &n, "free", 0, m->free, false);
	rp_figure_add(rows, &n, "this process (NVML)", 0, m->process_in_use,
	    false);
	rp_figure_add(rows, &n, "reserved by PyTorch", 0, m->reserved, false);
	rp_figure_add(rows, &n, "allocated", 1, m->allocated, false);
	rp_figure_add(rows, &n, "reserved, unallocated", 1,
	    m->reserved_unallocated, false);
	rp_figure_add(rows, &n, "in private pools", 1, m->private_pools,
	    false);
	rp_figure_add(rows, &n, "non-PyTorch (context etc.)", 0,
	    m->non_framework, false);
	/* MLX's Metal limit is that of one buffer (recognisers.yaml,
	 * mlx-metal-max-buffer-length), not of the device's memory. */
	rp_figure_add(rows, &n, pytorch ? "allowed (memory fraction)" :
	    ev->kind == OD_KIND_METAL ? "max buffer size (Metal)" : "limit",
	    0, mps ? -1 : m->allowed, false);
	rp_figure_add(rows, &n, "peak in use", 0, m->peak, false);
	rp_figure_add(rows, &n, "host: virtual memory", 0, ev->host.total_vm,
	    false);
	rp_figure_add(rows, &n, "host: anonymous RSS", 0, ev->host.anon_rss,
	    false);
	rp_figure_add(rows, &n, "host: file RSS", 0, ev->host.file_rss, false);
	rp_figure_add(rows, &n, "host: shared memory RSS", 0,
	    ev->host.shmem_rss, false);
	rp_figure_add(rows, &n, "host: usage", 0, ev->host.usage, false);
	rp_figure_add(rows, &n, "host: limit", 0, ev->host.limit, false);
	for (i = 0; i < m->nprocs && i < OD_PROCS_MAX; i++) {
		char label[48];

		snprintf(label, sizeof label, "process %lld%s",
		    (long long)m->procs[i].pid, i == self ? " (this one)" : "");
		rp_figure_add(rows, &n, label, 0, m->procs[i].bytes, true);
	}
	return n;
}
