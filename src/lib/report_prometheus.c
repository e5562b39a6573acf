/*
 * report_prometheus.c: --format prometheus, the Prometheus text
 * exposition format (version 0.0.4, as node_exporter's textfile collector
 * reads *.prom files): for each metric family a "# HELP" and a "# TYPE"
 * line, then its samples.
 *
 *   oomdoc_inputs_total                 counter  inputs read
 *   oomdoc_inputs_incomplete            gauge    inputs not read to the end
 *   oomdoc_oom_found                    gauge    1 when a failure was found
 *   oomdoc_events_total{kind,cause}     counter  events, by kind and top cause
 *   oomdoc_failures_total{kind,cause}   counter  fatal events, likewise
 *   oomdoc_requested_bytes{input,line,kind,cause}  gauge  each event's request
 *   oomdoc_shortfall_bytes{input,line,kind,cause}  gauge  what it lacked
 *   oomdoc_last_event_timestamp_seconds gauge    the latest event's time
 *
 * A figure the log does not give has no sample (never 0); the timestamp
 * only when an event's timestamp names its zone (Z or an offset), since a
 * local time without one is no instant.  "cause" is the rule id of the
 * event's top cause, "none" when no rule matched.
 *
 * Label values are escaped as the exposition format says (a backslash as
 * \\, a double quote as \", a newline as \n; prometheus/docs,
 * content/docs/instrumenting/exposition_formats.md); beyond that, since
 * a label value must be UTF-8, an invalid byte or another control
 * character is written as the text \xNN and an invisible format character
 * as \uXXXX, as the text report shows them (escape.c).
 */
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "report.h"

