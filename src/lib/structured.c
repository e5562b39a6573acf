/*
 * structured.c: reading the records of log shippers and container
 * runtimes as the text their programs wrote (structured.h).
 *
 * Each line of the input is looked at once, at its start: a line that
 * starts with '{' may be a JSON record, one that starts with a digit a CRI
 * line; every other line goes through as it is, without a copy held.  A
 * candidate line is held (SL_RECORD_MAX bytes at most: a longer one goes
 * through as it is, its start from the buffer and the rest straight
 * from the input, so that no line is ever held twice) until it ends, then
 * read:
 *
 *   JSON records (jansson), by the key that holds the program's line:
 *     "MESSAGE"  journald's `journalctl -o json` (systemd's
 *                src/shared/logs-show.c, output_json: a field that is not
 *                printable UTF-8 is an array of its bytes, one too large
 *                is null), with __REALTIME_TIMESTAMP (microseconds since
 *                the epoch), _HOSTNAME and CONTAINER_NAME (Docker's
 *                journald driver);
 *     "log"      Fluent Bit (its tail input and kubernetes filter: the
 *                "kubernetes" object's pod_name, namespace_name,
 *                container_name and host; "date" in seconds or ISO 8601)
 *                and Docker's json-file driver ({"log", "stream", "time"};
 *                moby daemon/logger/jsonfilelog: a line longer than 16 KiB
 *                is split over several records, only the last of which
 *                ends in "\n", and those are joined here);
 *     "line"     Loki's logcli --output jsonl (grafana/loki
 *                pkg/logcli/output/jsonl.go: "timestamp", "line",
 *                "labels"), and Loki's stream documents, the query API's
 *                response ("data" -> "result") and the push API's body
 *                ("streams"), whose entries [nanoseconds, line] are read
 *                in the order of their times, each with its stream's
 *                labels;
 *     "message"  Vector (its kubernetes_logs source: "kubernetes" with
 *                pod_name, container_name, pod_namespace, pod_node_name;
 *                "timestamp"; "host").
 *   A JSON line that does not parse, or has none of these keys, goes
 *   through as it is (lines.c still reads a message quoted in it).
 *
 *   CRI lines (the kubelet's log format for CRI-O and containerd,
 *   kubernetes pkg/kubelet/kuberuntime/logs/logs.go, parseCRILog):
 *   "TIMESTAMP STREAM TAG CONTENT", where a tag with P marks a partial
 *   line continued by the next one.  The line goes through with its
 *   prefix (prefix.c reads the timestamp); the content of the lines that
 *   continue it is joined to it without their prefixes.
 *
 * A record's line is written as "TIMESTAMP  LINE": the record's time
 * (as ISO 8601, from whichever form the record gives) padded to a fixed
 * width, so that the prefix reader (prefix.c) finds it as it finds a
 * runtime's timestamp, and so that a traceback's source lines stay
 * aligned under their File lines whatever the time's length; then the
 * program's line, its "\r\n" as "\n", its last "\n" left out.  Labels
 * (pod, container, namespace, host) are cleaned of control characters
 * and kept in runs: a run starts where the labels change, and the scanner
 * asks for the labels of an event's line (sl_labels_at).
 *
 * Line numbers are then those of the text: one record is one line unless
 * its message holds several or Docker split it.
 */
#define _GNU_SOURCE             /* memmem */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "structured.h"

/* Text handed over in pieces of at most this size (fewer, larger calls
 * into the scanner). */
#define SL_OUT 65536

typedef struct {
	uint64_t from;          /* the text's offset where it starts */
	od_labels lab;
	bool any;
} sl_run;

/*
 * A run of text lines from text on: with step, text line text + k came
 * from input line in + k; without, every one of them from input line in
 * (the lines of one record).
 */
typedef struct {
	uint64_t text;
	uint64_t in;
	bool step;
} sl_map;

typedef enum { SL_START, SL_PASS, SL_LINE } sl_state;

/* What the last line left open: a Docker record or a CRI line that did
 * not end its line. */
typedef enum { SL_PART_NONE, SL_PART_DOCKER, SL_PART_CRI } sl_part;

struct sl_reader {
	sl_emit_fn *fn;
	void *arg;
	sl_state state;
	sl_part part;
	char *line;             /* SL_RECORD_MAX bytes */
	size_t line_len;
	char *out;              /* SL_OUT bytes */
	size_t out_len;
	uint64_t emitted;       /* bytes of text so far, staged ones too */
	sl_run *runs;           /* a ring of SL_RUNS */
	uint64_t nruns;         /* runs started, all told */
	bool cur_any;           /* the last run has labels */
	char *msg;              /* a journald byte array's text */
	/* Lines: the input's ('\n' read, and the bytes), the text's ('\n'
	 * handed over), and the runs that map one to the other. */
	uint64_t in_lines, in_bytes;
	char in_last;
	uint64_t text_lines;
	bool text_bol;          /* the text is at a line's start */
	sl_map *maps;           /* a ring of SL_RUNS */
	uint64_t nmaps;
};

