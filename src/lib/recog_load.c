/*
 * recog_load.c: loading the recognisers of every stack but PyTorch's
 * (recog_table.h) from the value of a file's "recognisers" key.
 *
 * Each recogniser is a mapping:
 *
 *   id: cuda-error-oom         required: letters, digits, '.', '_', '-'
 *   kind: cuda_raw             required: a kind of the JSON report
 *   framework: pytorch         optional: the kind's when not given
 *   confidence: high           required: high, medium or low
 *   fatal: false               optional (true): false, a warning always
 *   quiet_in_prose: true       optional (false): no event where the
 *                              line only talks of the message
 *                              (rg_mention: advice, a question, a
 *                              heading, a glossary, ...)
 *   confirm: "..."             low confidence only, and required there:
 *                              what would confirm the weak evidence
 *   anchors: [ ... ]           required: literal strings, or mappings
 *                              {text: "...", caseless: true}
 *   pattern: '...'             required: a PCRE2 pattern, or a list of
 *                              pieces joined with nothing between them
 *   follow:                    optional: read on into the lines after
 *     pattern: '...'             the same form as pattern
 *     lines: 8                   how many lines past the match, 1 to 64
 *     required: true             optional (false): no event without it
 *     absent: true               optional (false): no event with it
 *   examples:                  required, at least one
 *     - text: "..."              a sample of the message
 *       fields: {req: 2097152}   every field it must yield
 *
 * rules_load.c hands this loader the parsed document (aliases and depth
 * already refused).  Every pattern is compiled here, so that a bad one
 * stops the load with the place of its error; its groups must be named
 * after fields (recog_stacks.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recog_table.h"
#include "yaml_util.h"

#define SK_TEXT_MAX 4096        /* an example's text, a confirm text */
#define SK_FOLLOW_LINES_MAX 64

/* The file being loaded (yaml_util.h). */
typedef yu_ctx sk_load_ctx;

sk_table *
sk_table_new(void)
{
	return calloc(1, sizeof(sk_table));
}

static void
sk_spec_free(sk_spec *sp)
{
	int i, k;

	free(sp->id);
	free(sp->file);
	free(sp->framework);
	for (i = 0; i < sp->nanchors; i++)
		free((void *)(uintptr_t)sp->anchors[i].text);   /* owned */
	free(sp->pattern);
	free(sp->follow);
	rx_code_free(sp->pattern_re);
	rx_code_free(sp->follow_re);
	free(sp->confirm);
	for (i = 0; i < sp->nexamples; i++) {
		free(sp->examples[i].text);
		for (k = 0; k < sp->examples[i].nfields; k++) {
			free(sp->examples[i].fields[k].name);
			free(sp->examples[i].fields[k].value);
		}
	}
	free(sp->examples);
	memset(sp, 0, sizeof *sp);
}

void
sk_table_free(sk_table *t)
{
	int i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		sk_spec_free(&t->v[i]);
	free(t->v);
	free(t);
}

int
sk_table_count(const sk_table *t)
{
	return t != NULL ? t->n : 0;
}

int
sk_example_count(const sk_table *t)
{
	int i, n = 0;

	for (i = 0; t != NULL && i < t->n; i++)
		n += t->v[i].nexamples;
	return n;
}

/* The text of scalar n, or NULL with an error naming what. */
static const char *
sk_scalar(sk_load_ctx *lc, yaml_node_t *n, const char *what)
{
	const char *s = yu_text(n);

	if (s == NULL) {
		yu_err(lc, n, "%s must be a string", what);
		return NULL;
	}
	if (strlen(s) != n->data.scalar.length) {
		yu_err(lc, n, "%s holds a NUL byte", what);
		return NULL;
	}
	return s;
}

/* A boolean scalar (true/false, yes/no), or -1 with an error. */
static int
sk_bool(sk_load_ctx *lc, yaml_node_t *n, const char *what)
{
	const char *s = sk_scalar(lc, n, what);

	if (s == NULL)
		return -1;
	if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0)
		return 1;
	if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0)
		return 0;
	yu_err(lc, n, "%s must be true or false, not '%s'", what, s);
	return -1;
}

/* Whether s is a name: letters, digits, '.', '_' and '-', 1 to 64. */
static bool
sk_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* Whether mapping n has a key twice (an error at each later one): its
 * value would be read twice.  Out of memory (an error too) counts as
 * one. */