/* A label value, escaped. */
static void
pm_value(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n = strlen(s);

	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fprintf(out, "\\\\x%02x", p[i]);
			i++;
			continue;
		}
		if (cp == '\\')
			fputs("\\\\", out);
		else if (cp == '"')
			fputs("\\\"", out);
		else if (cp == '\n')
			fputs("\\n", out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\\\x%02x", cp);
		else if (od_escape_invisible(cp))
			fprintf(out, cp > 0xffff ? "\\\\U%08x" : "\\\\u%04x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

static void
pm_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *
pm_cause(const od_event *ev)
{
	return ev->ncauses > 0 && ev->causes[0].rule != NULL ?
	    ev->causes[0].rule : "none";
}

/* {kind="...",cause="..."} of ev. */
static void
pm_kind_cause(FILE *out, const od_event *ev)
{
	fputs("{kind=\"", out);
	pm_value(out, od_kind_name(ev->kind));
	fputs("\",cause=\"", out);
	pm_value(out, pm_cause(ev));
	fputs("\"}", out);
}

/* {input="...",line="...",kind="...",cause="..."} of ev. */
static void
pm_event_labels(FILE *out, const od_input *inputs, const od_event *ev)
{
	fputs("{input=\"", out);
	pm_value(out, rp_input_name(&inputs[ev->input]));
	fprintf(out, "\",line=\"%llu\",kind=\"", (unsigned long long)ev->line);
	pm_value(out, od_kind_name(ev->kind));
	fputs("\",cause=\"", out);
	pm_value(out, pm_cause(ev));
	fputs("\"}", out);
}

/* Whether a and b fall in the same {kind, cause} series. */
static bool
pm_same(const od_event *a, const od_event *b)
{
	return a->kind == b->kind && strcmp(pm_cause(a), pm_cause(b)) == 0;
}

/*
 * The events (fatal only, with fatal) by {kind, cause}: a sample per
 * series, in the order of each series' first event.
 */
static void
pm_counts(FILE *out, od_events *set, bool fatal)
{
	size_t i, j, n = od_events_count(set);

	for (i = 0; i < n; i++) {
		const od_event *ev = od_events_get(set, i);
		uint64_t count = 0;
		bool seen = false;

		for (j = 0; j < i && !seen; j++) {
			const od_event *e = od_events_get(set, j);

			seen = (!fatal || e->fatal) && pm_same(e, ev);
		}
		if (seen || (fatal && !ev->fatal))
			continue;
		for (j = i; j < n; j++) {
			const od_event *e = od_events_get(set, j);

			count += (!fatal || e->fatal) && pm_same(e, ev);
		}
		fputs(fatal ? "oomdoc_failures_total" : "oomdoc_events_total",
		    out);
		pm_kind_cause(out, ev);
		fprintf(out, " %llu\n", (unsigned long long)count);
	}
}

/* d digits of s as a number, or -1. */
static int
pm_digits(const char *s, int d)
{
	int v = 0, k;

	for (k = 0; k < d; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (s[k] - '0');
	}
	return v;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static long long
pm_days(int y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/*
 * An ISO 8601 timestamp with its zone, YYYY-MM-DD[T ]HH:MM:SS[.frac]
 * then Z or +HH:MM, +HHMM, -HH:MM, -HHMM, as seconds since the epoch
 * into *out.  False for anything else (no zone, no seconds, another
 * form).
 */
static bool
pm_instant(const char *s, double *out)
{
	int y = pm_digits(s, 4), mo, d, h, mi, sec, oh, om, sign;
	double frac = 0, scale = 0.1;
	const char *p;

	if (y < 0 || s[4] != '-' || (mo = pm_digits(s + 5, 2)) < 1 || mo > 12 ||
	    s[7] != '-' || (d = pm_digits(s + 8, 2)) < 1 || d > 31 ||
	    (s[10] != 'T' && s[10] != ' ') || (h = pm_digits(s + 11, 2)) < 0 ||
	    h > 23 || s[13] != ':' || (mi = pm_digits(s + 14, 2)) < 0 ||
	    mi > 59 || s[16] != ':' || (sec = pm_digits(s + 17, 2)) < 0 ||
	    sec > 60)
		return false;
	p = s + 19;
	if (*p == '.' || *p == ',')
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	if (*p == 'Z' && p[1] == '\0') {
		oh = om = 0;
		sign = 1;
	} else if ((*p == '+' || *p == '-') && (oh = pm_digits(p + 1, 2)) >= 0 &&
	    oh <= 23) {
		sign = *p == '-' ? -1 : 1;
		p += 3;
		p += *p == ':';
		if ((om = pm_digits(p, 2)) < 0 || om > 59 || p[2] != '\0')
			return false;
	} else {
		return false;
	}
	*out = (double)(pm_days(y, mo, d) * 86400 + h * 3600 + mi * 60 +
	    sec - sign * (oh * 3600 + om * 60)) + frac;
	return true;
}

bool
rp_prometheus(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);
	int k, incomplete = 0;
	bool found = false, have_time = false;
	double last = 0, t;
	od_account a;

	(void)o;
	for (k = 0; k < ninputs; k++)
		incomplete += inputs[k].failed;
	for (i = 0; i < n; i++)
		found |= od_events_get(set, i)->fatal;
	pm_family(out, "oomdoc_inputs_total", "counter",
	    "Inputs (logs) that oomdoc read.");
	fprintf(out, "oomdoc_inputs_total %d\n", ninputs);
	pm_family(out, "oomdoc_inputs_incomplete", "gauge",
	    "Inputs that could not be read to their end.");
	fprintf(out, "oomdoc_inputs_incomplete %d\n", incomplete);
	pm_family(out, "oomdoc_oom_found", "gauge",
	    "1 when an out-of-memory failure was found (exit status 0), else "
	    "0.");
	fprintf(out, "oomdoc_oom_found %d\n", found ? 1 : 0);
	pm_family(out, "oomdoc_events_total", "counter",
	    "Out-of-memory events (warnings included), by kind and top cause.");
	pm_counts(out, set, false);
	pm_family(out, "oomdoc_failures_total", "counter",
	    "Out-of-memory failures (fatal events), by kind and top cause.");
	pm_counts(out, set, true);
	pm_family(out, "oomdoc_requested_bytes", "gauge",
	    "The bytes an event's allocation asked for, where the log says.");
	for (i = 0; i < n; i++) {
		const od_event *ev = od_events_get(set, i);

		if (ev->mem.requested < 0)
			continue;
		fputs("oomdoc_requested_bytes", out);
		pm_event_labels(out, inputs, ev);
		fprintf(out, " %lld\n", (long long)ev->mem.requested);
	}
	pm_family(out, "oomdoc_shortfall_bytes", "gauge",
	    "The bytes an event's request lacked, where the request and the "
	    "free memory are known: requested less free, or the whole request "
	    "when it was no larger than the free memory printed.");
	for (i = 0; i < n; i++) {
		const od_event *ev = od_events_get(set, i);

		od_account_of(ev, &a);
		if (a.shortfall < 0)
			continue;
		fputs("oomdoc_shortfall_bytes", out);
		pm_event_labels(out, inputs, ev);
		fprintf(out, " %lld\n", (long long)a.shortfall);
	}
	for (i = 0; i < n; i++)
		if (pm_instant(od_events_get(set, i)->timestamp, &t) &&
		    (!have_time || t > last)) {
			last = t;
			have_time = true;
		}
	pm_family(out, "oomdoc_last_event_timestamp_seconds", "gauge",
	    "The time of the latest event, in seconds since the epoch, where "
	    "its timestamp gives a zone.");
	if (have_time)
		fprintf(out, "oomdoc_last_event_timestamp_seconds %.3f\n", last);
	return true;
}