bool
od_labels_any(const od_labels *l)
{
	return l->pod[0] != '\0' || l->container[0] != '\0' ||
	    l->namespace_[0] != '\0' || l->host[0] != '\0';
}

void
od_labels_fill(od_labels *to, const od_labels *from)
{
	if (!od_labels_any(to)) {
		*to = *from;
		return;
	}
	if (to->pod[0] != '\0' && from->pod[0] != '\0' &&
	    strcmp(to->pod, from->pod) != 0)
		return;
	if (to->pod[0] == '\0')
		memcpy(to->pod, from->pod, sizeof to->pod);
	if (to->namespace_[0] == '\0')
		memcpy(to->namespace_, from->namespace_, sizeof to->namespace_);
	if (to->container[0] == '\0')
		memcpy(to->container, from->container, sizeof to->container);
	if (to->host[0] == '\0')
		memcpy(to->host, from->host, sizeof to->host);
}

sl_reader *
sl_new(void)
{
	sl_reader *r = calloc(1, sizeof *r);

	if (r == NULL)
		return NULL;
	r->line = malloc(SL_RECORD_MAX);
	r->out = malloc(SL_OUT);
	r->runs = malloc(SL_RUNS * sizeof *r->runs);
	r->msg = malloc(SL_RECORD_MAX);
	r->maps = malloc(SL_RUNS * sizeof *r->maps);
	if (r->line == NULL || r->out == NULL || r->runs == NULL ||
	    r->msg == NULL || r->maps == NULL) {
		sl_free(r);
		return NULL;
	}
	return r;
}

void
sl_free(sl_reader *r)
{
	if (r == NULL)
		return;
	free(r->line);
	free(r->out);
	free(r->runs);
	free(r->msg);
	free(r->maps);
	free(r);
}

void
sl_begin(sl_reader *r, sl_emit_fn *fn, void *arg)
{
	r->fn = fn;
	r->arg = arg;
	r->state = SL_START;
	r->part = SL_PART_NONE;
	r->line_len = 0;
	r->out_len = 0;
	r->emitted = 0;
	r->nruns = 0;
	r->cur_any = false;
	r->in_lines = r->in_bytes = 0;
	r->in_last = '\n';
	r->text_lines = 0;
	r->text_bol = true;
	r->nmaps = 0;
}

static void
sl_flush(sl_reader *r)
{
	if (r->out_len > 0)
		r->fn(r->arg, r->out, r->out_len);
	r->out_len = 0;
}

/* Hands text over, nls line breaks in it: staged when small, straight
 * through when large. */
static void
sl_put_lines(sl_reader *r, const char *p, size_t n, uint64_t nls)
{
	r->text_lines += nls;
	r->emitted += n;
	if (n > 0)
		r->text_bol = p[n - 1] == '\n';
	if (n >= SL_OUT / 2) {
		sl_flush(r);
		r->fn(r->arg, p, n);
		return;
	}
	if (r->out_len + n > SL_OUT)
		sl_flush(r);
	memcpy(r->out + r->out_len, p, n);
	r->out_len += n;
}

/* The same, the line breaks counted here. */
static void
sl_put(sl_reader *r, const char *p, size_t n)
{
	const char *q = p, *e = p + n;
	uint64_t nls = 0;

	while ((q = memchr(q, '\n', (size_t)(e - q))) != NULL) {
		nls++;
		q++;
	}
	sl_put_lines(r, p, n, nls);
}

/* The labels of the line that starts now (NULL: none). */
static void
sl_set_labels(sl_reader *r, const od_labels *l)
{
	sl_run *last = r->nruns > 0 ? &r->runs[(r->nruns - 1) % SL_RUNS] :
	    NULL;
	sl_run *run;

	if (l == NULL || !od_labels_any(l)) {
		if (!r->cur_any)
			return;
		l = NULL;
	} else if (last != NULL && last->any &&
	    memcmp(&last->lab, l, sizeof *l) == 0) {
		return;
	}
	run = &r->runs[r->nruns++ % SL_RUNS];
	run->from = r->emitted;
	run->any = l != NULL;
	if (l != NULL)
		run->lab = *l;
	r->cur_any = run->any;
}