static bool
sk_dup_keys(sk_load_ctx *lc, yaml_node_t *n)
{
	bool *rep = yu_repeated_keys(lc, n), dup = false;
	yaml_node_pair_t *p;

	if (rep == NULL) {
		yu_err(lc, n, "out of memory");
		return true;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		if (rep[p - n->data.mapping.pairs.start]) {
			yu_err(lc, yu_node(lc, p->key), "key '%s' appears twice",
			    yu_text(yu_node(lc, p->key)));
			dup = true;
		}
	}
	free(rep);
	return dup;
}

/*
 * A pattern: a string, or a list of strings joined.  Sets *at to where it
 * starts.  NULL with an error when it is neither, or too long.
 */
static char *
sk_pattern(sk_load_ctx *lc, yaml_node_t *n, const char *what, sk_mark *at)
{
	char buf[SK_PATTERN_MAX];
	size_t len = 0;
	yaml_node_item_t *it;

	*at = yu_mark_of(n);
	buf[0] = '\0';
	if (n != NULL && n->type == YAML_SEQUENCE_NODE) {
		for (it = n->data.sequence.items.start;
		    it < n->data.sequence.items.top; it++) {
			const char *s = sk_scalar(lc, yu_node(lc, *it), what);
			size_t k;

			if (s == NULL)
				return NULL;
			k = strlen(s);
			if (len + k + 1 > sizeof buf) {
				yu_err(lc, n, "%s is longer than %zu bytes", what,
				    sizeof buf - 1);
				return NULL;
			}
			memcpy(buf + len, s, k + 1);
			len += k;
		}
	} else {
		const char *s = sk_scalar(lc, n, what);

		if (s == NULL)
			return NULL;
		if (strlen(s) + 1 > sizeof buf) {
			yu_err(lc, n, "%s is longer than %zu bytes", what,
			    sizeof buf - 1);
			return NULL;
		}
		memcpy(buf, s, strlen(s) + 1);
		len = strlen(s);
	}
	if (len == 0) {
		yu_err(lc, n, "%s is empty", what);
		return NULL;
	}
	return yu_strdup(lc, n, buf);
}

/* Whether name is a group name a pattern may use: a field (a size field
 * with or without its unit suffix), "needed" (a size, recog_stacks.c),
 * "nonfatal", "benign" or "head". */
static bool
sk_group_ok(const char *name)
{
	static const char *const suffixes[] = { "", "_b", "_kb", "_gib",
	    "_bin" };
	size_t i, s;

	if (strcmp(name, "nonfatal") == 0 || strcmp(name, "benign") == 0 ||
	    strcmp(name, "head") == 0)
		return true;
	for (s = 0; s < sizeof suffixes / sizeof suffixes[0]; s++)
		if (strncmp(name, "needed", 6) == 0 &&
		    strcmp(name + 6, suffixes[s]) == 0)
			return true;
	for (i = 0; sk_fields[i].name != NULL; i++) {
		size_t n = strlen(sk_fields[i].name);

		if (strncmp(name, sk_fields[i].name, n) != 0)
			continue;
		for (s = 0; s < sizeof suffixes / sizeof suffixes[0]; s++)
			if (strcmp(name + n, suffixes[s]) == 0 && (s == 0 ||
			    sk_fields[i].type == SK_FIELD_SIZE))
				return true;
	}
	return false;
}

/*
 * Compiles pattern as the scanner will (widened, JIT off: only the
 * syntax matters here) and checks its group names.  An error names the
 * pattern's place; a syntax error's column is that of the pattern's
 * start, and the message gives the offset in the pattern.
 */
static void
sk_compile_check(sk_load_ctx *lc, const sk_spec *sp, const char *pattern,
    sk_mark at, const char *what, unsigned options, rx_code **keep)
{
	char wide[SK_PATTERN_MAX];
	od_error err;
	rx_code *re;
	const char *name;
	uint32_t i;

	if (!sk_widen(pattern, wide, sizeof wide)) {
		yu_err_at(lc, at.line, at.col, "recogniser '%s': its %s is "
		    "longer than %d bytes once its spaces are widened", sp->id,
		    what, SK_PATTERN_MAX - 1);
		return;
	}
	memset(&err, 0, sizeof err);
	/* With jit, the widened pattern is kept for the sets' copies, which
	 * make machine code (rx_code_copy); this one makes none. */
	re = rx_compile(wide, RX_DUPNAMES | options, true, lc->file, at.line,
	    &err);
	if (re == NULL && strcmp(err.msg, "out of memory") == 0) {
		/* Not an error of the pattern: the one line that says so. */
		yu_err_at(lc, at.line, at.col, "out of memory");
		return;
	}
	if (re == NULL) {
		const char *msg = strncmp(err.msg, "internal pattern: ", 18) == 0 ?
		    err.msg + 18 : err.msg;

		yu_err_at(lc, at.line, at.col, "recogniser '%s': its %s does not "
		    "compile: %s (at offset %llu once widened)", sp->id, what,
		    msg, (unsigned long long)(err.col > 0 ? err.col - 1 : 0));
		return;
	}
	for (i = 0; (name = rx_name(re, i)) != NULL; i++)
		if (!sk_group_ok(name))
			yu_err_at(lc, at.line, at.col, "recogniser '%s': group "
			    "'%s' of its %s names no field (see RECOGNISERS in "
			    "oomdoc(1))", sp->id, name, what);
	*keep = re;
}

