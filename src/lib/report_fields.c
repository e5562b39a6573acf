/*
 * report_fields.c: the fields of an event in the JSON report
 * (oomdoc.report/2), described once, in the order of the report: the
 * writer (od_event_to_json, for report_json.c) and the reader
 * (od_event_from_json, for live mode's src/live/report_read.c) both walk
 * these tables, so that a key is spelt in one place and a field read back
 * is the field that was written.  The null rule is report_json.h's.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "report.h"
#include "report_json.h"
#include "snapshot.h"

#define JF_AT(field) offsetof(od_event, field)
#define JF_CHARS(k, field) { .key = k, .type = OD_JSON_CHARS, \
	.at = JF_AT(field), .size = sizeof ((od_event *)0)->field }
#define JF_FIGURE(k, field) { .key = k, .type = OD_JSON_I64, .at = JF_AT(field) }

/* A copy of a string of the report, or NULL (also when out of memory:
 * *ok is then false). */
static char *
jf_dup(const json_t *v, bool *ok)
{
	char *s;

	if (!json_is_string(v))
		return NULL;
	s = strdup(json_string_value(v));
	*ok &= s != NULL;
	return s;
}

/* The names of the enums, as od_json_field.name wants them. */
static const char *
jf_confidence(int v)
{
	return od_confidence_name((od_confidence)v);
}

static const char *
jf_layout(int v)
{
	return od_layout_name((od_layout)v);
}

static const char *
jf_hint(int v)
{
	return od_hint_name((od_hint)v);
}

/* The kind: an unknown one is read as a raw CUDA failure, its name kept. */
static json_t *
jf_kind_get(const void *base, const od_json_ctx *cx)
{
	return od_json_text(od_kind_name(((const od_event *)base)->kind));
}

static bool
jf_kind_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;
	int k;

	cx->kind = json_string_value(v);
	ev->kind = OD_KIND_CUDA_RAW;
	for (k = 0; cx->kind != NULL && k < OD_KIND_COUNT; k++)
		if (strcmp(od_kind_name((od_kind)k), cx->kind) == 0)
			ev->kind = (od_kind)k;
	return true;
}

static json_t *
jf_input_get(const void *base, const od_json_ctx *cx)
{
	return od_json_text(rp_input_name(&cx->inputs[((const od_event *)
	    base)->input]));
}

static bool
jf_input_set(void *base, const json_t *v, od_json_ctx *cx)
{
	cx->input = json_string_value(v);
	return true;
}

static json_t *
jf_ranks_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;
	json_t *a = json_array();
	int i;

	for (i = 0; a != NULL && i < ev->nranks; i++)
		if (json_array_append_new(a, json_integer(ev->ranks[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static bool
jf_ranks_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;
	json_t *r;
	size_t i;

	json_array_foreach(v, i, r) {
		json_int_t k = json_integer_value(r);

		if (json_is_integer(r) && k >= 0 && k <= INT_MAX &&
		    !od_event_add_rank(ev, (int)k))
			return false; /* out of memory, as the setters say */
	}
	return true;
}

/* The message verbatim: never null, an empty string when there is none. */
static json_t *
jf_message_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;

	return od_escape_json(ev->message != NULL ? ev->message : "",
	    ev->message != NULL ? ev->message_len : 0);
}

static bool
jf_message_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;
	const unsigned char *s = (const unsigned char *)json_string_value(v);
	size_t n = json_string_length(v), k, len;
	unsigned cp;

	if (s == NULL)
		return true;
	/* At most OD_MESSAGE_MAX bytes, cut at a character's start. */
	for (k = 0; k < n; k += len) {
		len = od_utf8_decode(s + k, n - k, &cp);
		if (len == 0)
			len = 1;
		if (k + len > OD_MESSAGE_MAX)
			break;
	}
	ev->message = malloc(k + 1);
	if (ev->message == NULL)
		return false;
	memcpy(ev->message, s, k);
	ev->message[k] = '\0';
	ev->message_len = k;
	return true;
}

static json_t *
jf_exit_get(const void *base, const od_json_ctx *cx)
{
	const od_host *h = &((const od_event *)base)->host;

	return h->has_exit ? json_integer(h->exit_code) : json_null();
}

static bool
jf_exit_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_host *h = &((od_event *)base)->host;

	h->has_exit = json_is_integer(v);
	h->exit_code = json_integer_value(v);
	return true;
}

static const char *
jf_reading_what(int v)
{
	return od_reading_name(v);
}

/* One reading of the series (context.c), oldest first. */
static const od_json_field jf_reading[] = {
	{ .key = "step", .type = OD_JSON_I64, .at = offsetof(od_reading, step) },
	{ .key = "line", .type = OD_JSON_U64, .at = offsetof(od_reading, line) },
	{ .key = "bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_reading, bytes) },
	{ .key = "what", .type = OD_JSON_ENUM, .at = offsetof(od_reading, what),
	  .name = jf_reading_what, .count = OD_READING_COUNT },
	{ .key = "rank", .type = OD_JSON_INT, .at = offsetof(od_reading, rank) },
	{ .key = "device", .type = OD_JSON_INT,
	  .at = offsetof(od_reading, device) },
	{ .type = OD_JSON_END },
};

/* The memory readings of the metric lines: null when there were none. */
static const od_json_field jf_readings[] = {
	{ .key = "count", .type = OD_JSON_INT, .null = OD_JSON_NEVER_NULL,
	  .at = JF_AT(ctx.nreadings) },
	JF_FIGURE("first_bytes", ctx.mem_first),
	JF_FIGURE("last_bytes", ctx.mem_last),
	JF_FIGURE("max_bytes", ctx.mem_max),
	{ .type = OD_JSON_END },
};

static json_t *jf_object(const od_json_field *t, const void *base,
    const od_json_ctx *cx);
static bool jf_fill(const od_json_field *t, void *base, const json_t *obj,
    od_json_ctx *cx);

static json_t *
jf_readings_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;

	return ev->ctx.nreadings > 0 ? jf_object(jf_readings, ev, cx) :
	    json_null();
}