const od_labels *
sl_labels_at(const sl_reader *r, uint64_t off)
{
	uint64_t i, oldest = r->nruns > SL_RUNS ? r->nruns - SL_RUNS : 0;

	for (i = r->nruns; i > oldest; i--) {
		const sl_run *run = &r->runs[(i - 1) % SL_RUNS];

		if (run->from <= off)
			return run->any ? &run->lab : NULL;
	}
	/* Before the first run kept: none, unless runs were forgotten. */
	return NULL;
}

/* The map run in force at text line t (the newest that starts at or
 * before it), or NULL. */
static const sl_map *
sl_map_for(const sl_reader *r, uint64_t t)
{
	uint64_t i, oldest = r->nmaps > SL_RUNS ? r->nmaps - SL_RUNS : 0;

	for (i = r->nmaps; i > oldest; i--) {
		const sl_map *m = &r->maps[(i - 1) % SL_RUNS];

		if (m->text <= t)
			return m;
	}
	/* Forgotten runs: the oldest kept is the best guess left. */
	return oldest > 0 ? &r->maps[oldest % SL_RUNS] : NULL;
}

uint64_t
sl_input_line(const sl_reader *r, uint64_t t)
{
	const sl_map *m = sl_map_for(r, t);

	if (m == NULL)
		return t;
	if (!m->step || t < m->text)
		return m->in;
	return m->in + (t - m->text);
}

uint64_t
sl_input_line_end(const sl_reader *r, uint64_t t)
{
	const sl_map *m = sl_map_for(r, t + 1);
	uint64_t first = sl_input_line(r, t);

	/* A run that starts at the next text line, line for line: the
	 * input lines before its first are this text line's. */
	if (m != NULL && m->text == t + 1 && m->step && m->in > first)
		return m->in - 1;
	return first;
}

static void
sl_map_push(sl_reader *r, uint64_t in, bool step)
{
	sl_map *m;

	if (r->nmaps > 0) {
		m = &r->maps[(r->nmaps - 1) % SL_RUNS];
		/* A run that no text line is in yet is replaced. */
		if (m->text == r->text_lines) {
			m->in = in;
			m->step = step;
			return;
		}
	}
	m = &r->maps[r->nmaps++ % SL_RUNS];
	m->text = r->text_lines;
	m->in = in;
	m->step = step;
}

/* At the start of a text line: it is input line in's, and so are the
 * ones after it, line for line. */
static void
sl_sync(sl_reader *r, uint64_t in)
{
	const sl_map *m = r->nmaps > 0 ? &r->maps[(r->nmaps - 1) % SL_RUNS] :
	    NULL;

	if (!r->text_bol)
		return;
	if (m == NULL ? r->text_lines == in : (m->step &&
	    m->in + (r->text_lines - m->text) == in))
		return;
	sl_map_push(r, in, true);
}

void
sl_input(const sl_reader *r, uint64_t *bytes, uint64_t *lines)
{
	*bytes = r->in_bytes;
	*lines = r->in_lines + (r->in_bytes > 0 && r->in_last != '\n');
}

/* Ends what the last line left open, before a line of another kind. */
static void
sl_close_part(sl_reader *r)
{
	if (r->part != SL_PART_NONE) {
		sl_put(r, "\n", 1);
		sl_sync(r, r->in_lines);
	}
	r->part = SL_PART_NONE;
}

/* A line that goes through as it is starts. */
static void
sl_plain_start(sl_reader *r)
{
	sl_close_part(r);
	sl_set_labels(r, NULL);
}

static bool
sl_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

/*
 * The length of the ISO 8601 / RFC 3339 time at p[0..n): a date, 'T' or
 * ' ', a time, a fraction of up to nine digits, 'Z' or an offset; 0 when
 * p does not start with one.
 */
static size_t
sl_iso_time(const char *p, size_t n)
{
	size_t i = 19;

	if (n < 19 || !sl_digits(p, 4) || p[4] != '-' || !sl_digits(p + 5, 2) ||
	    p[7] != '-' || !sl_digits(p + 8, 2) || (p[10] != 'T' &&
	    p[10] != 't' && p[10] != ' ') || !sl_digits(p + 11, 2) ||
	    p[13] != ':' || !sl_digits(p + 14, 2) || p[16] != ':' ||
	    !sl_digits(p + 17, 2))
		return 0;
	if (i < n && (p[i] == '.' || p[i] == ',')) {
		size_t k = i + 1;

		while (k < n && k - i <= 9 && p[k] >= '0' && p[k] <= '9')
			k++;
		if (k > i + 1)
			i = k;
	}
	if (i < n && (p[i] == 'Z' || p[i] == 'z'))
		i++;
	else if (i + 6 <= n && (p[i] == '+' || p[i] == '-') &&
	    sl_digits(p + i + 1, 2) && p[i + 3] == ':' && sl_digits(p + i + 4, 2))
		i += 6;
	return i;
}

