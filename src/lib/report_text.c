/*
 * report_text.c: the text report, for terminals.  Log text goes out
 * through od_escape_text (escape.c): no control character or invalid
 * UTF-8 byte reaches the terminal.  Colour (bold headings) only when
 * o->color.
 */
#include <stddef.h>
#include <string.h>

#include "context.h"
#include "facts.h"
#include "report.h"
#include "snapshot.h"

static void
rp_text_size(FILE *out, const char *label, int64_t v)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(out, "      %-28s " RP_HANG "%14s  (%lld bytes)\n", label, sz,
	    (long long)v);
}

/* A labelled line of log text, when there is any. */
static void
rp_text_field(FILE *out, const char *label, const char *v)
{
	if (v == NULL || v[0] == '\0')
		return;
	fprintf(out, "    %-10s " RP_HANG, label);
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

int
rp_sparkline(const od_logctx *c, int rank, bool utf8, char *buf, size_t cap)
{
	static const char *const blocks[8] = {
		"\u2581", "\u2582", "\u2583", "\u2584",
		"\u2585", "\u2586", "\u2587", "\u2588",
	};
	static const char ascii[] = "_.-:=+*#";
	cx_series s;
	size_t at = 0;
	int i, cells = 0;

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	cx_series_of(c, rank, &s);
	for (i = 0; i < c->nkept && s.n > 0; i++) {
		const od_reading *r = &c->readings[i];
		int level;
		const char *cell;
		size_t k;

		if (!cx_in_series(&s, r))
			continue;
		/* A flat series is drawn at mid height. */
		level = s.max > s.min ? (int)((r->bytes - s.min) * 7 /
		    (s.max - s.min)) : 3;
		cell = utf8 ? blocks[level] : (char[2]){ ascii[level], '\0' };
		k = strlen(cell);
		if (at + k + 1 > cap)
			break;
		memcpy(buf + at, cell, k);
		at += k;
		cells++;
	}
	buf[at] = '\0';
	return cells;
}

void
rp_text_readings(FILE *out, const od_report_opts *o, const od_event *ev)
{
	const od_logctx *c = &ev->ctx;
	char line[OD_READINGS_MAX * 3 + 1], lo[32], hi[32], a[32], b[32];
	cx_series s;
	int cells;

	cx_series_of(c, ev->rank, &s);
	cells = rp_sparkline(c, ev->rank, o->utf8, line, sizeof line);
	if (cells > 0) {
		od_size_format(s.min, lo, sizeof lo);
		od_size_format(s.max, hi, sizeof hi);
		fprintf(out, "    readings   " RP_HANG "min %s %s max %s  (%d reading%s "
		    "of %s memory", lo, line, hi, s.n, s.n == 1 ? "" : "s",
		    od_reading_name(s.what));
		if (s.rank >= 0)
			fprintf(out, ", rank %d", s.rank);
		if (s.device >= 0)
			fprintf(out, ", GPU %d", s.device);
		if (c->nreadings > s.n)
			fprintf(out, "; %d read in all", c->nreadings);
		fputs(")\n", out);
		od_size_format(s.median, a, sizeof a);
		if (s.have_rate) {
			od_size_format(s.first_step_bytes, lo, sizeof lo);
			od_size_format(s.last_step_bytes, hi, sizeof hi);
			od_size_format((int64_t)(s.per_step < 0 ? -s.per_step :
			    s.per_step), b, sizeof b);
			fprintf(out, "    over time  " RP_HANG "%s at step %lld to %s at "
			    "step %lld: ", lo, (long long)s.first_step, hi,
			    (long long)s.last_step);
			if (s.per_step > -1 && s.per_step < 1)
				fputs("no change per step", out);
			else
				fprintf(out, "%s%s per step", s.per_step < 0 ?
				    "-" : "+", b);
			fprintf(out, "; median %s", a);
			if (ev->step >= 0)
				fprintf(out, "; failed at step %lld",
				    (long long)ev->step);
			fputc('\n', out);
		} else if (s.n >= 2) {
			od_size_format(s.first, lo, sizeof lo);
			od_size_format(s.last, hi, sizeof hi);
			fprintf(out, "    over time  " RP_HANG "%s first to %s last (the "
			    "lines give no steps); median %s\n", lo, hi, a);
		}
		if (s.nranks >= 2) {
			od_size_format(s.rank_low, lo, sizeof lo);
			od_size_format(s.rank_high, hi, sizeof hi);
			fprintf(out, "    ranks      " RP_HANG "last readings of %d ranks "
			    "from %s to %s (rank %d highest)\n", s.nranks, lo,
			    hi, s.high_rank);
		}
	}
	if (c->sum_retries >= 0 || c->sum_non_releasable >= 0) {
		fputs("    summary    " RP_HANG "torch.cuda.memory_summary():", out);
		if (c->sum_retries >= 0)
			fprintf(out, " %lld cudaMalloc retr%s",
			    (long long)c->sum_retries, c->sum_retries == 1 ?
			    "y" : "ies");
		if (c->sum_non_releasable >= 0) {
			od_size_format(c->sum_non_releasable, a, sizeof a);
			fprintf(out, "%s %s non-releasable", c->sum_retries >= 0 ?
			    "," : "", a);
		}
		fputc('\n', out);
	}
	if (c->vllm_weights >= 0 || c->vllm_kv_cache >= 0 ||
	    c->vllm_kv_tokens >= 0) {
		const char *sep = "";

		fputs("    vLLM      " RP_HANG, out);
		if (c->vllm_weights >= 0) {
			od_size_format(c->vllm_weights, a, sizeof a);
			fprintf(out, " weights %s", a);
			sep = ",";
		}
		if (c->vllm_kv_cache >= 0) {
			od_size_format(c->vllm_kv_cache, a, sizeof a);
			fprintf(out, "%s KV cache %s", sep, a);
			sep = ",";
		}
		if (c->vllm_kv_tokens >= 0)
			fprintf(out, "%s %lld tokens fit in it", sep,
			    (long long)c->vllm_kv_tokens);
		fputc('\n', out);
	}
}

/* The causes and fixes of an event, for a terminal. */
static void
rp_text_causes(FILE *out, const od_report_opts *o, const od_event *ev)
{
	const char *bold = o->color ? "\033[1m" : "";
	const char *off = o->color ? "\033[0m" : "";
	int i, k;

	if (ev->ncauses == 0) {
		fputs("    causes     " RP_HANG "no rule matched\n", out);
		return;
	}
	fputs("    likely causes:\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fprintf(out, "    %d. " RP_HANG "%s%s%s (%s%s%s, score %.2f): ",
		    i + 1, bold, c->rule, off, o->color ?
		    rp_confidence_color(c->confidence) : "",
		    od_confidence_name(c->confidence), off, c->score);
		od_escape_text(out, c->title, strlen(c->title), "");
		fputc('\n', out);
		rp_explains(out, "       ", c, ev);
		if (c->explanation != NULL) {
			fputs("       ", out);
			od_escape_text(out, c->explanation, strlen(c->explanation),
			    "       ");
			fputc('\n', out);
		}
		for (k = 0; k < c->nevidence; k++) {
			fputs("       evidence: " RP_HANG, out);
			od_escape_text(out, c->evidence[k].text,
			    strlen(c->evidence[k].text), "       ");
			fputc('\n', out);
		}
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];

			fputs("       fix: " RP_HANG, out);
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

/* A size for a table cell: "-" when unknown. */
static void
rp_text_cell(FILE *out, int64_t v)
{
	char sz[48];

	if (v < 0) {
		fprintf(out, " %10s", "-");
		return;
	}
	od_size_format(v, sz, sizeof sz);
	fprintf(out, " %10s", sz);
}


/*
 * Where the event stands in the run's story: the first failure, or a
 * report that follows from it (first is the first failure, number nfirst,
 * or NULL); and the per-rank table of a failure that ranks reported with
 * different figures.
 */
static void
rp_text_story(FILE *out, const od_event *ev, const od_event *first,
    size_t nfirst, const od_input *inputs, int ninputs)
{
	bool inputs_differ = false;
	int i;

	if (ev->first_failure) {
		/* Across inputs, their order is all that is known. */
		fprintf(out, "    story      " RP_HANG "the run's first failure, %s",
		    ninputs > 1 ? "in the order of the inputs" : "in log order");
		if (ev->rank >= 0)
			fprintf(out, ": rank %d (the reports that follow it, "
			    "and torchrun's \"root cause\" table, may name "
			    "other ranks)", ev->rank);
		fputc('\n', out);
	}
	if (ev->first_failure) {
		char after[512], root[512];

		rp_aftermath(ev, after, root, sizeof after);
		if (after[0] != '\0')
			fprintf(out, "    after it   " RP_HANG "%s\n", after);
		if (root[0] != '\0')
			fprintf(out, "    root cause " RP_HANG "%s\n", root);
	}
	if (ev->secondary != NULL && first != NULL) {
		fprintf(out, "    secondary  " RP_HANG "follows from #%zu (line %llu",
		    nfirst, (unsigned long long)first->line);
		if (first->rank >= 0)
			fprintf(out, ", rank %d", first->rank);
		fprintf(out, "): %s\n", ev->secondary);
	}
	if (ev->nper_rank == 0)
		return;
	for (i = 0; i < ev->nper_rank; i++)
		inputs_differ |= ev->per_rank[i].input != ev->input;
	fprintf(out, "    per rank   " RP_HANG "%d ranks reported it with different "
	    "figures; rank %d first\n", ev->nper_rank + ev->per_rank_dropped,
	    ev->per_rank[0].rank);
	fprintf(out, "      %4s %3s %7s %10s %10s %10s %10s %10s%s\n", "rank",
	    "GPU", "line", "requested", "free", "allocated", "reserved",
	    "total", inputs_differ ? "  input" : "");
	for (i = 0; i < ev->nper_rank; i++) {
		const od_rank_row *r = &ev->per_rank[i];

		fprintf(out, "      %4d", r->rank);
		if (r->device >= 0)
			fprintf(out, " %3d", r->device);
		else
			fprintf(out, " %3s", "-");
		if (r->line > 0)
			fprintf(out, " %7llu", (unsigned long long)r->line);
		else
			fprintf(out, " %7s", "-");
		rp_text_cell(out, r->requested);
		rp_text_cell(out, r->free);
		rp_text_cell(out, r->allocated);
		rp_text_cell(out, r->reserved);
		rp_text_cell(out, r->total);
		if (inputs_differ) {
			const char *name = rp_input_name(&inputs[r->input]);

			fputs("  ", out);
			od_escape_text(out, name, strlen(name), "");
		}
		fputc('\n', out);
	}
	if (ev->per_rank_dropped > 0)
		fprintf(out, "      (%d more ranks not listed)\n",
		    ev->per_rank_dropped);
}

/*
 * The line under `where`: the user's failing frame (the last frame of the
 * traceback outside the framework's and Python's files, as the fact
 * user_frame has it), the phase, the step and the settings the log gave
 * (context.c), only those that are known; nothing when none is.  The
 * parts are separated by " \u00b7 " on a UTF-8 terminal, "; " elsewhere.
 */
static void
rp_text_context(FILE *out, const od_report_opts *o, const od_event *ev)
{
	const char *sep = o->utf8 ? " \u00b7 " : "; ";
	const od_logctx *c = &ev->ctx;
	const od_frame *f = NULL;
	int i, parts = 0;

	for (i = ev->nframes - 1; i >= 0 && f == NULL; i--)
		if (ev->frames[i].user)
			f = &ev->frames[i];
	if (f != NULL) {
		fputs("               " RP_HANG, out);
		od_escape_text(out, f->file, strlen(f->file), "");
		fprintf(out, ":%lld", (long long)f->line);
		if (f->func[0] != '\0') {
			fputs(" in ", out);
			od_escape_text(out, f->func, strlen(f->func), "");
		}
		parts++;
	}
#define RP_PART() fputs(parts++ > 0 ? sep : "               " RP_HANG, out)
	if (ev->phase[0] != '\0') {
		RP_PART();
		od_escape_text(out, ev->phase, strlen(ev->phase), "");
	}
	if (ev->step >= 0) {
		RP_PART();
		fprintf(out, "step" RP_GLUE "%lld", (long long)ev->step);
	}
	if (c->batch_size >= 0) {
		RP_PART();
		fprintf(out, "batch" RP_GLUE "%lld", (long long)c->batch_size);
	}
	if (c->accum_steps > 1) {
		RP_PART();
		fprintf(out, "accumulating" RP_GLUE "%lld" RP_GLUE "steps", (long long)c->accum_steps);
	}
	if (c->seq_len >= 0) {
		RP_PART();
		fprintf(out, "sequence" RP_GLUE "length" RP_GLUE "%lld", (long long)c->seq_len);
	}
	if (c->precision[0] != '\0') {
		RP_PART();
		od_escape_text(out, c->precision, strlen(c->precision), "");
	}
#undef RP_PART
	if (parts > 0)
		fputc('\n', out);
}

/* The facts the user gave with --fact, as given: they win over the log's
 * in the rules (facts.c). */
static void
rp_text_facts(FILE *out, const od_report_opts *o)
{
	int i;

	if (o->nfacts == 0)
		return;
	fputs("    given      " RP_HANG, out);
	for (i = 0; i < o->nfacts; i++) {
		fputs(i > 0 ? ", " : "", out);
		od_escape_text(out, o->facts[i], strlen(o->facts[i]), "");
	}
	fputs(" (--fact: these win over the log's)\n", out);
}

/*
 * The message the log printed: in full with -v (as far as it was kept:
 * " [...]" says that the event's copy was cut at OD_MESSAGE_MAX); else
 * about three lines of the report's width of it, cut at a space, and a
 * note that -v shows the rest.
 */
static void
rp_text_message(FILE *out, const od_report_opts *o, const od_event *ev)
{
	const char *m = ev->message != NULL ? ev->message : "";
	int width = o->width > 0 ? o->width : RP_WIDTH_DEFAULT;
	size_t n = ev->message != NULL ? ev->message_len : 0, keep = n, k;
	size_t budget = (size_t)(width > 40 ? width - 15 : 25) * 3;

	if (!o->verbose && n > budget + 20) {
		keep = budget;
		while (keep > budget / 2 && m[keep] != ' ' && m[keep] != '\n')
			keep--;
		/* A sentence's end, when there is one late enough. */
		for (k = keep; k > budget * 2 / 3; k--)
			if (m[k] == ' ' && m[k - 1] == '.')
				break;
		if (k > budget * 2 / 3)
			keep = k;
		if (m[keep] != ' ' && m[keep] != '\n')
			/* No space: cut between two UTF-8 characters. */
			for (keep = budget; keep > 0 &&
			    ((unsigned char)m[keep] & 0xc0) == 0x80; keep--)
				;
		while (keep > 0 && (m[keep - 1] == ' ' || m[keep - 1] == '\n'))
			keep--;
	}
	od_escape_text(out, m, keep, "               ");
	if (keep < n)
		fputs(ev->message_cut ? " [... -v shows more]\n" :
		    " [... -v shows the rest]\n", out);
	else
		fputs(ev->message_cut ? " [...]\n" : "\n", out);
}

/*
 * Where the job ran, after the rank: ", job N, pod NS/P, container C,
 * host H", from the scheduler's output and the labels of the line's
 * record or prefix alike (od_labels): only what is known.
 */
static void
rp_text_sched(FILE *out, const od_event *ev)
{
	const od_labels *l = &ev->labels;

	if (ev->host.job[0] != '\0') {
		fputs(", job ", out);
		od_escape_text(out, ev->host.job, strlen(ev->host.job), "");
	}
	if (l->pod[0] != '\0') {
		fputs(", pod ", out);
		if (l->namespace_[0] != '\0') {
			od_escape_text(out, l->namespace_, strlen(l->namespace_),
			    "");
			fputc('/', out);
		}
		od_escape_text(out, l->pod, strlen(l->pod), "");
	} else if (l->namespace_[0] != '\0') {
		fputs(", namespace ", out);
		od_escape_text(out, l->namespace_, strlen(l->namespace_), "");
	}
	if (l->container[0] != '\0') {
		fputs(", container ", out);
		od_escape_text(out, l->container, strlen(l->container), "");
	}
	if (l->host[0] != '\0') {
		fputs(", host ", out);
		od_escape_text(out, l->host, strlen(l->host), "");
	}
}

/* The figures of a memory snapshot joined to the event (snapshot.c). */
static void
rp_text_snapshot(FILE *out, const od_event *ev)
{
	const od_snapshot_facts *s = &ev->snap;
	const char *v = od_snapshot_verdict_name(s->verdict);
	rp_figure fig[RP_SNAPSHOT_FIGURES_MAX];
	int i, nfig;

	if (!s->present)
		return;
	fprintf(out, "    memory snapshot, device %d, %lld segment%s: "
	    "fragmentation %s\n", s->device, (long long)s->segments,
	    s->segments == 1 ? "" : "s",
	    v != NULL ? v : "not judged (no request known)");
	nfig = rp_snapshot_figures(ev, fig);
	for (i = 0; i < nfig; i++) {
		char label[64];

		snprintf(label, sizeof label, "%.*s%.47s", 2 * fig[i].depth,
		    "    ", fig[i].label);
		rp_text_size(out, label, fig[i].bytes);
	}
	if (s->history && s->owner[0] != '\0') {
		char sz[48];

		od_size_format(s->owner_bytes, sz, sizeof sz);
		fprintf(out, "      most live bytes (%s) from ", sz);
		od_escape_text(out, s->owner, strlen(s->owner), "");
		fputc('\n', out);
	}
}

static void
rp_text_event(FILE *out, const od_report_opts *o, size_t n, const od_event *ev,
    const od_input *inputs, int ninputs, const od_event *first, size_t nfirst)
{
	const od_memory *m = &ev->mem;
	const char *bold = o->color ? "\033[1m" : "";
	const char *off = o->color ? "\033[0m" : "";
	rp_figure fig[RP_FIGURES_MAX];
	int i, nfig;

	fprintf(out, "%s#%zu  %s%s%s\n", bold, n, od_event_title(ev),
	    ev->fatal ? "" : " (warning, not the failure itself)", off);
	fputs("    where      " RP_HANG, out);
	od_escape_text(out, rp_input_name(&inputs[ev->input]),
	    strlen(rp_input_name(&inputs[ev->input])), "");
	/* A snapshot's own event has no line. */
	if (ev->line > 0)
		fprintf(out, ":%llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, "-%llu", (unsigned long long)ev->end_line);
	if (ev->rank >= 0)
		fprintf(out, ", rank %d", ev->rank);
	if (ev->device >= 0)
		fprintf(out, ", %s %d", od_device_word(ev), ev->device);
	rp_text_sched(out, ev);
	fputc('\n', out);
	rp_text_context(out, o, ev);
	rp_text_facts(out, o);
	/* The other inputs that reported it (event.c), one a line: an
	 * input is never hidden by the grouping. */
	for (i = 1; i < ev->nseen; i++) {
		const char *name = rp_input_name(&inputs[ev->seen[i].input]);

		fputs(i == 1 ? "    also in    " RP_HANG : "               ", out);
		od_escape_text(out, name, strlen(name), "");
		fprintf(out, ":%llu\n", (unsigned long long)ev->seen[i].line);
	}
	if (ev->nranks > 1 || ev->occurrences > 1) {
		fprintf(out, "    seen       " RP_HANG "%llu time%s", (unsigned long long)
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
	rp_text_story(out, ev, first, nfirst, inputs, ninputs);
	if (ev->timestamp[0] != '\0') {
		fputs("    time       " RP_HANG, out);
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
		fprintf(out, "    confidence " RP_HANG "%s%s%s", o->color ?
		    rp_confidence_color(ev->confidence) : "",
		    od_confidence_name(ev->confidence), off);
		if (ev->verify_hint != NULL)
			fprintf(out, ": to confirm, look for %s",
			    ev->verify_hint);
		fputc('\n', out);
	}
	fputs("    message    " RP_HANG, out);
	rp_text_message(out, o, ev);
	if (ev->host.pid >= 0 || ev->host.process[0] != '\0' ||
	    ev->host.has_exit || ev->host.signal[0] != '\0') {
		fputs("    process   " RP_HANG, out);
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
		fputs("    memory     " RP_HANG "no figures in the message\n", out);
		rp_text_readings(out, o, ev);
		rp_text_causes(out, o, ev);
		fputc('\n', out);
		return;
	}
	fputs("    memory at the failure:\n", out);
	nfig = rp_figures(ev, fig);
	for (i = 0; i < nfig; i++) {
		char label[64];

		snprintf(label, sizeof label, "%s%.47s", fig[i].depth > 0 ? "  " : "",
		    fig[i].label);
		if (fig[i].bytes >= 0)
			rp_text_size(out, label, fig[i].bytes);
		else if (fig[i].always)
			fprintf(out, "      %-28s %14s\n", label, "unknown");
	}
	if (m->procs_dropped > 0)
		fprintf(out, "      (%d more processes not listed)\n",
		    m->procs_dropped);
	/* The bar, the brackets and what of the request runs past it (up
	 * to 11 columns) within the report's width, up to RP_BAR_WIDTH. */
	rp_bar(out, ev, "    ", o->color, o->width > 0 ? o->width - 17 :
	    RP_BAR_WIDTH);
	rp_text_snapshot(out, ev);
	rp_text_readings(out, o, ev);
	rp_text_causes(out, o, ev);
	fputc('\n', out);
}

/*
 * The heading, "oomdoc: N out-of-memory events found in X", and after it
 * a blank line when the events follow it (!at_end).  Nothing when no
 * input could be read: the errors said it all, and an input that could
 * not be read is never one with no OOM.
 */
static bool
rp_text_heading(FILE *real, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set, bool at_end)
{
	size_t n = od_events_count(set);
	rp_wrapbuf wb;
	FILE *out;
	int k, nread = 0;

	for (k = 0; k < ninputs; k++)
		nread += !inputs[k].failed;
	if (n == 0 && nread == 0)
		return true;
	if ((out = rp_wrap_open(&wb, real, o->width)) == NULL)
		return false;
	if (n == 0 && nread < ninputs) {
		fprintf(out, "oomdoc: no out-of-memory failure found in the %d "
		    "input%s read to the end (%d could not be read)\n", nread,
		    nread == 1 ? "" : "s", ninputs - nread);
		rp_wrap_close(&wb);
		return true;
	}
	if (n == 0) {
		fputs("oomdoc: no out-of-memory failure found", out);
	} else {
		fprintf(out, "oomdoc: %zu out-of-memory %s%s found", n,
		    rp_events_noun(set), n == 1 ? "" : "s");
	}
	if (ninputs == 1) {
		fputs(" in ", out);
		od_escape_text(out, rp_input_name(&inputs[0]),
		    strlen(rp_input_name(&inputs[0])), "");
	} else {
		fprintf(out, " in %d inputs", ninputs);
	}
	/* Events found, but not in every input: the count is of those read,
	 * and the others are named by their errors. */
	if (ninputs == 1 && nread == 0)
		fputs(" (not read to the end)", out);
	else if (nread < ninputs)
		fprintf(out, " (%d could not be read to the end)",
		    ninputs - nread);
	fputs("\n", out);
	/* With -v, the mentions (decide.c): what was read but decided no
	 * failure, and why. */
	for (k = 0; o->verbose && (size_t)k < od_events_mention_count(set) &&
	    k < OD_MENTIONS_MAX; k++) {
		const od_mention *m = od_events_mention_get(set, (size_t)k);

		fputs("mentioned, no failure: ", out);
		if (ninputs > 1 && m->input >= 0 && m->input < ninputs) {
			od_escape_text(out, rp_input_name(&inputs[m->input]),
			    strlen(rp_input_name(&inputs[m->input])), "");
			fputs(", ", out);
		}
		fprintf(out, "line %llu (%s): %s\n",
		    (unsigned long long)m->line, od_kind_name(m->kind),
		    m->reason);
	}
	if (n > 0 && !at_end)
		fputc('\n', out);
	rp_wrap_close(&wb);
	return true;
}

/* The count of the events beyond the limit, when there are any. */
static void
rp_text_dropped(FILE *out, od_events *set)
{
	uint64_t dropped = od_events_dropped(set);

	if (dropped > 0)
		fprintf(out, "%llu more events were not kept (the limit is %d "
		    "distinct events)\n", (unsigned long long)dropped,
		    OD_EVENTS_MAX);
}

bool
od_report_text_event(FILE *real, const od_report_opts *o,
    const od_input *inputs, int ninputs, od_events *set, size_t i)
{
	size_t nfirst = 0;
	const od_event *first = rp_first_failure(set, &nfirst);
	rp_wrapbuf wb;
	FILE *out;

	if (i >= od_events_count(set))
		return true;
	/* Each event is wrapped as it is complete, so that a long report
	 * starts at once. */
	if ((out = rp_wrap_open(&wb, real, o->width)) == NULL)
		return false;
	rp_text_event(out, o, i + 1, od_events_get(set, i), inputs, ninputs,
	    first, nfirst + 1);
	rp_wrap_close(&wb);
	return true;
}

bool
od_report_text_end(FILE *out, const od_report_opts *o,
    const od_input *inputs, int ninputs, od_events *set)
{
	if (!rp_text_heading(out, o, inputs, ninputs, set, true))
		return false;
	rp_text_dropped(out, set);
	return true;
}

bool
rp_text(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);

	if (!rp_text_heading(out, o, inputs, ninputs, set, false))
		return false;
	/* With nothing found, the heading says it all. */
	if (n == 0)
		return true;
	for (i = 0; i < n; i++)
		if (!od_report_text_event(out, o, inputs, ninputs, set, i))
			return false;
	rp_text_dropped(out, set);
	return true;
}

/*
 * The triage summary: input | events | kind | top cause | fingerprint,
 * the columns padded to their widest cell (names beyond 60 columns push
 * the row, they are not cut).  An input that could not be read says so in
 * its events column: it is never shown as one with no event.
 */
void
rp_text_summary(FILE *out, const od_summary_row *rows, int n)
{
	int i, wn = 5, wk = 4, wc = 9;

	for (i = 0; i < n; i++) {
		int l = (int)strlen(rp_row_name(&rows[i]));

		wn = l > wn ? (l > 60 ? 60 : l) : wn;
		if (rows[i].kind != NULL && (int)strlen(rows[i].kind) > wk)
			wk = (int)strlen(rows[i].kind);
		if ((int)strlen(rows[i].top_cause) > wc)
			wc = (int)strlen(rows[i].top_cause);
	}
	fprintf(out, "%-*s  %-14s  %-*s  %-*s  %s\n", wn, "input", "events",
	    wk, "kind", wc, "top cause", "fingerprint");
	for (i = 0; i < n; i++) {
		const od_summary_row *r = &rows[i];
		const char *name = rp_row_name(r);
		char ev[32];
		int l = (int)strlen(name);

		if (r->failed && r->events == 0)
			snprintf(ev, sizeof ev, "not read");
		else if (r->events == r->failures)
			snprintf(ev, sizeof ev, "%llu%s",
			    (unsigned long long)r->events, r->failed ? "+?" : "");
		else
			snprintf(ev, sizeof ev, "%llu (%llu warn)%s",
			    (unsigned long long)r->events,
			    (unsigned long long)(r->events - r->failures),
			    r->failed ? "+?" : "");
		od_escape_text(out, name, strlen(name), "");
		fprintf(out, "%*s  %-14s  %-*s  %-*s  %s\n", l < wn ? wn - l : 0,
		    "", ev, wk, r->kind != NULL ? r->kind : "-", wc,
		    r->top_cause[0] != '\0' ? r->top_cause : "-",
		    r->fingerprint[0] != '\0' ? r->fingerprint : "-");
	}
}