static void
sk_load_anchors(sk_load_ctx *lc, yaml_node_t *n, sk_spec *sp)
{
	yaml_node_item_t *it;

	if (n == NULL || n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top == n->data.sequence.items.start) {
		yu_err(lc, n, "anchors must be a list of at least one string");
		return;
	}
	for (it = n->data.sequence.items.start;
	    it < n->data.sequence.items.top; it++) {
		yaml_node_t *a = yu_node(lc, *it), *tn = a;
		const char *text;
		int caseless = 0;

		if (sp->nanchors == SK_ANCHORS_MAX) {
			yu_err(lc, a, "at most %d anchors a recogniser",
			    SK_ANCHORS_MAX);
			return;
		}
		if (a != NULL && a->type == YAML_MAPPING_NODE) {
			yaml_node_pair_t *p;

			tn = NULL;
			if (sk_dup_keys(lc, a))
				continue;
			for (p = a->data.mapping.pairs.start;
			    p < a->data.mapping.pairs.top; p++) {
				const char *k = sk_scalar(lc, yu_node(lc, p->key),
				    "a key");

				if (k == NULL)
					continue;
				if (strcmp(k, "text") == 0)
					tn = yu_node(lc, p->value);
				else if (strcmp(k, "caseless") == 0)
					caseless = sk_bool(lc, yu_node(lc, p->value),
					    "caseless");
				else
					yu_err(lc, yu_node(lc, p->key), "an anchor "
					    "has no key '%s' (text, caseless)", k);
			}
			if (tn == NULL) {
				yu_err(lc, a, "an anchor needs its text");
				continue;
			}
		}
		text = sk_scalar(lc, tn, "an anchor");
		if (text == NULL || caseless < 0)
			continue;
		if (text[0] == '\0' || strlen(text) > 128) {
			yu_err(lc, tn, "an anchor must be 1 to 128 bytes");
			continue;
		}
		sp->anchor_at[sp->nanchors] = yu_mark_of(tn);
		sp->anchors[sp->nanchors].caseless = caseless == 1;
		sp->anchors[sp->nanchors].text = yu_strdup(lc, tn, text);
		if (sp->anchors[sp->nanchors].text != NULL)
			sp->nanchors++;
	}
}

static void
sk_load_follow(sk_load_ctx *lc, yaml_node_t *n, sk_spec *sp)
{
	yaml_node_pair_t *p;
	bool lines = false;

	if (n == NULL || n->type != YAML_MAPPING_NODE) {
		yu_err(lc, n, "follow must be a mapping (pattern, lines, "
		    "required, absent)");
		return;
	}
	if (sk_dup_keys(lc, n))
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *v = yu_node(lc, p->value);
		const char *k = sk_scalar(lc, yu_node(lc, p->key), "a key");

		if (k == NULL)
			continue;
		if (strcmp(k, "pattern") == 0) {
			sp->follow = sk_pattern(lc, v, "follow pattern",
			    &sp->follow_at);
		} else if (strcmp(k, "lines") == 0) {
			const char *s = sk_scalar(lc, v, "lines");
			char *end;
			long l = s != NULL ? strtol(s, &end, 10) : 0;

			if (s != NULL && (end == s || *end != '\0' || l < 1 ||
			    l > SK_FOLLOW_LINES_MAX))
				yu_err(lc, v, "lines must be a number from 1 to "
				    "%d", SK_FOLLOW_LINES_MAX);
			sp->follow_lines = (int)l;
			lines = true;
		} else if (strcmp(k, "required") == 0) {
			sp->follow_required = sk_bool(lc, v, "required") == 1;
		} else if (strcmp(k, "absent") == 0) {
			sp->follow_absent = sk_bool(lc, v, "absent") == 1;
		} else {
			yu_err(lc, yu_node(lc, p->key), "follow has no key '%s' "
			    "(pattern, lines, required, absent)", k);
		}
	}
	if (sp->follow_required && sp->follow_absent)
		yu_err(lc, n, "follow cannot be both required and absent");
	if (sp->follow == NULL)
		yu_err(lc, n, "follow needs its pattern");
	if (!lines)
		yu_err(lc, n, "follow needs its lines");
}