/* Formats secs (since the epoch) and a fraction of digits digits as UTC
 * ISO 8601 into ts (OD_TIMESTAMP_MAX).  False when out of range. */
static bool
sl_epoch(int64_t secs, uint64_t frac, int digits, char *ts)
{
	struct tm tm;
	time_t t = (time_t)secs;
	char tmp[96];
	int n;

	if (secs < 0 || secs > INT64_C(253402300799) || gmtime_r(&t, &tm) == NULL)
		return false;
	n = snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
	if (digits > 0)
		n += snprintf(tmp + n, sizeof tmp - (size_t)n, ".%0*llu", digits,
		    (unsigned long long)frac);
	n += snprintf(tmp + n, sizeof tmp - (size_t)n, "Z");
	if (n <= 0 || (size_t)n >= OD_TIMESTAMP_MAX)
		return false;
	memcpy(ts, tmp, (size_t)n + 1);
	return true;
}

/* A time given as digits since the epoch: seconds (10 digits or fewer),
 * milliseconds (13), microseconds (16, journald) or nanoseconds (19,
 * Loki). */
static bool
sl_epoch_digits(const char *p, size_t n, char *ts)
{
	uint64_t v = 0;
	size_t i;
	int scale;

	if (n == 0 || n > 19 || !sl_digits(p, n))
		return false;
	for (i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	if (n <= 10)
		scale = 0;
	else if (n == 13)
		scale = 3;
	else if (n == 16)
		scale = 6;
	else if (n == 19)
		scale = 9;
	else
		return false;
	if (scale == 0)
		return sl_epoch((int64_t)v, 0, 0, ts);
	{
		uint64_t div = scale == 3 ? 1000u : scale == 6 ? 1000000u :
		    1000000000u;

		return sl_epoch((int64_t)(v / div), v % div, scale, ts);
	}
}

/* The record's time from v (a string or a number) into ts; false when v
 * is no time. */
static bool
sl_time_value(const json_t *v, char *ts)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v), k = sl_iso_time(s, n);

		if (k > 0 && k < OD_TIMESTAMP_MAX) {
			memcpy(ts, s, k);
			ts[k] = '\0';
			return true;
		}
		return sl_epoch_digits(s, n, ts);
	}
	if (json_is_integer(v)) {
		char d[24];
		int n = snprintf(d, sizeof d, "%lld",
		    (long long)json_integer_value(v));

		return n > 0 && sl_epoch_digits(d, (size_t)n, ts);
	}
	if (json_is_real(v)) {
		/* Fluent Bit's "date": seconds, with microseconds. */
		double x = json_real_value(v), s;
		uint64_t us;

		if (!(x >= 0 && x < 253402300800.0))
			return false;
		s = floor(x);
		us = (uint64_t)llround((x - s) * 1e6);
		if (us >= 1000000u) {
			us -= 1000000u;
			s += 1;
		}
		return sl_epoch((int64_t)s, us, 6, ts);
	}
	return false;
}

/* The keys that hold a record's time, in the order they are tried. */
static const char *const sl_time_keys[] = {
	"time", "timestamp", "@timestamp", "date", "__REALTIME_TIMESTAMP",
};

static void
sl_time(const json_t *o, char *ts)
{
	size_t i;

	ts[0] = '\0';
	for (i = 0; i < sizeof sl_time_keys / sizeof sl_time_keys[0]; i++)
		if (sl_time_value(json_object_get(o, sl_time_keys[i]), ts))
			return;
	ts[0] = '\0';
}

/*
 * Copies label text s[0..n) into dst (OD_LABEL_MAX) unless dst is set
 * already: control characters (CR and LF among them) left out, cut at a
 * character's boundary.
 */
static void
sl_label_copy(char *dst, const char *s, size_t n)
{
	size_t i, k = 0;

	if (dst[0] != '\0')
		return;
	for (i = 0; i < n; ) {
		unsigned char c = (unsigned char)s[i];
		size_t len = 1;

		if (c < 0x20 || c == 0x7f) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			unsigned cp;

			len = od_utf8_decode((const unsigned char *)s + i, n - i,
			    &cp);
			if (len == 0) {
				i++;
				continue;
			}
		}
		if (k + len >= OD_LABEL_MAX)
			break;
		memcpy(dst + k, s + i, len);
		k += len;
		i += len;
	}
	dst[k] = '\0';
}

/* The keys of each label, in the order they are tried, in the record
 * and in its "kubernetes", "labels" and "stream" objects. */
