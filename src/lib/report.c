/*
 * report.c: the text report for terminals and the JSON report for
 * automation (schema oomdoc.report/1, DESIGN.md section 4).
 *
 * Everything taken from the log is escaped on the way out: the text report
 * never passes a control character or an invalid UTF-8 byte to the
 * terminal (an ESC from a log could otherwise recolour it, retitle it or
 * plant an OSC 8 link), and every JSON string is valid UTF-8.
 */
#include <string.h>

#include "core.h"

#define RP_BAR_WIDTH 50

/* Writes s as a JSON string, quotes included. */
void
od_escape_json(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', out);
	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", out);
		else if (cp == '\t')
			fputs("\\t", out);
		else if (cp == '\r')
			fputs("\\r", out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
		    cp == 0x2028 || cp == 0x2029)
			fprintf(out, "\\u%04x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

static void
rp_json_cstr(FILE *out, const char *s)
{
	if (s == NULL || s[0] == '\0')
		fputs("null", out);
	else
		od_escape_json(out, s, strlen(s));
}

/* Writes log text for a terminal: controls and bad bytes as \xNN, a
 * newline followed by indent. */
void
od_escape_text(FILE *out, const char *s, size_t n, const char *indent)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fprintf(out, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if (cp == '\n')
			fprintf(out, "\n%s", indent);
		else if (cp == '\t')
			fputc(' ', out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

static void
rp_json_num(FILE *out, int64_t v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%lld", (long long)v);
}

static const char *
rp_input_name(const od_input *in)
{
	return strcmp(in->name, "-") == 0 ? "(standard input)" : in->name;
}

static void
rp_json_int(FILE *out, const char *name, int64_t v)
{
	fprintf(out, ", \"%s\": ", name);
	rp_json_num(out, v);
}

/* ', "field": {"name": "value"}' for a fix's env line or config key. */
static void
rp_json_pair(FILE *out, const char *field, const char *name,
    const char *value)
{
	if (name == NULL)
		return;
	fprintf(out, ", \"%s\": {", field);
	rp_json_cstr(out, name);
	fputs(": ", out);
	rp_json_cstr(out, value);
	fputc('}', out);
}

static void
rp_json_cause(FILE *out, const od_cause *c, bool first)
{
	int i;

	fputs(first ? "\n        {\"rule\": " : ",\n        {\"rule\": ", out);
	rp_json_cstr(out, c->rule);
	fputs(", \"title\": ", out);
	rp_json_cstr(out, c->title);
	fprintf(out, ", \"score\": %.2f, \"confidence\": \"%s\",\n"
	    "         \"explanation\": ", c->score,
	    od_confidence_name(c->confidence));
	rp_json_cstr(out, c->explanation);
	fputs(",\n         \"evidence\": [", out);
	for (i = 0; i < c->nevidence; i++) {
		if (i)
			fputs(", ", out);
		rp_json_cstr(out, c->evidence[i]);
	}
	fputs("],\n         \"fixes\": [", out);
	for (i = 0; i < c->nfixes; i++) {
		const od_fix *f = &c->fixes[i];

		fputs(i ? ",\n                   {\"id\": " : "{\"id\": ", out);
		rp_json_cstr(out, f->id);
		fputs(", \"text\": ", out);
		rp_json_cstr(out, f->text);
		rp_json_pair(out, "env", f->env_name, f->env_value);
		if (f->code != NULL) {
			fputs(", \"code\": ", out);
			rp_json_cstr(out, f->code);
		}
		rp_json_pair(out, "config", f->config_key, f->config_value);
		fputc('}', out);
	}
	fputs("],\n         \"confirm_with\": ", out);
	rp_json_cstr(out, c->probe);
	fputc('}', out);
}

/* The context facts: where the job was and what it ran with. */
static void
rp_json_context(FILE *out, const od_event *ev)
{
	const od_logctx *c = &ev->ctx;
	int i;

	fputs(",\n                  \"hint\": ", out);
	rp_json_cstr(out, od_hint_name(ev->hint));
	rp_json_int(out, "step", ev->step);
	fputs(", \"phase\": ", out);
	rp_json_cstr(out, ev->phase);
	fputs(",\n                  \"frames\": [", out);
	for (i = 0; i < ev->nframes; i++) {
		const od_frame *f = &ev->frames[i];

		fputs(i ? ",\n                             {\"file\": " :
		    "{\"file\": ", out);
		rp_json_cstr(out, f->file);
		fprintf(out, ", \"line\": %lld, \"function\": ",
		    (long long)f->line);
		rp_json_cstr(out, f->func);
		fputs(", \"code\": ", out);
		rp_json_cstr(out, f->code);
		fprintf(out, ", \"user\": %s}", f->user ? "true" : "false");
	}
	fputs("],\n                  \"alloc_conf\": ", out);
	rp_json_cstr(out, c->alloc_conf);
	fputs(", \"xla_conf\": ", out);
	rp_json_cstr(out, c->xla_conf);
	fputs(", \"tf_allocator\": ", out);
	rp_json_cstr(out, c->tf_allocator);
	fputs(",\n                  ", out);
	fputs("\"precision\": ", out);
	rp_json_cstr(out, c->precision);
	fputs(", \"grad_checkpointing\": ", out);
	fputs(c->grad_ckpt < 0 ? "null" : c->grad_ckpt ? "true" : "false", out);
	rp_json_int(out, "batch_size", c->batch_size);
	rp_json_int(out, "accum_steps", c->accum_steps);
	rp_json_int(out, "seq_len", c->seq_len);
	fputs(",\n                  \"memory_readings\": ", out);
	if (c->nreadings == 0) {
		fputs("null", out);
	} else {
		fprintf(out, "{\"count\": %d", c->nreadings);
		rp_json_int(out, "first_bytes", c->mem_first);
		rp_json_int(out, "last_bytes", c->mem_last);
		rp_json_int(out, "max_bytes", c->mem_max);
		fputc('}', out);
	}
}

static void
rp_json_event(FILE *out, const od_event *ev, const od_input *inputs)
{
	const od_memory *m = &ev->mem;
	int i;

	fputs("    {\n      \"kind\": ", out);
	rp_json_cstr(out, od_kind_name(ev->kind));
	fputs(",\n      \"framework\": ", out);
	rp_json_cstr(out, ev->framework);
	fputs(",\n      \"format\": ", out);
	rp_json_cstr(out, od_layout_name(ev->layout));
	fprintf(out, ",\n      \"fatal\": %s,\n      \"confidence\": \"%s\",\n"
	    "      \"confirm_with\": ", ev->fatal ? "true" : "false",
	    od_confidence_name(ev->confidence));
	rp_json_cstr(out, ev->verify_hint);
	fputs(",\n      \"input\": ", out);
	rp_json_cstr(out, rp_input_name(&inputs[ev->input]));
	fprintf(out, ",\n      \"line\": %llu,\n      \"end_line\": %llu,\n",
	    (unsigned long long)ev->line, (unsigned long long)ev->end_line);
	fputs("      \"rank\": ", out);
	rp_json_num(out, ev->rank);
	fputs(",\n      \"ranks\": [", out);
	for (i = 0; i < ev->nranks; i++)
		fprintf(out, "%s%d", i ? ", " : "", ev->ranks[i]);
	fputs("],\n      \"device\": ", out);
	rp_json_num(out, ev->device);
	fputs(",\n      \"timestamp\": ", out);
	rp_json_cstr(out, ev->timestamp);
	fprintf(out, ",\n      \"occurrences\": %llu,\n      \"message\": ",
	    (unsigned long long)ev->occurrences);
	od_escape_json(out, ev->message != NULL ? ev->message : "",
	    ev->message_len);
	fprintf(out, ",\n      \"message_truncated\": %s,\n",
	    ev->message_cut ? "true" : "false");
	fputs("      \"memory\": {\n", out);
#define RP_FIELD(name, v) do { \
	fputs("        \"" name "\": ", out); \
	rp_json_num(out, (v)); \
	fputs(",\n", out); \
} while (0)
	RP_FIELD("requested_bytes", m->requested);
	RP_FIELD("total_bytes", m->total);
	RP_FIELD("free_bytes", m->free);
	RP_FIELD("allocated_bytes", m->allocated);
	RP_FIELD("reserved_bytes", m->reserved);
	RP_FIELD("reserved_unallocated_bytes", m->reserved_unallocated);
	RP_FIELD("process_in_use_bytes", m->process_in_use);
	RP_FIELD("non_framework_bytes", m->non_framework);
	RP_FIELD("allowed_bytes", m->allowed);
	RP_FIELD("private_pools_bytes", m->private_pools);
	RP_FIELD("peak_bytes", m->peak);
	fputs("        \"other_processes\": [", out);
	for (i = 0; i < m->nprocs; i++) {
		fprintf(out, "%s{\"pid\": %lld, \"bytes\": ", i ? ", " : "",
		    (long long)m->procs[i].pid);
		rp_json_num(out, m->procs[i].bytes);
		fputc('}', out);
	}
	fprintf(out, "],\n        \"other_processes_omitted\": %d\n      },\n",
	    m->procs_dropped);
	fputs("      \"host\": {\n        \"pid\": ", out);
	rp_json_num(out, ev->host.pid);
	fputs(",\n        \"process\": ", out);
	rp_json_cstr(out, ev->host.process);
	fputs(",\n", out);
	RP_FIELD("total_vm_bytes", ev->host.total_vm);
	RP_FIELD("anon_rss_bytes", ev->host.anon_rss);
	RP_FIELD("file_rss_bytes", ev->host.file_rss);
	RP_FIELD("shmem_rss_bytes", ev->host.shmem_rss);
	RP_FIELD("limit_bytes", ev->host.limit);
	RP_FIELD("usage_bytes", ev->host.usage);
#undef RP_FIELD
	fputs("        \"exit_code\": ", out);
	if (ev->host.has_exit)
		fprintf(out, "%lld", (long long)ev->host.exit_code);
	else
		fputs("null", out);
	fputs(",\n        \"signal\": ", out);
	rp_json_cstr(out, ev->host.signal);
	fputs("\n      },\n", out);
	fputs("      \"context\": {\"exception\": ", out);
	rp_json_cstr(out, ev->exception);
	fputs(", \"error\": ", out);
	rp_json_cstr(out, ev->error);
	fputs(", \"tensor_shape\": ", out);
	rp_json_cstr(out, ev->tensor_shape);
	fputs(", \"dtype\": ", out);
	rp_json_cstr(out, ev->dtype);
	fputs(", \"allocator\": ", out);
	rp_json_cstr(out, ev->allocator);
	rp_json_context(out, ev);
	fputs("},\n      \"causes\": [", out);
	for (i = 0; i < ev->ncauses; i++)
		rp_json_cause(out, &ev->causes[i], i == 0);
	fputs(ev->ncauses ? "\n      ],\n      \"fingerprint\": " :
	    "],\n      \"fingerprint\": ", out);
	rp_json_cstr(out, ev->fingerprint);
	fputs("\n    }", out);
}

/* The top cause of the report: that of its first fatal event, else of
 * its first event. */
static const char *
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

static void
rp_json(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);
	int k;

	fputs("{\n  \"schema\": \"oomdoc.report/1\",\n", out);
	fputs("  \"oomdoc_version\": \"" OD_VERSION "\",\n  \"inputs\": [", out);
	for (k = 0; k < ninputs; k++) {
		fputs(k ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		rp_json_cstr(out, rp_input_name(&inputs[k]));
		fprintf(out, ", \"bytes\": %llu, \"lines\": %llu, "
		    "\"compression\": \"%s\", \"complete\": %s}",
		    (unsigned long long)inputs[k].bytes,
		    (unsigned long long)inputs[k].lines, inputs[k].compression,
		    inputs[k].failed ? "false" : "true");
	}
	fputs(ninputs ? "\n  ],\n  \"events\": [" : "],\n  \"events\": [", out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", out);
		rp_json_event(out, od_events_get(set, i), inputs);
	}
	fputs(n ? "\n  ],\n" : "],\n", out);
	fprintf(out, "  \"summary\": {\"events\": %zu, \"events_omitted\": "
	    "%llu, \"top_cause\": ", n,
	    (unsigned long long)od_events_dropped(set));
	rp_json_cstr(out, rp_top_cause(set));
	fputs(", \"fingerprint\": ", out);
	rp_json_cstr(out, o->fingerprint);
	fputs("}\n}\n", out);
}

/*
 * The memory picture as one bar over the device's capacity.  Each part
 * gets its share of the cells by largest remainder, and at least one cell
 * when it is not zero, so that a small free figure still shows.  Parts the
 * message does not give are left blank.  The request that failed is drawn
 * below on the same scale.
 */
static void
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

static void
rp_text_size(FILE *out, const char *label, int64_t v)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(out, "      %-28s %14s  (%lld bytes)\n", label, sz,
	    (long long)v);
}

/* A labelled line of log text, when there is any. */
static void
rp_text_field(FILE *out, const char *label, const char *v)
{
	if (v == NULL || v[0] == '\0')
		return;
	fprintf(out, "    %-10s ", label);
	od_escape_text(out, v, strlen(v), "");
	fputc('\n', out);
}

/* Whether the event has any figure to show. */
static bool
rp_has_figures(const od_event *ev)
{
	const od_memory *m = &ev->mem;
	const od_host *h = &ev->host;

	return m->requested >= 0 || m->total >= 0 || m->free >= 0 ||
	    m->allocated >= 0 || m->reserved >= 0 || m->process_in_use >= 0 ||
	    m->allowed >= 0 || m->peak >= 0 || m->non_framework >= 0 ||
	    m->nprocs > 0 || h->total_vm >= 0 || h->anon_rss >= 0 ||
	    h->usage >= 0 || h->limit >= 0;
}

/* The causes and fixes of an event, for a terminal. */
static void
rp_text_causes(FILE *out, const od_report_opts *o, const od_event *ev)
{
	const char *bold = o->color ? "\033[1m" : "";
	const char *off = o->color ? "\033[0m" : "";
	int i, k;

	if (ev->ncauses == 0) {
		fputs("    causes     no rule matched\n", out);
		return;
	}
	fputs("    likely causes:\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fprintf(out, "    %d. %s%s%s (%s, score %.2f): ", i + 1, bold,
		    c->rule, off, od_confidence_name(c->confidence), c->score);
		od_escape_text(out, c->title, strlen(c->title), "");
		fputc('\n', out);
		if (c->explanation != NULL) {
			fputs("       ", out);
			od_escape_text(out, c->explanation, strlen(c->explanation),
			    "       ");
			fputc('\n', out);
		}
		for (k = 0; k < c->nevidence; k++) {
			fputs("       evidence: ", out);
			od_escape_text(out, c->evidence[k], strlen(c->evidence[k]),
			    "       ");
			fputc('\n', out);
		}
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];

			fputs("       fix: ", out);
			od_escape_text(out, f->text, strlen(f->text), "         ");
			fputc('\n', out);
			if (f->env_name != NULL) {
				fputs("            export ", out);
				od_escape_text(out, f->env_name, strlen(f->env_name),
				    "");
				fputc('=', out);
				od_escape_text(out, f->env_value,
				    strlen(f->env_value), "");
				fputc('\n', out);
			}
			if (f->code != NULL) {
				fputs("            ", out);
				od_escape_text(out, f->code, strlen(f->code),
				    "            ");
				fputc('\n', out);
			}
			if (f->config_key != NULL) {
				fputs("            ", out);
				od_escape_text(out, f->config_key,
				    strlen(f->config_key), "");
				fputs(": ", out);
				od_escape_text(out, f->config_value,
				    strlen(f->config_value), "");
				fputc('\n', out);
			}
		}
		if (c->probe != NULL)
			fprintf(out, "       live probe that can confirm it: %s\n",
			    c->probe);
	}
	if (ev->fingerprint[0] != '\0')
		fprintf(out, "    fingerprint %s\n", ev->fingerprint);
}