static bool
jf_readings_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;

	if (!json_is_object(v))
		return true;
	if (!jf_fill(jf_readings, ev, v, cx))
		return false;
	if (ev->ctx.nreadings < 0)
		ev->ctx.nreadings = 0;
	return true;
}

/* The score, to two decimals as the other reports show it. */
static json_t *
jf_score_get(const void *base, const od_json_ctx *cx)
{
	char buf[512];

	snprintf(buf, sizeof buf, "%.2f", ((const od_cause *)base)->score);
	return json_real(strtod(buf, NULL));
}

static bool
jf_score_set(void *base, const json_t *v, od_json_ctx *cx)
{
	if (json_is_number(v))
		((od_cause *)base)->score = json_number_value(v);
	return true;
}

/*
 * Evidence as objects: {"text", "lhs_bytes", "op", "rhs_bytes",
 * "within_percent"}, the last four null but for a comparison (and
 * within_percent null too when not close), so that a reader can check
 * that the operator holds.  Every key is always there: the schema
 * (schema/oomdoc.report-2.schema.json) requires them.
 */
static json_t *
jf_evidence_get(const void *base, const od_json_ctx *cx)
{
	const od_cause *c = base;
	json_t *a = json_array();
	int i;

	for (i = 0; a != NULL && i < c->nevidence; i++) {
		const od_evidence *e = &c->evidence[i];
		json_t *o = json_object();
		bool ok = o != NULL && od_json_set(o, "text",
		    od_json_text(e->text)) &&
		    od_json_set(o, "lhs_bytes", e->compare ?
		    json_integer(e->lhs) : json_null()) &&
		    od_json_set(o, "op", e->compare ? json_string(e->op) :
		    json_null()) &&
		    od_json_set(o, "rhs_bytes", e->compare ?
		    json_integer(e->rhs) : json_null()) &&
		    od_json_set(o, "within_percent", e->compare &&
		    e->near_pct >= 0 ? json_integer(e->near_pct) : json_null());

		if (!ok || json_array_append_new(a, o) != 0) {
			if (!ok)
				json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Read back from /2's objects, or from /1's strings. */
static bool
jf_evidence_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_cause *c = base;
	const json_t *e, *t, *op;
	size_t i;
	bool ok = true;

	json_array_foreach(v, i, e) {
		od_evidence *d = &c->evidence[c->nevidence];

		if (c->nevidence == OD_EVIDENCE_MAX)
			break;
		t = json_is_object(e) ? json_object_get(e, "text") : e;
		memset(d, 0, sizeof *d);
		d->near_pct = -1;
		/* null is how an empty line was written. */
		if (json_is_string(t))
			d->text = jf_dup(t, &ok);
		else if (json_is_null(t))
			ok = (d->text = strdup("")) != NULL;
		else
			continue;
		c->nevidence++;
		op = json_object_get(e, "op");
		if (json_is_string(op) && json_string_length(op) < sizeof d->op &&
		    json_is_integer(json_object_get(e, "lhs_bytes")) &&
		    json_is_integer(json_object_get(e, "rhs_bytes"))) {
			d->compare = true;
			snprintf(d->op, sizeof d->op, "%s", json_string_value(op));
			d->lhs = json_integer_value(json_object_get(e,
			    "lhs_bytes"));
			d->rhs = json_integer_value(json_object_get(e,
			    "rhs_bytes"));
			if (json_is_integer(json_object_get(e, "within_percent")))
				d->near_pct = (int)json_integer_value(
				    json_object_get(e, "within_percent"));
		}
	}
	return ok;
}

static json_t *
jf_explanation_get(const void *base, const od_json_ctx *cx)
{
	return od_json_text(((const od_cause *)base)->explanation);
}

static bool
jf_explanation_set(void *base, const json_t *v, od_json_ctx *cx)
{
	bool ok = true;

	((od_cause *)base)->explanation = jf_dup(v, &ok);
	return ok;
}

/* {"NAME": "value"} for a fix's environment line or configuration key,
 * {} when it has none. */
static bool
jf_pair(json_t *fix, const char *key, const char *name, const char *value)
{
	json_t *o = json_object();

	if (o == NULL)
		return false;
	if (name == NULL)
		return od_json_set(fix, key, o);
	/* The name is a key, valid UTF-8 like any string. */
	{
		json_t *k = od_escape_json(name, strlen(name));
		const char *ks = json_string_value(k);
		bool ok = ks != NULL && od_json_set(o, ks, od_json_text(value));

		json_decref(k);
		if (!ok) {
			json_decref(o);
			return false;
		}
	}
	return od_json_set(fix, key, o);
}

/* A value of a change: an integer when it is one. */
static json_t *
jf_change_value(double v)
{
	if (v == (double)(json_int_t)v && v >= -9007199254740992.0 &&
	    v <= 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* A fix's changes: [{"setting", "from", "to"}], [] when it has none. */
static bool
jf_changes(json_t *fix, const od_fix *f)
{
	json_t *a = json_array();
	int k;

	for (k = 0; a != NULL && k < f->nchanges; k++) {
		json_t *o = json_object();
		bool ok = o != NULL && od_json_set(o, "setting",
		    od_json_text(f->changes[k].setting)) &&
		    od_json_set(o, "from", jf_change_value(f->changes[k].from)) &&
		    od_json_set(o, "to", jf_change_value(f->changes[k].to));

		/* The array takes o, and releases it when it cannot. */
		if (!ok || json_array_append_new(a, o) != 0) {
			if (!ok)
				json_decref(o);
			json_decref(a);
			return false;
		}
	}
	return od_json_set(fix, "changes", a);
}

/* Reads a fix's changes back; the settings borrow the report's strings. */
static void
jf_changes_set(const json_t *v, od_fix *f)
{
	const json_t *e;
	size_t i;

	json_array_foreach(v, i, e) {
		const json_t *s = json_object_get(e, "setting");
		const json_t *from = json_object_get(e, "from");
		const json_t *to = json_object_get(e, "to");

		if (f->nchanges == OD_CHANGES_MAX)
			break;
		if (!json_is_string(s) || !json_is_number(from) ||
		    !json_is_number(to))
			continue;
		f->changes[f->nchanges].setting = json_string_value(s);
		f->changes[f->nchanges].from = json_number_value(from);
		f->changes[f->nchanges].to = json_number_value(to);
		f->nchanges++;
	}
}

static json_t *
jf_fixes_get(const void *base, const od_json_ctx *cx)
{
	const od_cause *c = base;
	json_t *a = json_array();
	int i;

	for (i = 0; a != NULL && i < c->nfixes; i++) {
		const od_fix *f = &c->fixes[i];
		json_t *o = json_object();
		bool ok = o != NULL && od_json_set(o, "id", od_json_text(f->id)) &&
		    od_json_set(o, "text", od_json_text(f->text)) &&
		    jf_pair(o, "env", f->env_name, f->env_value) &&
		    od_json_set(o, "code", f->code == NULL ? json_null() :
		    od_escape_json(f->code, strlen(f->code))) &&
		    jf_pair(o, "config", f->config_key, f->config_value) &&
		    jf_changes(o, f);

		if (!ok || json_array_append_new(a, o) != 0) {
			if (!ok)
				json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The one member of {"NAME": "value"}, copied; false when out of memory. */
static bool
jf_pair_set(const json_t *v, char **name, char **value)
{
	const char *k;
	json_t *x;
	bool ok = true;

	/* jansson's iterator takes the object as not const; it only reads. */
	json_object_foreach((json_t *)(uintptr_t)v, k, x) {
		*name = strdup(k);
		*value = json_is_string(x) ? jf_dup(x, &ok) : strdup("");
		return ok && *name != NULL && *value != NULL;
	}
	return true;
}

/* A fix's text is never NULL (the text report writes it). */
static bool
jf_fixes_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_cause *c = base;
	const json_t *e;
	size_t i;
	bool ok = true;

	json_array_foreach(v, i, e) {
		od_fix *f;

		if (c->nfixes == OD_FIXES_MAX)
			break;
		if (!json_is_object(e))
			continue;
		/* Room for the array's fixes, at most OD_FIXES_MAX. */
		if (c->fixes == NULL && (c->fixes = calloc(json_array_size(v) <
		    OD_FIXES_MAX ? json_array_size(v) : OD_FIXES_MAX,
		    sizeof *c->fixes)) == NULL)
			return false;
		f = &c->fixes[c->nfixes++];
		f->id = json_string_value(json_object_get(e, "id"));
		jf_changes_set(json_object_get(e, "changes"), f);
		f->text = json_is_string(json_object_get(e, "text")) ?
		    jf_dup(json_object_get(e, "text"), &ok) : strdup("");
		/* A code change: a string (even an empty one) when there is
		 * one, null (or, before the key was always written, absent)
		 * when there is none. */
		f->code = jf_dup(json_object_get(e, "code"), &ok);
		ok = ok && f->text != NULL &&
		    jf_pair_set(json_object_get(e, "env"), &f->env_name,
		    &f->env_value) &&
		    jf_pair_set(json_object_get(e, "config"), &f->config_key,
		    &f->config_value);
		if (!ok)
			return false;
	}
	return true;
}

static const od_json_field jf_cause[] = {
	{ .key = "rule", .type = OD_JSON_CSTR, .at = offsetof(od_cause, rule) },
	{ .key = "title", .type = OD_JSON_CSTR,
	  .at = offsetof(od_cause, title) },
	{ .key = "score", .type = OD_JSON_CUSTOM, .get = jf_score_get,
	  .set = jf_score_set },
	{ .key = "confidence", .type = OD_JSON_ENUM,
	  .at = offsetof(od_cause, confidence), .name = jf_confidence,
	  .count = OD_CONF_HIGH + 1 },
	{ .key = "cause_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_cause, cause_bytes) },
	{ .key = "explains_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_cause, explains_bytes) },
	{ .key = "explanation", .type = OD_JSON_CUSTOM,
	  .get = jf_explanation_get, .set = jf_explanation_set },
	{ .key = "evidence", .type = OD_JSON_CUSTOM, .get = jf_evidence_get,
	  .set = jf_evidence_set },
	{ .key = "fixes", .type = OD_JSON_CUSTOM, .get = jf_fixes_get,
	  .set = jf_fixes_set },
	{ .key = "confirm_with", .type = OD_JSON_CSTR,
	  .at = offsetof(od_cause, probe) },
	{ .type = OD_JSON_END },
};

static json_t *
jf_causes_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;
	json_t *a = json_array();
	int i;

	for (i = 0; a != NULL && i < ev->ncauses; i++)
		if (json_array_append_new(a, jf_object(jf_cause,
		    &ev->causes[i], cx)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Causes without a rule are skipped; OD_CAUSES_MAX are kept.  A rule
 * read as an empty text (JSON's "" or a text that starts with \u0000,
 * which the C string ends at once) is no rule: its cause would be written
 * with a null rule and skipped when read again (fuzz_report_read). */
static bool
jf_causes_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;
	size_t i, n = json_array_size(v);
	const char *rule;
	json_t *c;

	if (n == 0)
		return true;
	ev->causes = calloc(n < OD_CAUSES_MAX ? n : OD_CAUSES_MAX,
	    sizeof *ev->causes);
	if (ev->causes == NULL)
		return false;
	json_array_foreach(v, i, c) {
		od_cause *oc = &ev->causes[ev->ncauses];

		if (ev->ncauses == OD_CAUSES_MAX)
			break;
		rule = json_string_value(json_object_get(c, "rule"));
		if (rule == NULL || rule[0] == '\0')
			continue;
		oc->confidence = OD_CONF_LOW;
		if (!jf_fill(jf_cause, oc, c, cx)) {
			/* Not counted yet: what it holds is freed here. */
			od_cause_clear(oc);
			return false;
		}
		ev->ncauses++;
	}
	return true;
}

static const od_json_field jf_proc[] = {
	{ .key = "pid", .type = OD_JSON_I64, .null = OD_JSON_NEVER_NULL,
	  .at = offsetof(od_proc, pid) },
	{ .key = "bytes", .type = OD_JSON_I64, .at = offsetof(od_proc, bytes) },
	{ .type = OD_JSON_END },
};

/*
 * The memory account (account.c): a list of {"part", "bytes", "derived"}
 * whose bytes add up to total_bytes when all are known; null without a
 * capacity.  Derived from the figures above, so not read back.
 */
static json_t *
jf_account_get(const void *base, const od_json_ctx *cx)
{
	od_account a;
	json_t *l;
	int k;

	od_account_of(base, &a);
	if (!a.valid)
		return json_null();
	l = json_array();
	for (k = 0; l != NULL && k < OD_PART_COUNT; k++) {
		json_t *o = json_object();
		bool ok = o != NULL && od_json_set(o, "part",
		    json_string(od_part_name((od_part)k))) &&
		    od_json_set(o, "bytes", a.part[k].known ?
		    json_integer(a.part[k].bytes) : json_null()) &&
		    od_json_set(o, "derived", a.part[k].known ?
		    json_boolean(a.part[k].derived) : json_null());

		if (!ok || json_array_append_new(l, o) != 0) {
			if (!ok)
				json_decref(o);
			json_decref(l);
			return NULL;
		}
	}
	return l;
}

static json_t *
jf_shortfall_get(const void *base, const od_json_ctx *cx)
{
	od_account a;

	od_account_of(base, &a);
	return od_json_figure(a.shortfall);
}

static json_t *
jf_notes_get(const void *base, const od_json_ctx *cx)
{
	od_account a;
	json_t *l = json_array();
	int k;

	od_account_of(base, &a);
	for (k = 0; l != NULL && k < a.nnotes; k++)
		if (json_array_append_new(l, json_string(a.notes[k])) != 0) {
			json_decref(l);
			return NULL;
		}
	return l;
}

/* The input of a per-rank row, by name (not read back: the reader keeps
 * the event's input only). */
static json_t *
jf_row_input_get(const void *base, const od_json_ctx *cx)
{
	return od_json_text(rp_input_name(&cx->inputs[((const od_rank_row *)
	    base)->input]));
}

/* Every input that reported the event, with the line of its first
 * report there, the event's own input and line first.  The reader knows
 * no input but the event's own (cx->input, read before this key), so
 * only that one's entry comes back. */
static json_t *
jf_seen_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;
	json_t *a = json_array(), *o;
	int i;

	for (i = 0; a != NULL && i < ev->nseen; i++) {
		o = json_object();
		if (o == NULL || json_array_append_new(a, o) != 0 ||
		    !od_json_set(o, "name", od_json_text(rp_input_name(
		    &cx->inputs[ev->seen[i].input]))) ||
		    !od_json_set(o, "line",
		    json_integer((json_int_t)ev->seen[i].line))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static bool
jf_seen_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;
	json_t *o;
	size_t i;

	json_array_foreach(v, i, o) {
		const char *name = json_string_value(json_object_get(o, "name"));
		json_t *line = json_object_get(o, "line");

		if (name == NULL || cx->input == NULL ||
		    strcmp(name, cx->input) != 0 || !json_is_integer(line) ||
		    json_integer_value(line) < 0 || ev->nseen > 0)
			continue;
		ev->seen = malloc(sizeof *ev->seen);
		if (ev->seen == NULL)
			return false;
		ev->seen[0].input = ev->input;
		ev->seen[0].line = (uint64_t)json_integer_value(line);
		ev->nseen = ev->seen_cap = 1;
	}
	return true;
}

/*
 * The labels of the record or prefix the event's line came with
 * (structured.c, prefix.c): an object with the labels known, {} when
 * none is.
 */
static const struct {
	const char *key;
	size_t at;
} jf_label_keys[] = {
	{ .key = "pod", .at = offsetof(od_labels, pod) },
	{ .key = "container", .at = offsetof(od_labels, container) },
	{ .key = "namespace", .at = offsetof(od_labels, namespace_) },
	{ .key = "host", .at = offsetof(od_labels, host) },
};

static json_t *
jf_labels_get(const void *base, const od_json_ctx *cx)
{
	const od_labels *l = &((const od_event *)base)->labels;
	json_t *o = json_object();
	size_t i;

	for (i = 0; o != NULL && i < sizeof jf_label_keys /
	    sizeof jf_label_keys[0]; i++) {
		const char *v = (const char *)l + jf_label_keys[i].at;

		if (v[0] != '\0' && !od_json_set(o, jf_label_keys[i].key,
		    od_json_text(v))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static bool
jf_labels_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_labels *l = &((od_event *)base)->labels;
	size_t i;

	for (i = 0; i < sizeof jf_label_keys / sizeof jf_label_keys[0]; i++) {
		const char *s = json_string_value(json_object_get(v,
		    jf_label_keys[i].key));

		if (s != NULL)
			snprintf((char *)l + jf_label_keys[i].at, OD_LABEL_MAX,
			    "%s", s);
	}
	return true;
}

/* A row of the per-rank table (event.c). */
static const od_json_field jf_rank_row[] = {
	{ .key = "rank", .type = OD_JSON_INT,
	  .at = offsetof(od_rank_row, rank) },
	{ .key = "device", .type = OD_JSON_INT,
	  .at = offsetof(od_rank_row, device) },
	{ .key = "input", .type = OD_JSON_CUSTOM, .get = jf_row_input_get },
	{ .key = "line", .type = OD_JSON_U64,
	  .at = offsetof(od_rank_row, line) },
	{ .key = "requested_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_rank_row, requested) },
	{ .key = "free_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_rank_row, free) },
	{ .key = "allocated_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_rank_row, allocated) },
	{ .key = "reserved_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_rank_row, reserved) },
	{ .key = "total_bytes", .type = OD_JSON_I64,
	  .at = offsetof(od_rank_row, total) },
	{ .type = OD_JSON_END },
};

static const od_json_field jf_memory[] = {
	JF_FIGURE("requested_bytes", mem.requested),
	JF_FIGURE("total_bytes", mem.total),
	JF_FIGURE("free_bytes", mem.free),
	JF_FIGURE("allocated_bytes", mem.allocated),
	JF_FIGURE("reserved_bytes", mem.reserved),
	JF_FIGURE("reserved_unallocated_bytes", mem.reserved_unallocated),
	JF_FIGURE("process_in_use_bytes", mem.process_in_use),
	JF_FIGURE("non_framework_bytes", mem.non_framework),
	JF_FIGURE("allowed_bytes", mem.allowed),
	JF_FIGURE("private_pools_bytes", mem.private_pools),
	JF_FIGURE("peak_bytes", mem.peak),
	{ .key = "other_processes", .type = OD_JSON_ARRAY,
	  .at = JF_AT(mem.procs), .fields = jf_proc, .stride = sizeof(od_proc),
	  .count_at = JF_AT(mem.nprocs), .max = OD_PROCS_MAX },
	{ .key = "other_processes_omitted", .type = OD_JSON_INT,
	  .null = OD_JSON_NEVER_NULL, .at = JF_AT(mem.procs_dropped) },
	{ .key = "account", .type = OD_JSON_CUSTOM, .get = jf_account_get },
	{ .key = "account_notes", .type = OD_JSON_CUSTOM, .get = jf_notes_get },
	{ .key = "shortfall_bytes", .type = OD_JSON_CUSTOM,
	  .get = jf_shortfall_get },
	{ .type = OD_JSON_END },
};

/* What followed the run's first failure (od_aftermath). */
static const od_json_field jf_after[] = {
	{ .key = "nccl_watchdog", .type = OD_JSON_INT,
	  .null = OD_JSON_NEVER_NULL, .at = JF_AT(after.watchdog) },
	{ .key = "nccl_watchdog_rank", .type = OD_JSON_INT,
	  .at = JF_AT(after.watchdog_rank) },
	JF_FIGURE("nccl_watchdog_line", after.watchdog_line),
	{ .key = "sigterm", .type = OD_JSON_INT, .null = OD_JSON_NEVER_NULL,
	  .at = JF_AT(after.sigterm) },
	{ .key = "root_cause_rank", .type = OD_JSON_INT,
	  .at = JF_AT(after.root_cause_rank) },
	JF_FIGURE("root_cause_line", after.root_cause_line),
	{ .type = OD_JSON_END },
};

static const od_json_field jf_host[] = {
	JF_FIGURE("pid", host.pid),
	JF_CHARS("process", host.process),
	JF_FIGURE("total_vm_bytes", host.total_vm),
	JF_FIGURE("anon_rss_bytes", host.anon_rss),
	JF_FIGURE("file_rss_bytes", host.file_rss),
	JF_FIGURE("shmem_rss_bytes", host.shmem_rss),
	JF_FIGURE("limit_bytes", host.limit),
	JF_FIGURE("usage_bytes", host.usage),
	{ .key = "exit_code", .type = OD_JSON_CUSTOM, .get = jf_exit_get,
	  .set = jf_exit_set },
	JF_CHARS("signal", host.signal),
	JF_CHARS("job", host.job),
	/* The event's labels (od_labels), also under "labels". */
	JF_CHARS("pod", labels.pod),
	JF_CHARS("namespace", labels.namespace_),
	JF_CHARS("container", labels.container),
	{ .type = OD_JSON_END },
};

static const od_json_field jf_frame[] = {
	{ .key = "file", .type = OD_JSON_CHARS, .at = offsetof(od_frame, file),
	  .size = sizeof ((od_frame *)0)->file },
	{ .key = "line", .type = OD_JSON_I64, .null = OD_JSON_NEVER_NULL,
	  .at = offsetof(od_frame, line) },
	{ .key = "function", .type = OD_JSON_CHARS,
	  .at = offsetof(od_frame, func), .size = sizeof ((od_frame *)0)->func },
	{ .key = "code", .type = OD_JSON_CHARS, .at = offsetof(od_frame, code),
	  .size = sizeof ((od_frame *)0)->code },
	{ .key = "user", .type = OD_JSON_BOOL, .at = offsetof(od_frame, user) },
	{ .type = OD_JSON_END },
};

static const od_json_field jf_context[] = {
	JF_CHARS("exception", exception),
	JF_CHARS("error", error),
	JF_CHARS("tensor_shape", tensor_shape),
	JF_CHARS("dtype", dtype),
	JF_CHARS("allocator", allocator),
	{ .key = "hint", .type = OD_JSON_ENUM, .at = JF_AT(hint),
	  .name = jf_hint, .count = OD_HINT_EXPANDABLE + 1 },
	JF_FIGURE("step", step),
	JF_CHARS("phase", phase),
	{ .key = "frames", .type = OD_JSON_ARRAY, .at = JF_AT(frames),
	  .fields = jf_frame, .stride = sizeof(od_frame),
	  .count_at = JF_AT(nframes), .max = OD_FRAMES_MAX, .heap = true },
	JF_CHARS("alloc_conf", ctx.alloc_conf),
	JF_CHARS("xla_conf", ctx.xla_conf),
	JF_CHARS("tf_allocator", ctx.tf_allocator),
	JF_CHARS("precision", ctx.precision),
	{ .key = "grad_checkpointing", .type = OD_JSON_TRISTATE,
	  .at = JF_AT(ctx.grad_ckpt) },
	JF_FIGURE("batch_size", ctx.batch_size),
	JF_FIGURE("accum_steps", ctx.accum_steps),
	JF_FIGURE("seq_len", ctx.seq_len),
	{ .key = "memory_readings", .type = OD_JSON_CUSTOM,
	  .get = jf_readings_get, .set = jf_readings_set },
	{ .key = "readings", .type = OD_JSON_ARRAY, .at = JF_AT(ctx.readings),
	  .fields = jf_reading, .stride = sizeof(od_reading),
	  .count_at = JF_AT(ctx.nkept), .max = OD_READINGS_MAX, .heap = true },
	{ .type = OD_JSON_END },
};

static json_t *jf_object(const od_json_field *t, const void *base,
    const od_json_ctx *cx);
static bool jf_fill(const od_json_field *t, void *base, const json_t *obj,
    od_json_ctx *cx);

static const char *
jf_verdict(int v)
{
	const char *n = od_snapshot_verdict_name((od_snap_verdict)v);

	return n != NULL ? n : "unknown";
}

/* The figures of a memory snapshot joined to the event (snapshot.c). */
static const od_json_field jf_snapshot[] = {
	{ .key = "verdict", .type = OD_JSON_ENUM, .at = JF_AT(snap.verdict),
	  .name = jf_verdict, .count = OD_SNAP_INCONCLUSIVE + 1 },
	{ .key = "device", .type = OD_JSON_INT, .at = JF_AT(snap.device) },
	{ .key = "from_trace", .type = OD_JSON_BOOL,
	  .at = JF_AT(snap.from_trace) },
	JF_FIGURE("request_bytes", snap.request),
	JF_FIGURE("device_free_bytes", snap.device_free),
	JF_FIGURE("segments", snap.segments),
	JF_FIGURE("reserved_bytes", snap.reserved),
	JF_FIGURE("allocated_bytes", snap.allocated),
	JF_FIGURE("inactive_bytes", snap.inactive),
	JF_FIGURE("largest_free_bytes", snap.largest_free),
	JF_FIGURE("split_free_bytes", snap.split_free),
	JF_FIGURE("pending_free_bytes", snap.pending_free),
	JF_FIGURE("pending_free_blocks", snap.pending_blocks),
	JF_FIGURE("expandable_offer_bytes", snap.expandable_offer),
	{ .key = "expandable", .type = OD_JSON_TRISTATE,
	  .at = JF_AT(snap.expandable) },
	{ .key = "history", .type = OD_JSON_BOOL, .at = JF_AT(snap.history) },
	JF_CHARS("owner", snap.owner),
	JF_FIGURE("owner_bytes", snap.owner_bytes),
	{ .type = OD_JSON_END },
};

/* The snapshot's object, null when none was joined. */
static json_t *
jf_snapshot_get(const void *base, const od_json_ctx *cx)
{
	const od_event *ev = base;

	return ev->snap.present ? jf_object(jf_snapshot, base, cx) :
	    json_null();
}

static bool
jf_snapshot_set(void *base, const json_t *v, od_json_ctx *cx)
{
	od_event *ev = base;

	if (!json_is_object(v))
		return true;
	ev->snap.present = true;
	return jf_fill(jf_snapshot, base, v, cx);
}

const od_json_field od_event_fields[] = {
	{ .key = "kind", .type = OD_JSON_CUSTOM, .get = jf_kind_get,
	  .set = jf_kind_set },
	{ .key = "framework", .type = OD_JSON_CSTR, .at = JF_AT(framework) },
	{ .key = "format", .type = OD_JSON_ENUM, .at = JF_AT(layout),
	  .name = jf_layout, .count = OD_LAYOUT_COUNT },
	{ .key = "fatal", .type = OD_JSON_BOOL, .at = JF_AT(fatal) },
	{ .key = "confidence", .type = OD_JSON_ENUM, .at = JF_AT(confidence),
	  .name = jf_confidence, .count = OD_CONF_HIGH + 1 },
	{ .key = "confirm_with", .type = OD_JSON_CSTR, .at = JF_AT(verify_hint) },
	{ .key = "input", .type = OD_JSON_CUSTOM, .get = jf_input_get,
	  .set = jf_input_set },
	{ .key = "line", .type = OD_JSON_U64, .at = JF_AT(line) },
	{ .key = "end_line", .type = OD_JSON_U64, .at = JF_AT(end_line) },
	{ .key = "inputs", .type = OD_JSON_CUSTOM, .get = jf_seen_get,
	  .set = jf_seen_set },
	{ .key = "rank", .type = OD_JSON_INT, .at = JF_AT(rank) },
	{ .key = "ranks", .type = OD_JSON_CUSTOM, .get = jf_ranks_get,
	  .set = jf_ranks_set },
	{ .key = "device", .type = OD_JSON_INT, .at = JF_AT(device) },
	JF_CHARS("timestamp", timestamp),
	{ .key = "labels", .type = OD_JSON_CUSTOM, .get = jf_labels_get,
	  .set = jf_labels_set },
	{ .key = "occurrences", .type = OD_JSON_U64, .at = JF_AT(occurrences) },
	{ .key = "first_failure", .type = OD_JSON_BOOL,
	  .at = JF_AT(first_failure) },
	{ .key = "secondary", .type = OD_JSON_CSTR, .at = JF_AT(secondary) },
	{ .key = "aftermath", .type = OD_JSON_OBJECT, .fields = jf_after },
	{ .key = "per_rank", .type = OD_JSON_ARRAY, .at = JF_AT(per_rank),
	  .fields = jf_rank_row, .stride = sizeof(od_rank_row),
	  .count_at = JF_AT(nper_rank), .max = OD_RANK_ROWS_MAX,
	  .heap = true },
	{ .key = "per_rank_omitted", .type = OD_JSON_INT,
	  .null = OD_JSON_NEVER_NULL, .at = JF_AT(per_rank_dropped) },
	{ .key = "message", .type = OD_JSON_CUSTOM, .get = jf_message_get,
	  .set = jf_message_set },
	{ .key = "message_truncated", .type = OD_JSON_BOOL,
	  .at = JF_AT(message_cut) },
	{ .key = "memory", .type = OD_JSON_OBJECT, .fields = jf_memory },
	{ .key = "host", .type = OD_JSON_OBJECT, .fields = jf_host },
	{ .key = "context", .type = OD_JSON_OBJECT, .fields = jf_context },
	{ .key = "snapshot", .type = OD_JSON_CUSTOM, .get = jf_snapshot_get,
	  .set = jf_snapshot_set },
	{ .key = "causes", .type = OD_JSON_CUSTOM, .get = jf_causes_get,
	  .set = jf_causes_set },
	JF_CHARS("fingerprint", fingerprint),
	{ .type = OD_JSON_END },
};

/* The field of f in base, by its type. */
#define JF_FIELD(type, base, f) \
	((type *)(void *)((char *)(base) + (f)->at))
#define JF_CFIELD(type, base, f) \
	((const type *)(const void *)((const char *)(base) + (f)->at))
typedef const char *jf_cstr;

static json_t *
jf_number(int64_t v, const od_json_field *f)
{
	return f->null == OD_JSON_NEVER_NULL ? json_integer(v) :
	    od_json_figure(v);
}

static json_t *
jf_text(const char *s, const od_json_field *f)
{
	if (f->null != OD_JSON_NEVER_NULL)
		return od_json_text(s);
	return od_escape_json(s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

static json_t *
jf_get(const od_json_field *f, const void *base, const od_json_ctx *cx)
{
	switch (f->type) {
	case OD_JSON_I64:
		return jf_number(*JF_CFIELD(int64_t, base, f), f);
	case OD_JSON_INT:
		return jf_number(*JF_CFIELD(int, base, f), f);
	case OD_JSON_U64:
		return json_integer((json_int_t)*JF_CFIELD(uint64_t, base, f));
	case OD_JSON_BOOL:
		return json_boolean(*JF_CFIELD(bool, base, f));
	case OD_JSON_TRISTATE: {
		int v = *JF_CFIELD(int, base, f);

		return v < 0 ? json_null() : json_boolean(v);
	}
	case OD_JSON_CHARS:
		return jf_text(JF_CFIELD(char, base, f), f);
	case OD_JSON_CSTR:
		return jf_text(*JF_CFIELD(jf_cstr, base, f), f);
	case OD_JSON_ENUM:
		return jf_text(f->name(*JF_CFIELD(int, base, f)), f);
	case OD_JSON_OBJECT:
		return jf_object(f->fields, base, cx);
	case OD_JSON_ARRAY: {
		int i, n = *(const int *)(const void *)((const char *)base +
		    f->count_at);
		const char *el = f->heap ? *JF_CFIELD(jf_cstr, base, f) :
		    (const char *)base + f->at;
		json_t *a = json_array();

		for (i = 0; a != NULL && el != NULL && i < n && i < f->max; i++)
			if (json_array_append_new(a, jf_object(f->fields,
			    el + (size_t)i * f->stride, cx)) != 0) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	case OD_JSON_CUSTOM:
		return f->get(base, cx);
	case OD_JSON_END:
		break;
	}
	return NULL;
}

/* The object of the fields of t in base; NULL when out of memory. */
static json_t *
jf_object(const od_json_field *t, const void *base, const od_json_ctx *cx)
{
	json_t *o = json_object();

	for (; o != NULL && t->type != OD_JSON_END; t++)
		if (!od_json_set(o, t->key, jf_get(t, base, cx))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Copies a string into a buffer of size bytes, cut at a character. */
static void
jf_copy(char *buf, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k, len;
	unsigned cp;

	for (k = 0; k < n; k += len) {
		len = od_utf8_decode(p + k, n - k, &cp);
		if (len == 0)
			len = 1;
		if (k + len >= size)
			break;
	}
	memcpy(buf, s, k);
	buf[k] = '\0';
}

/*
 * Sets the field of f in base from v (NULL when the key is absent): a
 * number the report does not give is read as -1, the "not given" of the
 * event; a value of another type changes nothing else.
 */
static bool
jf_set(const od_json_field *f, void *base, const json_t *v, od_json_ctx *cx)
{
	json_int_t i = json_integer_value(v);
	bool isint = json_is_integer(v);
	bool known = isint && (f->null == OD_JSON_NEVER_NULL || i >= 0);
	int k;

	switch (f->type) {
	case OD_JSON_I64:
		if (known || f->null != OD_JSON_NEVER_NULL)
			*JF_FIELD(int64_t, base, f) = known ? i : OD_UNKNOWN;
		break;
	case OD_JSON_INT:
		known = known && i >= INT_MIN && i <= INT_MAX;
		if (known || f->null != OD_JSON_NEVER_NULL)
			*JF_FIELD(int, base, f) = known ? (int)i : -1;
		break;
	case OD_JSON_U64:
		if (isint && i >= 0)
			*JF_FIELD(uint64_t, base, f) = (uint64_t)i;
		break;
	case OD_JSON_BOOL:
		if (json_is_boolean(v))
			*JF_FIELD(bool, base, f) = json_is_true(v);
		break;
	case OD_JSON_TRISTATE:
		*JF_FIELD(int, base, f) = json_is_boolean(v) ?
		    json_is_true(v) : -1;
		break;
	case OD_JSON_CHARS:
		if (json_is_string(v))
			jf_copy(JF_FIELD(char, base, f), f->size,
			    json_string_value(v));
		break;
	case OD_JSON_CSTR:
		*JF_FIELD(jf_cstr, base, f) = json_string_value(v);
		break;
	case OD_JSON_ENUM:
		for (k = 0; json_is_string(v) && k < f->count; k++)
			if (f->name(k) != NULL &&
			    strcmp(f->name(k), json_string_value(v)) == 0)
				*JF_FIELD(int, base, f) = k;
		break;
	case OD_JSON_OBJECT:
		return !json_is_object(v) || jf_fill(f->fields, base, v, cx);
	case OD_JSON_ARRAY: {
		int *n = (int *)(void *)((char *)base + f->count_at);
		char *el = (char *)base + f->at;
		const json_t *e;
		size_t at;

		json_array_foreach(v, at, e) {
			if (*n == f->max)
				break;
			if (!json_is_object(e))
				continue;
			if (f->heap) {
				char **p = JF_FIELD(char *, base, f);

				/* Zeroed: a member the object lacks reads as
				 * the array in place would have it. */
				if (*p == NULL && (*p = calloc((size_t)f->max,
				    f->stride)) == NULL)
					return false;
				el = *p;
			}
			if (!jf_fill(f->fields, el + (size_t)*n * f->stride, e,
			    cx))
				return false;
			(*n)++;
		}
		break;
	}
	case OD_JSON_CUSTOM:
		return f->set == NULL || f->set(base, v, cx);
	case OD_JSON_END:
		break;
	}
	return true;
}

static bool
jf_fill(const od_json_field *t, void *base, const json_t *obj,
    od_json_ctx *cx)
{
	for (; t->type != OD_JSON_END; t++)
		if (!jf_set(t, base, json_object_get(obj, t->key), cx))
			return false;
	return true;
}

json_t *
od_event_to_json(const od_event *ev, const od_json_ctx *cx)
{
	return jf_object(od_event_fields, ev, cx);
}

bool
od_event_from_json(od_event *ev, const json_t *obj, od_json_ctx *cx)
{
	/* A report that does not say is taken to report a failure. */
	ev->fatal = true;
	if (!jf_fill(od_event_fields, ev, obj, cx))
		return false;
	/* The series is the event's GPU's, as cx_attach chose it. */
	ev->ctx.series_device = ev->device;
	return true;
}