static const char *const sl_pod_keys[] = { "pod_name", "pod", NULL };
static const char *const sl_container_keys[] = { "container_name",
	"container", "CONTAINER_NAME", NULL };
static const char *const sl_namespace_keys[] = { "namespace_name",
	"pod_namespace", "namespace", NULL };
static const char *const sl_host_keys[] = { "host", "_HOSTNAME", "hostname",
	"pod_node_name", "node_name", "nodename", NULL };

static void
sl_label_keys(const json_t *o, const char *const *keys, char *dst)
{
	for (; *keys != NULL; keys++) {
		const json_t *v = json_object_get(o, *keys);

		if (json_is_string(v))
			sl_label_copy(dst, json_string_value(v),
			    json_string_length(v));
	}
}

static void
sl_labels_of(const json_t *o, od_labels *lab)
{
	if (!json_is_object(o))
		return;
	sl_label_keys(o, sl_pod_keys, lab->pod);
	sl_label_keys(o, sl_container_keys, lab->container);
	sl_label_keys(o, sl_namespace_keys, lab->namespace_);
	sl_label_keys(o, sl_host_keys, lab->host);
}

static void
sl_labels(const json_t *root, od_labels *lab)
{
	memset(lab, 0, sizeof *lab);
	sl_labels_of(root, lab);
	sl_labels_of(json_object_get(root, "kubernetes"), lab);
	sl_labels_of(json_object_get(root, "labels"), lab);
}

/* Writes the program's line m[0..n): "\r\n" as "\n", a last "\n" (and
 * "\r\n") left out.  Returns whether the line ended in "\n". */
static bool
sl_put_message(sl_reader *r, const char *m, size_t n)
{
	bool ended = false;
	size_t i, from = 0;

	if (n > 0 && m[n - 1] == '\n') {
		ended = true;
		n--;
		if (n > 0 && m[n - 1] == '\r')
			n--;
	}
	for (i = 0; i + 1 < n; i++) {
		if (m[i] == '\r' && m[i + 1] == '\n') {
			sl_put(r, m + from, i - from);
			from = i + 1;
		}
	}
	sl_put(r, m + from, n - from);
	return ended;
}

/*
 * Starts a record's line: what was open closed, the labels, the time.
 * flat: the record's text has several lines, every one of them the
 * record's input line.
 */
static void
sl_record_start(sl_reader *r, const od_labels *lab, const char *ts, bool flat)
{
	static const char pad[SL_TS_WIDTH + 1] =
	    "                                    ";
	size_t n = strlen(ts);

	sl_close_part(r);
	if (flat)
		sl_map_push(r, r->in_lines, false);
	sl_set_labels(r, lab);
	if (n == 0)
		return;
	sl_put(r, ts, n);
	sl_put(r, pad, n < SL_TS_WIDTH ? SL_TS_WIDTH - n + 1 : 1);
}

/* Whether the program's line m[0..n) holds a line break before its
 * end. */
static bool
sl_multiline(const char *m, size_t n)
{
	const char *nl = memchr(m, '\n', n);

	return nl != NULL && (size_t)(nl - m) + 1 < n;
}

/* One Loki entry, for sorting by time. */
typedef struct {
	uint64_t ns;
	size_t order;
	const json_t *stream;
	const json_t *value;
} sl_entry;