/* Whether s is a decimal integer, maybe negative. */
static bool
sk_decimal(const char *s)
{
	size_t i = s[0] == '-';

	if (s[i] == '\0' || strlen(s + i) > 18)
		return false;
	for (; s[i] != '\0'; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static void
sk_load_example(sk_load_ctx *lc, yaml_node_t *n, sk_example *ex)
{
	yaml_node_pair_t *p, *q;
	int before = lc->nerr;

	ex->at = yu_mark_of(n);
	if (n == NULL || n->type != YAML_MAPPING_NODE) {
		yu_err(lc, n, "an example must be a mapping (text, fields)");
		return;
	}
	if (sk_dup_keys(lc, n))
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *v = yu_node(lc, p->value);
		const char *k = sk_scalar(lc, yu_node(lc, p->key), "a key");

		if (k == NULL)
			continue;
		if (strcmp(k, "text") == 0) {
			const char *s = sk_scalar(lc, v, "an example's text");

			if (s != NULL && (s[0] == '\0' || strlen(s) > SK_TEXT_MAX))
				yu_err(lc, v, "an example's text must be 1 to %d "
				    "bytes", SK_TEXT_MAX);
			else if (s != NULL)
				ex->text = yu_strdup(lc, v, s);
			continue;
		}
		if (strcmp(k, "fields") != 0) {
			yu_err(lc, yu_node(lc, p->key), "an example has no key "
			    "'%s' (text, fields)", k);
			continue;
		}
		if (v == NULL || v->type != YAML_MAPPING_NODE) {
			yu_err(lc, v, "fields must be a mapping of field names "
			    "to values ({} for none)");
			continue;
		}
		if (sk_dup_keys(lc, v))
			continue;
		for (q = v->data.mapping.pairs.start;
		    q < v->data.mapping.pairs.top; q++) {
			yaml_node_t *fk = yu_node(lc, q->key);
			yaml_node_t *fv = yu_node(lc, q->value);
			const char *name = sk_scalar(lc, fk, "a field name");
			const char *val = sk_scalar(lc, fv, "a field's value");
			sk_example_field *f;
			int i;

			if (name == NULL || val == NULL)
				continue;
			for (i = 0; sk_fields[i].name != NULL; i++)
				if (strcmp(sk_fields[i].name, name) == 0)
					break;
			if (sk_fields[i].name == NULL && strcmp(name, "fatal") != 0 &&
			    strcmp(name, "benign") != 0 &&
			    strcmp(name, "head") != 0) {
				yu_err(lc, fk, "'%s' is no field (see RECOGNISERS in "
				    "oomdoc(1))", name);
				continue;
			}
			if (sk_fields[i].name == NULL ? strcmp(val, "true") != 0 &&
			    strcmp(val, "false") != 0 : sk_fields[i].type !=
			    SK_FIELD_TEXT && !sk_decimal(val)) {
				yu_err(lc, fv, "field %s must be %s, not '%s'", name,
				    sk_fields[i].name == NULL ? "true or false" :
				    sk_fields[i].type == SK_FIELD_SIZE ?
				    "a number of bytes" : "an integer", val);
				continue;
			}
			if (ex->nfields == SK_FIELDS_MAX) {
				yu_err(lc, fk, "at most %d fields an example",
				    SK_FIELDS_MAX);
				break;
			}
			f = &ex->fields[ex->nfields];
			f->at = yu_mark_of(fk);
			f->name = yu_strdup(lc, fk, name);
			f->value = yu_strdup(lc, fv, val);
			ex->nfields++;
		}
	}
	if (ex->text == NULL && lc->nerr == before)
		yu_err(lc, n, "an example needs its text");
}

static void
sk_load_examples(sk_load_ctx *lc, yaml_node_t *n, sk_spec *sp)
{
	yaml_node_item_t *it;
	size_t count;

	if (n == NULL || n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top == n->data.sequence.items.start) {
		yu_err(lc, n, "examples must be a list of at least one example");
		return;
	}
	count = (size_t)(n->data.sequence.items.top -
	    n->data.sequence.items.start);
	if (count > SK_EXAMPLES_MAX) {
		yu_err(lc, n, "at most %d examples a recogniser",
		    SK_EXAMPLES_MAX);
		return;
	}
	sp->examples = calloc(count, sizeof *sp->examples);
	if (sp->examples == NULL) {
		yu_err(lc, n, "out of memory");
		return;
	}
	for (it = n->data.sequence.items.start;
	    it < n->data.sequence.items.top; it++)
		sk_load_example(lc, yu_node(lc, *it),
		    &sp->examples[sp->nexamples++]);
}

/* The kind named s, or -1: any kind of the report but the fallback's. */
static int
sk_kind(const char *s)
{
	int k;

	for (k = 0; k < OD_KIND_COUNT; k++)
		if (k != OD_KIND_UNRECOGNISED &&
		    strcmp(od_kind_name((od_kind)k), s) == 0)
			return k;
	return -1;
}

static void
sk_load_spec(sk_load_ctx *lc, yaml_node_t *n, sk_spec *sp)
{
	yaml_node_t *confirm = NULL;
	yaml_node_pair_t *p;
	bool kind = false, conf = false;
	int before = lc->nerr;

	sp->at = yu_mark_of(n);
	sp->fatal = true;
	if (n == NULL || n->type != YAML_MAPPING_NODE) {
		yu_err(lc, n, "a recogniser must be a mapping (id, kind, "
		    "confidence, anchors, pattern, examples, ...)");
		return;
	}
	if (sk_dup_keys(lc, n))
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = yu_node(lc, p->key), *v = yu_node(lc, p->value);
		const char *k = sk_scalar(lc, kn, "a key"), *s;

		if (k == NULL)
			continue;
		if (strcmp(k, "id") == 0) {
			if ((s = sk_scalar(lc, v, "id")) != NULL && !sk_name_ok(s))
				yu_err(lc, v, "id '%s' must be 1 to 64 letters, "
				    "digits, '.', '_' or '-'", s);
			else if (s != NULL)
				sp->id = yu_strdup(lc, v, s);
		} else if (strcmp(k, "kind") == 0) {
			int kd = (s = sk_scalar(lc, v, "kind")) != NULL ?
			    sk_kind(s) : -2;

			if (kd == -1)
				yu_err(lc, v, "'%s' is no kind (see KINDS in "
				    "oomdoc(1))", s);
			else if (kd >= 0)
				sp->kind = (od_kind)kd;
			kind = true;
		} else if (strcmp(k, "framework") == 0) {
			if ((s = sk_scalar(lc, v, "framework")) != NULL &&
			    !sk_name_ok(s))
				yu_err(lc, v, "framework '%s' must be 1 to 64 "
				    "letters, digits, '.', '_' or '-'", s);
			else if (s != NULL)
				sp->framework = yu_strdup(lc, v, s);
		} else if (strcmp(k, "confidence") == 0) {
			s = sk_scalar(lc, v, "confidence");
			if (s != NULL && strcmp(s, "high") == 0)
				sp->conf = OD_CONF_HIGH;
			else if (s != NULL && strcmp(s, "medium") == 0)
				sp->conf = OD_CONF_MEDIUM;
			else if (s != NULL && strcmp(s, "low") == 0)
				sp->conf = OD_CONF_LOW;
			else if (s != NULL)
				yu_err(lc, v, "confidence must be high, medium or "
				    "low, not '%s'", s);
			conf = true;
		} else if (strcmp(k, "fatal") == 0) {
			sp->fatal = sk_bool(lc, v, "fatal") != 0;
		} else if (strcmp(k, "quiet_in_prose") == 0) {
			sp->quiet_in_prose = sk_bool(lc, v, "quiet_in_prose") == 1;
		} else if (strcmp(k, "confirm") == 0) {
			s = sk_scalar(lc, v, "confirm");
			confirm = v;
			if (s != NULL && (s[0] == '\0' || strlen(s) > 512))
				yu_err(lc, v, "confirm must be 1 to 512 bytes");
			else if (s != NULL)
				sp->confirm = yu_strdup(lc, v, s);
		} else if (strcmp(k, "anchors") == 0) {
			sk_load_anchors(lc, v, sp);
		} else if (strcmp(k, "pattern") == 0) {
			sp->pattern = sk_pattern(lc, v, "pattern", &sp->pattern_at);
		} else if (strcmp(k, "follow") == 0) {
			sk_load_follow(lc, v, sp);
		} else if (strcmp(k, "examples") == 0) {
			sk_load_examples(lc, v, sp);
		} else {
			yu_err(lc, kn, "a recogniser has no key '%s' (id, kind, "
			    "framework, confidence, fatal, quiet_in_prose, "
			    "confirm, anchors, pattern, follow, examples)", k);
		}
	}
	if (sp->id == NULL || !kind || !conf || sp->nanchors == 0 ||
	    sp->pattern == NULL || sp->examples == NULL) {
		if (lc->nerr == before)
			yu_err(lc, n, "a recogniser needs %s", sp->id == NULL ?
			    "its id" : !kind ? "its kind" : !conf ?
			    "its confidence" : sp->nanchors == 0 ?
			    "its anchors" : sp->pattern == NULL ?
			    "its pattern" : "its examples");
		return;
	}
	if (sp->conf == OD_CONF_LOW && sp->confirm == NULL)
		yu_err(lc, n, "recogniser '%s' is of low confidence: it needs "
		    "confirm, what would confirm its evidence", sp->id);
	else if (sp->conf != OD_CONF_LOW && confirm != NULL)
		yu_err(lc, confirm, "recogniser '%s': confirm is for "
		    "recognisers of low confidence only", sp->id);
	/* The options are those of the set's compiles (recog_stacks.c's
	 * sk_create), which copy these. */
	sk_compile_check(lc, sp, sp->pattern, sp->pattern_at, "pattern",
	    RX_OFFSET_LIMIT, &sp->pattern_re);
	if (sp->follow != NULL)
		sk_compile_check(lc, sp, sp->follow, sp->follow_at,
		    "follow pattern", 0, &sp->follow_re);
}