static void
rp_text_event(FILE *out, const od_report_opts *o, size_t n, const od_event *ev,
    const od_input *inputs)
{
	const od_memory *m = &ev->mem;
	const char *bold = o->color ? "\033[1m" : "";
	const char *off = o->color ? "\033[0m" : "";
	int i;

	fprintf(out, "%s#%zu  %s%s%s\n", bold, n, od_kind_title(ev->kind),
	    ev->fatal ? "" : " (warning, not the failure itself)", off);
	fputs("    where      ", out);
	od_escape_text(out, rp_input_name(&inputs[ev->input]),
	    strlen(rp_input_name(&inputs[ev->input])), "");
	fprintf(out, ":%llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, "-%llu", (unsigned long long)ev->end_line);
	if (ev->rank >= 0)
		fprintf(out, ", rank %d", ev->rank);
	if (ev->device >= 0)
		fprintf(out, ", GPU %d", ev->device);
	fputc('\n', out);
	if (ev->nranks > 1 || ev->occurrences > 1) {
		fprintf(out, "    seen       %llu time%s", (unsigned long long)
		    ev->occurrences, ev->occurrences == 1 ? "" : "s");
		if (ev->nranks > 0) {
			fputs(", ranks ", out);
			for (i = 0; i < ev->nranks; i++)
				fprintf(out, "%s%d", i ? "," : "", ev->ranks[i]);
			if (ev->ranks_dropped)
				fputs(",...", out);
		}
		fputc('\n', out);
	}
	if (ev->timestamp[0] != '\0') {
		fputs("    time       ", out);
		od_escape_text(out, ev->timestamp, strlen(ev->timestamp), "");
		fputc('\n', out);
	}
	rp_text_field(out, "exception", ev->exception);
	rp_text_field(out, "error", ev->error);
	rp_text_field(out, "tensor", ev->tensor_shape);
	rp_text_field(out, "dtype", ev->dtype);
	rp_text_field(out, "allocator", ev->allocator);
	if (ev->layout != OD_LAYOUT_OTHER_STACK)
		fprintf(out, "    format     %s\n", od_layout_name(ev->layout));
	if (ev->confidence != OD_CONF_HIGH) {
		fprintf(out, "    confidence %s", od_confidence_name(
		    ev->confidence));
		if (ev->verify_hint != NULL)
			fprintf(out, ": to confirm, look for %s",
			    ev->verify_hint);
		fputc('\n', out);
	}
	fputs("    message    ", out);
	od_escape_text(out, ev->message != NULL ? ev->message : "",
	    ev->message_len, "               ");
	fputs(ev->message_cut ? " [...]\n" : "\n", out);
	if (ev->host.pid >= 0 || ev->host.process[0] != '\0' ||
	    ev->host.has_exit || ev->host.signal[0] != '\0') {
		fputs("    process   ", out);
		if (ev->host.pid >= 0)
			fprintf(out, " pid %lld", (long long)ev->host.pid);
		if (ev->host.process[0] != '\0') {
			fputs(" (", out);
			od_escape_text(out, ev->host.process,
			    strlen(ev->host.process), "");
			fputc(')', out);
		}
		if (ev->host.has_exit)
			fprintf(out, " exit code %lld",
			    (long long)ev->host.exit_code);
		if (ev->host.signal[0] != '\0') {
			fputs(" signal ", out);
			od_escape_text(out, ev->host.signal,
			    strlen(ev->host.signal), "");
		}
		fputc('\n', out);
	}
	if (!rp_has_figures(ev)) {
		fputs("    memory     no figures in the message\n", out);
		rp_text_causes(out, o, ev);
		fputc('\n', out);
		return;
	}
	fputs("    memory at the failure:\n", out);
	rp_text_size(out, "requested", m->requested);
	rp_text_size(out, "total capacity", m->total);
	rp_text_size(out, "free", m->free);
	rp_text_size(out, "this process (NVML)", m->process_in_use);
	rp_text_size(out, "reserved by PyTorch", m->reserved);
	rp_text_size(out, "  allocated", m->allocated);
	rp_text_size(out, "  reserved, unallocated", m->reserved_unallocated);
	rp_text_size(out, "  in private pools", m->private_pools);
	rp_text_size(out, "non-PyTorch (context etc.)", m->non_framework);
	rp_text_size(out, ev->kind == OD_KIND_CUDA_CACHING_ALLOCATOR ||
	    ev->kind == OD_KIND_HIP || ev->kind == OD_KIND_XPU ?
	    "allowed (memory fraction)" : "limit", m->allowed);
	rp_text_size(out, "peak in use", m->peak);
	rp_text_size(out, "host: virtual memory", ev->host.total_vm);
	rp_text_size(out, "host: anonymous RSS", ev->host.anon_rss);
	rp_text_size(out, "host: file RSS", ev->host.file_rss);
	rp_text_size(out, "host: shared memory RSS", ev->host.shmem_rss);
	rp_text_size(out, "host: usage", ev->host.usage);
	rp_text_size(out, "host: limit", ev->host.limit);
	for (i = 0; i < m->nprocs; i++) {
		char label[48];

		snprintf(label, sizeof label, "process %lld",
		    (long long)m->procs[i].pid);
		if (m->procs[i].bytes >= 0)
			rp_text_size(out, label, m->procs[i].bytes);
		else
			fprintf(out, "      %-28s %14s\n", label, "unknown");
	}
	if (m->procs_dropped > 0)
		fprintf(out, "      (%d more processes not listed)\n",
		    m->procs_dropped);
	rp_bar(out, m, "    ");
	rp_text_causes(out, o, ev);
	fputc('\n', out);
}

static void
rp_text(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);
	uint64_t dropped = od_events_dropped(set);

	if (n == 0) {
		fputs("oomdoc: no out-of-memory failure found", out);
	} else {
		fprintf(out, "oomdoc: %zu out-of-memory event%s found", n,
		    n == 1 ? "" : "s");
	}
	if (ninputs == 1) {
		fputs(" in ", out);
		od_escape_text(out, rp_input_name(&inputs[0]),
		    strlen(rp_input_name(&inputs[0])), "");
	} else {
		fprintf(out, " in %d inputs", ninputs);
	}
	fputs(n == 0 ? "\n" : "\n\n", out);
	for (i = 0; i < n; i++)
		rp_text_event(out, o, i + 1, od_events_get(set, i), inputs);
	if (dropped > 0)
		fprintf(out, "%llu more events were not kept (the limit is %d "
		    "distinct events)\n", (unsigned long long)dropped,
		    OD_EVENTS_MAX);
}