static int
sl_entry_cmp(const void *a, const void *b)
{
	const sl_entry *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Loki's streams ([{"stream": {labels}, "values": [[ns, line], ...]}]):
 * every entry as a line, in the order of their times.  False when a is
 * not such a list.
 */
static bool
sl_loki_streams(sl_reader *r, const json_t *a)
{
	size_t i, j, n = 0, k = 0;
	const json_t *s, *v;
	sl_entry *e;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return false;
	json_array_foreach(a, i, s) {
		const json_t *values = json_object_get(s, "values");

		if (!json_is_object(json_object_get(s, "stream")) ||
		    !json_is_array(values))
			return false;
		n += json_array_size(values);
	}
	e = malloc((n > 0 ? n : 1) * sizeof *e);
	if (e == NULL)
		return false;
	json_array_foreach(a, i, s) {
		json_array_foreach(json_object_get(s, "values"), j, v) {
			const json_t *t = json_array_get(v, 0);
			const char *ts = json_string_value(t);
			uint64_t ns = 0;
			size_t d;

			if (!json_is_string(json_array_get(v, 1)))
				continue;
			for (d = 0; ts != NULL && ts[d] >= '0' && ts[d] <= '9' &&
			    d < 19; d++)
				ns = ns * 10 + (uint64_t)(ts[d] - '0');
			e[k].ns = ns;
			e[k].order = k;
			e[k].stream = json_object_get(s, "stream");
			e[k].value = v;
			k++;
		}
	}
	qsort(e, k, sizeof *e, sl_entry_cmp);
	for (i = 0; i < k; i++) {
		const json_t *line = json_array_get(e[i].value, 1);
		const json_t *t = json_array_get(e[i].value, 0);
		od_labels lab;
		char ts[OD_TIMESTAMP_MAX] = "";

		memset(&lab, 0, sizeof lab);
		sl_labels_of(e[i].stream, &lab);
		if (!sl_time_value(t, ts))
			ts[0] = '\0';
		sl_record_start(r, &lab, ts, i == 0);
		(void)sl_put_message(r, json_string_value(line),
		    json_string_length(line));
		sl_put(r, "\n", 1);
	}
	free(e);
	sl_sync(r, r->in_lines + 1);
	return true;
}

/* The program's line of a record: a string, or journald's array of
 * bytes (into r->msg), or null (journald's field too large to show). */
static bool
sl_message(sl_reader *r, const json_t *v, const char **m, size_t *n)
{
	size_t i, k = 0;
	const json_t *b;

	if (json_is_string(v)) {
		*m = json_string_value(v);
		*n = json_string_length(v);
		return true;
	}
	if (json_is_null(v)) {
		*m = "";
		*n = 0;
		return true;
	}
	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, b) {
		json_int_t c = json_integer_value(b);

		if (!json_is_integer(b) || c < 0 || c > 255 || k == SL_RECORD_MAX)
			return false;
		r->msg[k++] = (char)c;
	}
	*m = r->msg;
	*n = k;
	return true;
}

/* The keys of an exception beside the message, in the order tried. */
static const char *const sl_exc_keys[] = { "exc_info", "exc_text",
	"exception", "stack_trace", "traceback" };

/* The keys that hold the program's line, in the order they are tried. */
static const char *const sl_message_keys[] = { "MESSAGE", "log", "line",
	"message" };

/*
 * Whether the record that holds its line in v is a shipper's.  "MESSAGE"
 * is journald's alone; "log", "line" and "message" are also what a
 * program's own JSON logger writes (python-json-logger's "message" with
 * "exc_info" beside it, say), whose other fields (a traceback, a setting)
 * would be lost if only the message were read: such a record is taken
 * for a shipper's only with a key the shipper adds, and otherwise goes
 * through as it is.
 */
static bool
sl_shipped(const json_t *root, const json_t *v)
{
	static const char *const evidence[] = {
		"kubernetes", "stream", "source_type", "labels", "date", "time",
		"timestamp", "logtag", "file", "host",
	};
	size_t i;

	if (v == json_object_get(root, "MESSAGE"))
		return true;
	for (i = 0; i < sizeof evidence / sizeof evidence[0]; i++)
		if (json_object_get(root, evidence[i]) != NULL)
			return true;
	return false;
}

/*
 * Whether the JSON line p[0..n) may be a record at all: sl_json reads one
 * only by a top-level key "streams", "data" or one of sl_message_keys,
 * and such a key, written without an escape, is in the line as it is,
 * quoted.  A line with no backslash and none of them quoted is no record
 * whatever it parses to, and is not parsed (a trainer's JSON metrics
 * line on every step would otherwise cost a jansson parse each).
 */
static bool
sl_may_record(const char *p, size_t n)
{
	static const char *const other[] = { "streams", "data" };
	size_t i, k, nk = sizeof sl_message_keys / sizeof sl_message_keys[0];

	const char *q = p, *end = p + n;

	if (memchr(p, '\\', n) != NULL)
		return true;
	/* Each quote, and whether a key and a quote follow it: one pass
	 * over the line, whatever the number of keys. */
	while ((q = memchr(q, '"', (size_t)(end - q))) != NULL) {
		k = (size_t)(q - p) + 1;
		if (k >= n)
			break;
		/* A key's first letter first: most quotes start none. */
		for (i = 0; i < nk + sizeof other / sizeof other[0]; i++) {
			const char *key = i < nk ? sl_message_keys[i] :
			    other[i - nk];
			size_t kn;

			if (key[0] != p[k])
				continue;
			kn = strlen(key);
			if (k + kn < n && p[k + kn] == '"' &&
			    memcmp(p + k, key, kn) == 0)
				return true;
		}
		q++;
	}
	return false;
}