/* The index of the recogniser id in t, or -1. */
static int
sk_find_id(const sk_table *t, const char *id)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].id, id) == 0)
			return i;
	return -1;
}

bool
sk_table_load(sk_table *t, const char *path, yaml_document_t *doc,
    yaml_node_t *list, rl_errors *errs)
{
	sk_load_ctx lc = { .file = path, .doc = doc, .errs = errs };
	yaml_node_item_t *it;
	sk_spec *specs;
	size_t count;
	int n = 0, added = 0, i, j;

	if (list == NULL || list->type != YAML_SEQUENCE_NODE) {
		yu_err(&lc, list, "recognisers must be a list of recognisers");
		return false;
	}
	count = (size_t)(list->data.sequence.items.top -
	    list->data.sequence.items.start);
	if (count > SK_MAX) {
		yu_err(&lc, list, "at most %d recognisers", SK_MAX);
		return false;
	}
	specs = calloc(count + 1, sizeof *specs);
	if (specs == NULL) {
		yu_err(&lc, list, "out of memory");
		return false;
	}
	for (it = list->data.sequence.items.start;
	    it < list->data.sequence.items.top; it++) {
		sk_load_spec(&lc, yu_node(&lc, *it), &specs[n]);
		specs[n].file = yu_strdup(&lc, list, path);
		n++;
	}
	/* The same id twice in one file is a mistake; a new one counts
	 * against SK_MAX. */
	for (i = 0; i < n && lc.nerr == 0; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(specs[i].id, specs[j].id) == 0)
				yu_err_at(&lc, specs[i].at.line, specs[i].at.col,
				    "recogniser id '%s' is defined twice (first "
				    "on line %llu)", specs[i].id,
				    (unsigned long long)specs[j].at.line);
		added += sk_find_id(t, specs[i].id) < 0;
	}
	if (lc.nerr == 0 && t->n + added > SK_MAX)
		yu_err(&lc, list, "at most %d recognisers in all files, these "
		    "would make %d", SK_MAX, t->n + added);
	if (lc.nerr == 0 && t->n + added > t->cap) {
		int cap = t->n + added + 16;
		sk_spec *v = realloc(t->v, (size_t)cap * sizeof *v);

		if (v == NULL) {
			yu_err(&lc, list, "out of memory");
		} else {
			t->v = v;
			t->cap = cap;
		}
	}
	if (lc.nerr > 0) {
		for (i = 0; i < n; i++)
			sk_spec_free(&specs[i]);
		free(specs);
		return false;
	}
	/* A known id replaces the old recogniser in its place. */
	for (i = 0; i < n; i++) {
		j = sk_find_id(t, specs[i].id);
		if (j >= 0)
			sk_spec_free(&t->v[j]);
		else
			j = t->n++;
		t->v[j] = specs[i];
	}
	free(specs);
	return true;
}