/*
 * Markdown for tickets.  Everything that comes from the log or from a rule
 * goes out either escaped (each character that can start emphasis, a
 * link, an HTML tag or a table cell gets a backslash; an '@', a '.' before
 * a letter and a ':' before a letter or '/' get an invisible word joiner,
 * so that no mention or autolink can form) or
 * inside a fenced block longer than any backtick run in it, where nothing
 * is interpreted.
 */
static bool
rp_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void
od_escape_markdown(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fputs("\uFFFD", out);
			i++;
			continue;
		}
		if (cp == '\n' || cp == '\r' || cp == '\t')
			fputc(' ', out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else if (cp == '@' || (cp == '.' && i + 1 < n &&
		    rp_alpha(p[i + 1])) || (cp == ':' && i + 1 < n &&
		    (rp_alpha(p[i + 1]) || p[i + 1] == '/')))
			/*
			 * A word joiner after it, invisible: no @mention,
			 * autolink (www.host, host.py, http:) or e-mail
			 * address can form, whatever the renderer.
			 */
			fprintf(out, "%c\u2060", (char)cp);
		else if (cp < 0x80 && strchr("\\`*_{}[]()#+-!|<>&~:", (int)cp) !=
		    NULL)
			fprintf(out, "\\%c", (char)cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

static void
rp_md_cstr(FILE *out, const char *s)
{
	od_escape_markdown(out, s, strlen(s));
}

/* A fenced block holding s verbatim (controls escaped). */
static void
rp_md_fence(FILE *out, const char *info, const char *s, size_t n)
{
	size_t run = 0, longest = 0, i;
	int k, fence;

	for (i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fence = longest >= 3 ? (int)longest + 1 : 3;
	for (k = 0; k < fence; k++)
		fputc('`', out);
	fprintf(out, "%s\n", info);
	od_escape_text(out, s, n, "");
	fputc('\n', out);
	for (k = 0; k < fence; k++)
		fputc('`', out);
	fputs("\n\n", out);
}

static void
rp_md_size_row(FILE *out, const char *label, int64_t v)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(out, "| %s | %s (%lld bytes) |\n", label, sz, (long long)v);
}

static void
rp_md_event(FILE *out, size_t n, const od_event *ev, const od_input *inputs)
{
	const od_memory *m = &ev->mem;
	const char *name = rp_input_name(&inputs[ev->input]);
	int i, k;

	fprintf(out, "### %zu. ", n);
	rp_md_cstr(out, od_kind_title(ev->kind));
	fputs(ev->fatal ? "\n\n" : " (warning)\n\n", out);
	fputs("| | |\n|---|---|\n| where | ", out);
	rp_md_cstr(out, name);
	fprintf(out, " line %llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, "\\-%llu", (unsigned long long)ev->end_line);
	fputs(" |\n", out);
	fprintf(out, "| kind | %s, confidence %s |\n", od_kind_name(ev->kind),
	    od_confidence_name(ev->confidence));
	if (ev->rank >= 0) {
		fprintf(out, "| rank | %d", ev->rank);
		if (ev->nranks > 1) {
			fputs(" (printed by ranks ", out);
			for (i = 0; i < ev->nranks; i++)
				fprintf(out, "%s%d", i ? ", " : "", ev->ranks[i]);
			fputc(')', out);
		}
		fputs(" |\n", out);
	}
	if (ev->device >= 0)
		fprintf(out, "| GPU | %d |\n", ev->device);
	if (ev->exception[0] != '\0') {
		fputs("| exception | ", out);
		rp_md_cstr(out, ev->exception);
		fputs(" |\n", out);
	}
	if (ev->step >= 0)
		fprintf(out, "| step | %lld |\n", (long long)ev->step);
	if (ev->phase[0] != '\0')
		fprintf(out, "| phase | %s |\n", ev->phase);
	rp_md_size_row(out, "requested", m->requested);
	rp_md_size_row(out, "total capacity", m->total);
	rp_md_size_row(out, "free", m->free);
	rp_md_size_row(out, "this process", m->process_in_use);
	rp_md_size_row(out, "reserved by PyTorch", m->reserved);
	rp_md_size_row(out, "allocated", m->allocated);
	rp_md_size_row(out, "reserved, unallocated", m->reserved_unallocated);
	rp_md_size_row(out, "private pools", m->private_pools);
	rp_md_size_row(out, "non\\-framework", m->non_framework);
	rp_md_size_row(out, "allowed / limit", m->allowed);
	rp_md_size_row(out, "peak in use", m->peak);
	for (i = 0; i < m->nprocs; i++) {
		char label[48];

		snprintf(label, sizeof label, "process %lld",
		    (long long)m->procs[i].pid);
		rp_md_size_row(out, label, m->procs[i].bytes);
	}
	if (ev->host.pid >= 0)
		fprintf(out, "| killed process | %lld |\n",
		    (long long)ev->host.pid);
	rp_md_size_row(out, "host anonymous RSS", ev->host.anon_rss);
	rp_md_size_row(out, "host usage", ev->host.usage);
	rp_md_size_row(out, "host limit", ev->host.limit);
	fputc('\n', out);
	if (m->total > 0 && m->allocated >= 0) {
		fputs("```text\n", out);
		rp_bar(out, m, "");
		fputs("```\n\n", out);
	}
	fputs("Message:\n\n", out);
	rp_md_fence(out, "text", ev->message != NULL ? ev->message : "",
	    ev->message_len);
	if (ev->ncauses == 0)
		fputs("No rule matched this event.\n\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fprintf(out, "%d\\. **", i + 1);
		rp_md_cstr(out, c->rule);
		fprintf(out, "** (confidence %s, score %.2f): ",
		    od_confidence_name(c->confidence), c->score);
		rp_md_cstr(out, c->title);
		fputs("\n\n", out);
		if (c->explanation != NULL) {
			rp_md_cstr(out, c->explanation);
			fputs("\n\n", out);
		}
		for (k = 0; k < c->nevidence; k++) {
			fputs("- evidence: ", out);
			rp_md_cstr(out, c->evidence[k]);
			fputc('\n', out);
		}
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];

			fputs("- fix: ", out);
			rp_md_cstr(out, f->text);
			fputc('\n', out);
		}
		if (c->nevidence > 0 || c->nfixes > 0)
			fputc('\n', out);
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];
			char line[1024];

			if (f->env_name != NULL) {
				snprintf(line, sizeof line, "export %s=%s",
				    f->env_name, f->env_value);
				rp_md_fence(out, "sh", line, strlen(line));
			}
			if (f->code != NULL)
				rp_md_fence(out, "python", f->code,
				    strlen(f->code));
			if (f->config_key != NULL) {
				snprintf(line, sizeof line, "%s: %s",
				    f->config_key, f->config_value);
				rp_md_fence(out, "yaml", line, strlen(line));
			}
		}
	}
	if (ev->fingerprint[0] != '\0')
		fprintf(out, "Fingerprint: `%s`\n\n", ev->fingerprint);
}