/* A JSON record at p[0..n); false when it is none (it goes through). */
static bool
sl_json(sl_reader *r, const char *p, size_t n)
{
	json_error_t je;
	json_t *root;
	const json_t *v = NULL, *data, *x;
	const char *m;
	size_t mn, i;
	od_labels lab;
	char ts[OD_TIMESTAMP_MAX];
	bool docker, ended, ok = false;

	if (!sl_may_record(p, n))
		return false;
	root = json_loadb(p, n, JSON_ALLOW_NUL, &je);
	if (root == NULL)
		return false;
	if (!json_is_object(root))
		goto done;
	data = json_object_get(root, "data");
	if (json_object_get(root, "streams") != NULL) {
		ok = sl_loki_streams(r, json_object_get(root, "streams"));
		goto done;
	}
	if (json_is_object(data) && json_object_get(data, "result") != NULL) {
		ok = sl_loki_streams(r, json_object_get(data, "result"));
		goto done;
	}
	for (i = 0; i < sizeof sl_message_keys / sizeof sl_message_keys[0] &&
	    v == NULL; i++)
		v = json_object_get(root, sl_message_keys[i]);
	if (v == NULL || !sl_shipped(root, v) || !sl_message(r, v, &m, &mn))
		goto done;
	/* Docker's json-file record ({"log", "stream", "time"}, "attrs"
	 * with --log-opt labels): its line may go on in the next.  A
	 * shipper's record with "log" (Fluent Bit's, with its "kubernetes"
	 * or "logtag") is one line. */
	docker = json_object_get(root, "log") == v &&
	    json_is_string(json_object_get(root, "stream")) &&
	    json_is_string(json_object_get(root, "time")) &&
	    json_object_size(root) <= 3 + (json_object_get(root, "attrs") !=
	    NULL);
	/* The exception a program's JSON logger put beside the message
	 * (python-json-logger's "exc_info", others' "exception",
	 * "stack_trace"): its lines follow the message's, as a text
	 * formatter prints them. */
	for (i = 0, x = NULL; i < sizeof sl_exc_keys / sizeof sl_exc_keys[0] &&
	    x == NULL; i++)
		if (json_is_string(json_object_get(root, sl_exc_keys[i])))
			x = json_object_get(root, sl_exc_keys[i]);
	if (r->part != SL_PART_DOCKER || !docker) {
		sl_labels(root, &lab);
		sl_time(root, ts);
		sl_record_start(r, &lab, ts, x != NULL || sl_multiline(m, mn));
	}
	ended = sl_put_message(r, m, mn);
	if (x != NULL) {
		sl_put(r, "\n", 1);
		ended = sl_put_message(r, json_string_value(x),
		    json_string_length(x));
	}
	if (docker && !ended) {
		r->part = SL_PART_DOCKER;
	} else {
		r->part = SL_PART_NONE;
		sl_put(r, "\n", 1);
		sl_sync(r, r->in_lines + 1);
	}
	ok = true;
done:
	json_decref(root);
	return ok;
}

/*
 * Whether p[0..n) is a CRI line: *content is where its content starts,
 * *partial whether its tag marks it partial.
 */
static bool
sl_cri_parse(const char *p, size_t n, size_t *content, bool *partial)
{
	size_t t, s, tag, c;

	/* The kubelet writes RFC 3339 with a 'T' and an offset or 'Z': the
	 * cheap tests first, a plain log's lines start with digits too. */
	if (n < 30 || p[4] != '-' || p[10] != 'T')
		return false;
	t = sl_iso_time(p, n);
	if (t == 0 || t >= n || p[t] != ' ')
		return false;
	s = t + 1;
	if (n - s < 7 || (memcmp(p + s, "stdout ", 7) != 0 &&
	    memcmp(p + s, "stderr ", 7) != 0))
		return false;
	tag = s + 7;
	*partial = false;
	for (c = tag; c < n && c - tag < 16 && ((p[c] >= 'A' && p[c] <= 'Z') ||
	    p[c] == ':'); c++)
		*partial |= p[c] == 'P';
	if (c == tag || (c < n && p[c] != ' '))
		return false;
	*content = c < n ? c + 1 : c;
	return true;
}

/* A CRI line at p[0..n); false when it is none. */
static bool
sl_cri(sl_reader *r, const char *p, size_t n, bool nl)
{
	size_t c;
	bool partial;

	if (!sl_cri_parse(p, n, &c, &partial))
		return false;
	if (r->part == SL_PART_CRI) {
		sl_put(r, p + c, n - c);
	} else {
		sl_plain_start(r);
		sl_put(r, p, n);
	}
	if (partial) {
		r->part = SL_PART_CRI;
	} else {
		r->part = SL_PART_NONE;
		if (nl)
			sl_put(r, "\n", 1);
		sl_sync(r, r->in_lines + 1);
	}
	return true;
}