static void
rp_markdown(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);
	const char *top = rp_top_cause(set);
	int k;

	fprintf(out, "## oomdoc: %zu out\\-of\\-memory event%s\n\n", n,
	    n == 1 ? "" : "s");
	fputs("**Summary:** ", out);
	if (n == 0) {
		fputs("no out\\-of\\-memory failure found", out);
	} else {
		od_event *ev = od_events_get(set, 0);

		rp_md_cstr(out, od_kind_title(ev->kind));
		if (ev->device >= 0)
			fprintf(out, " on GPU %d", ev->device);
		if (ev->rank >= 0)
			fprintf(out, ", rank %d", ev->rank);
		fputs(", in ", out);
		rp_md_cstr(out, rp_input_name(&inputs[ev->input]));
		fprintf(out, " line %llu", (unsigned long long)ev->line);
		if (top != NULL) {
			fputs("; likely cause: ", out);
			rp_md_cstr(out, top);
		}
	}
	fputs(".", out);
	if (o->fingerprint[0] != '\0')
		fprintf(out, " Fingerprint `%s`.", o->fingerprint);
	fputs("\n\nInputs: ", out);
	for (k = 0; k < ninputs; k++) {
		if (k)
			fputs(", ", out);
		rp_md_cstr(out, rp_input_name(&inputs[k]));
		fprintf(out, " (%llu lines%s)",
		    (unsigned long long)inputs[k].lines,
		    inputs[k].failed ? ", not read to the end" : "");
	}
	fputs("\n\n", out);
	for (i = 0; i < n; i++)
		rp_md_event(out, i + 1, od_events_get(set, i), inputs);
	if (od_events_dropped(set) > 0)
		fprintf(out, "%llu more events were not kept.\n",
		    (unsigned long long)od_events_dropped(set));
}

void
od_report_write(FILE *out, const od_report_opts *opts, const od_input *inputs,
    int ninputs, od_events *set)
{
	if (opts->format == OD_FORMAT_JSON)
		rp_json(out, opts, inputs, ninputs, set);
	else if (opts->format == OD_FORMAT_MARKDOWN)
		rp_markdown(out, opts, inputs, ninputs, set);
	else
		rp_text(out, opts, inputs, ninputs, set);
}