/* A whole candidate line p[0..n) (without its "\n"; nl: it had one). */
static void
sl_line(sl_reader *r, const char *p, size_t n, bool nl)
{
	size_t m = n;

	if (m > 0 && p[m - 1] == '\r')
		m--;
	if (m > 0 && p[0] == '{' && sl_json(r, p, m))
		return;
	if (m > 0 && p[0] >= '0' && p[0] <= '9' && sl_cri(r, p, m, nl))
		return;
	sl_plain_start(r);
	sl_put(r, p, n);
	if (nl)
		sl_put(r, "\n", 1);
	sl_sync(r, r->in_lines + 1);
}

/*
 * Whether the complete line p[0..n) (its "\n" not in n) is one that
 * goes through as it is: no record, and no CRI line but one that gives
 * the text it is.  A CRI line that is not partial, when no partial one is
 * open, is written as it is with its "\n" (sl_cri), and so goes through
 * with the plain lines around it, without a copy of its own, unless it
 * ends in "\r\n" (sl_cri leaves the '\r' out).
 */
static bool
sl_plain_line(const sl_reader *r, const char *p, size_t n)
{
	size_t c, m = n;
	bool partial;

	if (m > 0 && p[m - 1] == '\r')
		m--;
	if (m == 0)
		return true;
	if (p[0] == '{')
		return !sl_may_record(p, m);
	if (p[0] >= '0' && p[0] <= '9')
		return !sl_cri_parse(p, m, &c, &partial) ||
		    (!partial && r->part == SL_PART_NONE && m == n);
	return true;
}

/*
 * Plain lines go through in spans: the bytes from *span to i of the
 * input, *nls line breaks among them, are handed over at once when a line
 * of another kind comes or the input's piece ends.
 */
static void
sl_span(sl_reader *r, const char *p, size_t *span, size_t i, uint64_t *nls)
{
	if (i > *span)
		sl_put_lines(r, p + *span, i - *span, *nls);
	*span = i;
	*nls = 0;
}

void
sl_feed(sl_reader *r, const char *p, size_t n)
{
	size_t i = 0, span = 0;
	uint64_t nls = 0;

	if (n == 0)
		return;
	r->in_bytes += n;
	r->in_last = p[n - 1];
	while (i < n) {
		const char *nl;
		size_t e;

		if (r->state == SL_START) {
			char c = p[i];

			nl = memchr(p + i, '\n', n - i);
			e = nl != NULL ? (size_t)(nl - p) : n;
			if ((c == '{' || (c >= '0' && c <= '9')) && nl == NULL) {
				/* A candidate that goes on in the next piece:
				 * held. */
				sl_span(r, p, &span, i, &nls);
				r->state = SL_LINE;
				r->line_len = 0;
			} else if (nl != NULL && !sl_plain_line(r, p + i, e - i)) {
				/* A record or a CRI line, whole here: read in
				 * place. */
				sl_span(r, p, &span, i, &nls);
				sl_line(r, p + i, e - i, true);
				r->in_lines++;
				i = span = e + 1;
				continue;
			} else {
				/* A plain line: it joins the span, after what
				 * the last line left open. */
				if (r->part != SL_PART_NONE || r->cur_any) {
					sl_span(r, p, &span, i, &nls);
					sl_plain_start(r);
				}
				if (nl == NULL) {
					r->state = SL_PASS;
					break;
				}
				r->in_lines++;
				nls++;
				i = e + 1;
				continue;
			}
		}
		nl = memchr(p + i, '\n', n - i);
		e = nl != NULL ? (size_t)(nl - p) : n;
		if (r->state == SL_PASS) {
			/* The rest of a plain line begun in an earlier piece. */
			if (nl == NULL)
				break;
			r->in_lines++;
			nls++;
			i = e + 1;
			r->state = SL_START;
			continue;
		}
		if (r->line_len + (e - i) > SL_RECORD_MAX) {
			/* Too long for a record: through as it is. */
			sl_plain_start(r);
			sl_put(r, r->line, r->line_len);
			r->line_len = 0;
			r->state = SL_PASS;
			span = i;
			continue;
		}
		memcpy(r->line + r->line_len, p + i, e - i);
		r->line_len += e - i;
		i = e;
		if (nl != NULL) {
			i++;
			sl_line(r, r->line, r->line_len, true);
			r->in_lines++;
			r->line_len = 0;
			r->state = SL_START;
		}
		span = i;
	}
	if (r->state != SL_LINE)
		sl_span(r, p, &span, n, &nls);
	sl_flush(r);
}

void
sl_finish(sl_reader *r)
{
	if (r->state == SL_LINE && r->line_len > 0)
		sl_line(r, r->line, r->line_len, false);
	r->line_len = 0;
	r->state = SL_START;
	r->part = SL_PART_NONE;
	sl_flush(r);
}
