/*
 * rules_load.c: loading the YAML rules into a rule set (applying them is
 * rules_apply.c's job, describing them rules_describe.c's).
 *
 * A rule file holds one rule, a list of rules, or a mapping whose "rules"
 * key is such a list.  A rule:
 *
 *   id: fragmentation                      [a-z0-9_]+, unique
 *   title: Fragmentation ...
 *   kinds: [cuda_caching_allocator, hip]   optional: the kinds it is for
 *   when: reserved_unallocated >= requested
 *   score: 0.85                            0..1, how likely when it fires
 *   explains: reserved_unallocated         optional: the bytes it accounts
 *                                          for, ranked by (an expression)
 *   explain: "{reserved_unallocated} ..."  a template, or a list of
 *                                          variants (templates, or
 *                                          {when, text}): the first that
 *                                          holds with every value known
 *   evidence:                              optional, each one of
 *     - "..."                              a template
 *     - {when: ..., text: "..."}           a template with a condition
 *     - {lhs: a, rhs: b, lhs_label: "...", rhs_label: "...", near: 20%}
 *                                          a comparison, its operator
 *                                          chosen to hold
 *   fixes:                                 optional, in order
 *     - id: expandable_segments
 *       when: not (expandable_segments == true)   optional
 *       text: "..."                        a template
 *       env: {PYTORCH_CUDA_ALLOC_CONF: "..."}      optional, one entry
 *       code: "..."                        optional template
 *       config: {key: "..."}               optional, one entry
 *       changes:                           optional: the settings it
 *         - {setting: batch_size, from: batch_size, to: "..."}  changes,
 *                                          from and to expressions
 *   confirm_with: fragmentation            optional: a live-mode probe
 *
 * The YAML is read in two passes with libyaml: the first walks the event
 * stream and refuses aliases and deep nesting, so that an alias bomb or a
 * pathological file cannot make the second (the document tree) expensive;
 * the second checks the schema.  Every error is collected with its file,
 * line and column, and a file with any error adds no rule.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "expr.h"
#include "facts.h"
#include "knowledge.h"
#include "recog_table.h"
#include "rules.h"
#include "yaml_util.h"

#define RL_FILE_MAX (1024 * 1024)
#define RL_DEPTH_MAX 16
#define RL_DIR_FILES_MAX 256    /* rule files of one directory */

/* The live-mode probes a rule may name: the probes of src/live/probe.c. */
static const char *const rl_probes[] = {
	"context_cost", "fits_now", "largest_allocation", "fragmentation",
	"processes", "health", NULL,
};

/* One file being loaded: y.doc is doc. */
typedef struct {
	yu_ctx y;
	const char *text;       /* the file's text, for positions in scalars */
	size_t len;
	yaml_document_t doc;
} rl_load_ctx;

/* Whether text[i] starts a line break (YAML's \n, \r\n or \r), and its
 * length. */
static size_t
rl_break(const char *text, size_t len, size_t i)
{
	if (i >= len)
		return 0;
	if (text[i] == '\n')
		return 1;
	if (text[i] == '\r')
		return i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
	return 0;
}

/* Whether text[i..] is blanks (spaces, tabs) up to a line break or the end. */
static bool
rl_blank_to_break(const char *text, size_t len, size_t i)
{
	while (i < len && (text[i] == ' ' || text[i] == '\t'))
		i++;
	return i >= len || rl_break(text, len, i) > 0;
}

/* The byte offset of a mark (line and column in characters, as libyaml
 * counts them) in text. */
static size_t
rl_mark_offset(const char *text, size_t len, yaml_mark_t m)
{
	size_t i = 0, line = 0, col = 0, b;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;          /* libyaml does not count a byte-order mark */
	while (i < len && line < m.line) {
		b = rl_break(text, len, i);
		i += b > 0 ? b : 1;
		line += b > 0;
	}
	while (i < len && col < m.column && rl_break(text, len, i) == 0) {
		/* One character: a byte and its UTF-8 continuation bytes. */
		i++;
		while (i < len && ((unsigned char)text[i] & 0xc0) == 0x80)
			i++;
		col++;
	}
	return i;
}

/*
 * Where byte at of scalar n's value lies in the file's text.  libyaml
 * gives only the scalar's start (the quote of a quoted scalar, the '|' or
 * '>' of a block scalar), and the value is not the text: a block scalar's
 * lines lose their indentation, a line break between two lines of a
 * folded or flow scalar becomes a space (with the blanks around it), and
 * a quoted scalar has escapes ("\t", "''").  So this walks the text and
 * the value side by side from the start, undoing each of those, until it
 * has passed at bytes of the value.  Tabs in indentation and YAML 1.1's
 * Unicode line breaks are not undone; a position in them may be off, never
 * outside the file.
 */
static size_t
rl_value_offset(const rl_load_ctx *lc, const yaml_node_t *n, size_t at)
{
	const char *t = lc->text;
	const unsigned char *val = n->data.scalar.value;
	size_t vlen = n->data.scalar.length;
	yaml_scalar_style_t style = n->data.scalar.style;
	bool block = style == YAML_LITERAL_SCALAR_STYLE ||
	    style == YAML_FOLDED_SCALAR_STYLE;
	size_t len = lc->len, p = rl_mark_offset(t, len, n->start_mark), v = 0;
	size_t indent = 0, b, k;

	if (at > vlen)
		at = vlen;
	if (block) {
		/* The text starts on the line after the '|' or '>'.  Its
		 * indentation is what its first line that is not blank has
		 * in the file less what it keeps in the value (a first line
		 * indented further than the block keeps the difference). */
		while (p < len && rl_break(t, len, p) == 0)
			p++;
		p += rl_break(t, len, p);
		for (k = p; k < len; k += indent + b) {
			for (indent = 0; k + indent < len && t[k + indent] == ' ';
			    indent++)
				;
			if ((b = rl_break(t, len, k + indent)) == 0)
				break;
		}
		for (k = 0; k < vlen && val[k] == '\n'; k++)
			;
		for (; k < vlen && val[k] == ' ' && indent > 0; k++)
			indent--;
		for (k = 0; k < indent && p < len && t[p] == ' '; k++)
			p++;
	} else if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
		p++;
	}
	/* Each step takes one piece of the text and the bytes of the value
	 * it gave; a piece that gave none is taken even at the target, so
	 * that the position is that of the target's own text. */
	while (p < len) {
		if ((b = rl_break(t, len, p)) > 0 || (!block &&
		    (t[p] == ' ' || t[p] == '\t') && rl_blank_to_break(t, len, p))) {
			/* A line break, with the blanks before it (outside a
			 * block scalar) and the indentation after it: a space
			 * or a newline of the value, or nothing (a folded
			 * break before an empty line). */
			bool gave = v < vlen && (val[v] == ' ' || val[v] == '\n');

			if (gave && v >= at)
				break;
			while (p < len && rl_break(t, len, p) == 0)
				p++;
			p += rl_break(t, len, p);
			for (k = 0; p < len && (block ? k < indent && t[p] == ' ' :
			    t[p] == ' ' || t[p] == '\t'); k++)
				p++;
			v += gave;
		} else if (style == YAML_DOUBLE_QUOTED_SCALAR_STYLE &&
		    t[p] == '\\' && p + 1 < len) {
			/* An escape: one character of the value, of as many
			 * bytes as its UTF-8 sequence; an escaped line break
			 * (with the next line's indentation) is none. */
			char e = t[p + 1];

			if ((b = rl_break(t, len, p + 1)) > 0) {
				for (p += 1 + b; p < len && (t[p] == ' ' ||
				    t[p] == '\t'); p++)
					;
				continue;
			}
			if (v >= at)
				break;
			p += e == 'x' ? 4 : e == 'u' ? 6 : e == 'U' ? 10 : 2;
			v += val[v] < 0xc0 ? 1 : val[v] < 0xe0 ? 2 :
			    val[v] < 0xf0 ? 3 : 4;
		} else if (v >= at) {
			break;
		} else if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE &&
		    t[p] == '\'' && p + 1 < len && t[p + 1] == '\'') {
			p += 2;
			v++;
		} else {
			p++;
			v++;
		}
	}
	return p < len ? p : len;
}

/* The line and column (1-based, the column in characters) of byte offset
 * p of the file's text. */
static yu_mark
rl_position(const rl_load_ctx *lc, size_t p)
{
	yu_mark m = { 1, 1 };
	size_t i = 0, b;

	if (lc->len >= 3 && memcmp(lc->text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < p) {
		if ((b = rl_break(lc->text, lc->len, i)) > 0) {
			m.line++;
			m.col = 1;
			i += b;
			continue;
		}
		if (((unsigned char)lc->text[i] & 0xc0) != 0x80)
			m.col++;
		i++;
	}
	return m;
}

/* Adds an error of this file at node, or at byte at of its value when
 * at >= 0 (an error inside an expression or a template). */
static void
rl_err_in(rl_load_ctx *lc, const yaml_node_t *node, long long at,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static void
rl_err_in(rl_load_ctx *lc, const yaml_node_t *node, long long at,
    const char *fmt, va_list ap)
{
	yu_mark m = yu_mark_of(node);

	if (node != NULL && at >= 0 && node->type == YAML_SCALAR_NODE &&
	    lc->text != NULL)
		m = rl_position(lc, rl_value_offset(lc, node, (size_t)at));
	yu_verr_at(&lc->y, m.line, m.col, fmt, ap);
}

static void
rl_err(rl_load_ctx *lc, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
rl_err(rl_load_ctx *lc, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rl_err_in(lc, node, -1, fmt, ap);
	va_end(ap);
}

/* An error at byte at of scalar node's value. */
static void
rl_err_value(rl_load_ctx *lc, const yaml_node_t *node, size_t at,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
rl_err_value(rl_load_ctx *lc, const yaml_node_t *node, size_t at,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rl_err_in(lc, node, (long long)at, fmt, ap);
	va_end(ap);
}

/* An error of file at a mark of libyaml's (the parser's). */
static void
rl_err_at(rl_errors *errs, const char *file, yaml_mark_t mark, const char *msg)
{
	yu_errors_add(errs, file, (uint64_t)mark.line + 1,
	    (uint64_t)mark.column + 1, "%s", msg);
}

/* An error about a whole file (it cannot be opened, it is too big): no
 * line, no column. */
#define rl_err_file(errs, file, ...) \
	yu_errors_add((errs), (file), 0, 0, __VA_ARGS__)

rl_set *
rl_new(void)
{
	return calloc(1, sizeof(rl_set));
}

static void
rl_rule_free(rl_rule *r)
{
	int i, k;

	free(r->id);
	free(r->title);
	free(r->file);
	free(r->when_src);
	xp_free(r->when);
	free(r->score_src);
	xp_free(r->score_expr);
	free(r->explains_src);
	xp_free(r->explains);
	free(r->explain_src);
	for (i = 0; i < r->nexplain; i++) {
		xp_free(r->explain[i].when);
		xp_template_free(r->explain[i].text);
	}
	for (i = 0; i < r->nevidence; i++) {
		rl_evidence *e = &r->evidence[i];

		xp_free(e->when);
		xp_template_free(e->text);
		xp_free(e->lhs);
		xp_free(e->rhs);
		xp_template_free(e->lhs_label);
		xp_template_free(e->rhs_label);
	}
	for (i = 0; i < r->nfixes; i++) {
		free(r->fixes[i].id);
		xp_free(r->fixes[i].when);
		xp_template_free(r->fixes[i].text);
		free(r->fixes[i].env_name);
		xp_template_free(r->fixes[i].env_key);
		xp_template_free(r->fixes[i].env_value);
		xp_template_free(r->fixes[i].code);
		free(r->fixes[i].config_key);
		xp_template_free(r->fixes[i].config_value);
		for (k = 0; k < r->fixes[i].nchanges; k++) {
			free(r->fixes[i].changes[k].setting);
			xp_free(r->fixes[i].changes[k].from);
			xp_free(r->fixes[i].changes[k].to);
		}
	}
	free(r->probe);
	memset(r, 0, sizeof *r);
}

void
rl_free(rl_set *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		rl_rule_free(&s->rules[i]);
	free(s->rules);
	free(s->slots);
	kn_free(s->knowledge);
	sk_table_free(s->recognisers);
	free(s);
}

static yaml_node_t *
rl_node(rl_load_ctx *lc, int index)
{
	return yu_node(&lc->y, index);
}

/* A scalar's text, or NULL (with an error) when the node is not one. */
static const char *
rl_scalar(rl_load_ctx *lc, yaml_node_t *n, const char *what)
{
	const char *s = yu_text(n);

	if (s == NULL)
		rl_err(lc, n, "%s must be a plain value", what);
	return s;
}

/* A copy of s (yu_strdup), its error at no place. */
static char *
rl_strdup(rl_load_ctx *lc, const char *s)
{
	return yu_strdup(&lc->y, NULL, s);
}

static xp_expr *
rl_expr(rl_load_ctx *lc, yaml_node_t *n, const char *what)
{
	const char *src = rl_scalar(lc, n, what);
	od_error e;
	xp_expr *x;

	if (src == NULL)
		return NULL;
	memset(&e, 0, sizeof e);
	x = xp_parse(src, n->data.scalar.length, fc_exists, NULL, &e);
	if (x == NULL)
		rl_err_value(lc, n, e.col > 0 ? (size_t)e.col - 1 : 0,
		    "in %s: %s", what, e.msg);
	return x;
}

static xp_template *
rl_template(rl_load_ctx *lc, yaml_node_t *n, const char *what)
{
	const char *src = rl_scalar(lc, n, what);
	od_error e;
	xp_template *t;

	if (src == NULL)
		return NULL;
	memset(&e, 0, sizeof e);
	t = xp_template_parse(src, n->data.scalar.length, fc_exists, NULL, &e);
	if (t == NULL)
		rl_err_value(lc, n, e.col > 0 ? (size_t)e.col - 1 : 0,
		    "in %s: %s", what, e.msg);
	return t;
}

/* Whether name is an environment variable name as the shells take one
 * (POSIX.1-2017, Base Definitions 8.1): a letter or '_', then letters,
 * digits or '_'; at most 128 bytes (rules.h). */
bool
rl_valid_env(const char *name)
{
	size_t i;

	if (!((name[0] >= 'A' && name[0] <= 'Z') ||
	    (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
		return false;
	for (i = 1; name[i] != '\0'; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return i <= 128;
}

/* A one-entry mapping NAME: template, for env and config. */
static bool
rl_pair(rl_load_ctx *lc, yaml_node_t *n, const char *what, char **name,
    xp_template **value)
{
	yaml_node_pair_t *p;
	const char *k;

	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1) {
		rl_err(lc, n, "%s must be a mapping with one entry, "
		    "NAME: value", what);
		return false;
	}
	p = n->data.mapping.pairs.start;
	k = rl_scalar(lc, rl_node(lc, p->key), what);
	if (k == NULL)
		return false;
	/* A name with a {fact} in it is a template (the variable can depend
	 * on the release and the vendor): it is checked once rendered, in
	 * rules_apply.c. */
	if (strcmp(what, "env") == 0 && strchr(k, '{') == NULL &&
	    !rl_valid_env(k)) {
		rl_err(lc, rl_node(lc, p->key), "env: '%s' is not an environment "
		    "variable name (a letter or '_', then letters, digits or "
		    "'_')", k);
		return false;
	}
	*name = rl_strdup(lc, k);
	*value = rl_template(lc, rl_node(lc, p->value), what);
	return *name != NULL && *value != NULL;
}

static bool
rl_key_is(const char *k, const char *name)
{
	return strcmp(k, name) == 0;
}

/*
 * Whether key k was given already in this mapping (an error: the second
 * would silently win).  seen holds a bit per known key name.
 */
static bool
rl_twice(rl_load_ctx *lc, yaml_node_t *kn, const char *k, uint32_t *seen)
{
	static const char *const keys[] = {
		"id", "title", "kinds", "when", "score", "explain", "evidence",
		"fixes", "confirm_with", "text", "env", "code", "config",
		"explains", "lhs", "rhs", "lhs_label", "rhs_label", "near",
		"changes", "setting", "from", "to",
	};
	size_t i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (strcmp(k, keys[i]) != 0)
			continue;
		if (*seen & (UINT32_C(1) << i)) {
			rl_err(lc, kn, "key '%s' is given twice", k);
			return true;
		}
		*seen |= UINT32_C(1) << i;
	}
	return false;
}

static bool rl_valid_id(const char *id);

/* One entry of a fix's changes: {setting: NAME, from: expr, to: expr}. */
static void
rl_load_change(rl_load_ctx *lc, yaml_node_t *n, rl_change *c)
{
	yaml_node_pair_t *p;
	uint32_t seen = 0;
	int keys = 0;           /* of setting, from and to, those given */

	if (n->type != YAML_MAPPING_NODE) {
		rl_err(lc, n, "a change must be a mapping (setting, from, to)");
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = rl_node(lc, p->key), *vn = rl_node(lc, p->value);
		const char *k = rl_scalar(lc, kn, "a key");

		if (k == NULL || vn == NULL || rl_twice(lc, kn, k, &seen))
			continue;
		keys += rl_key_is(k, "setting") || rl_key_is(k, "from") ||
		    rl_key_is(k, "to");
		if (rl_key_is(k, "setting")) {
			c->setting = rl_strdup(lc, rl_scalar(lc, vn, "setting"));
			if (c->setting != NULL && !rl_valid_id(c->setting))
				rl_err(lc, vn, "a setting is lower-case letters, "
				    "digits and '_'");
		} else if (rl_key_is(k, "from"))
			c->from = rl_expr(lc, vn, "from");
		else if (rl_key_is(k, "to"))
			c->to = rl_expr(lc, vn, "to");
		else
			rl_err(lc, kn, "unknown key '%s' in a change (expected "
			    "setting, from, to)", k);
	}
	/* A value given but wrong has its own error already. */
	if (keys < 3)
		rl_err(lc, n, "a change needs a setting, from and to");
}

/* A fix's changes: a list of at most OD_CHANGES_MAX. */
static void
rl_load_changes(rl_load_ctx *lc, yaml_node_t *n, rl_fix *f)
{
	yaml_node_item_t *it;

	if (n->type != YAML_SEQUENCE_NODE) {
		rl_err(lc, n, "changes must be a list");
		return;
	}
	for (it = n->data.sequence.items.start;
	    it < n->data.sequence.items.top; it++) {
		yaml_node_t *cn = rl_node(lc, *it);

		if (f->nchanges == OD_CHANGES_MAX) {
			rl_err(lc, cn, "at most %d changes", OD_CHANGES_MAX);
			return;
		}
		if (cn != NULL)
			rl_load_change(lc, cn, &f->changes[f->nchanges++]);
	}
}

static void
rl_load_fix(rl_load_ctx *lc, yaml_node_t *n, rl_fix *f)
{
	yaml_node_pair_t *p;
	uint32_t seen = 0;

	if (n->type != YAML_MAPPING_NODE) {
		rl_err(lc, n, "a fix must be a mapping (id, text, ...)");
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = rl_node(lc, p->key), *vn = rl_node(lc, p->value);
		const char *k = rl_scalar(lc, kn, "a key");

		if (k == NULL || vn == NULL || rl_twice(lc, kn, k, &seen))
			continue;
		if (rl_key_is(k, "id"))
			f->id = rl_strdup(lc, rl_scalar(lc, vn, "id"));
		else if (rl_key_is(k, "when"))
			f->when = rl_expr(lc, vn, "when");
		else if (rl_key_is(k, "text"))
			f->text = rl_template(lc, vn, "text");
		else if (rl_key_is(k, "env")) {
			/* A name with {fact} in it is a template too. */
			if (rl_pair(lc, vn, "env", &f->env_name, &f->env_value) &&
			    strchr(f->env_name, '{') != NULL)
				f->env_key = rl_template(lc, rl_node(lc,
				    vn->data.mapping.pairs.start->key), "env");
		}
		else if (rl_key_is(k, "code"))
			f->code = rl_template(lc, vn, "code");
		else if (rl_key_is(k, "config"))
			rl_pair(lc, vn, "config", &f->config_key,
			    &f->config_value);
		else if (rl_key_is(k, "changes"))
			rl_load_changes(lc, vn, f);
		else
			rl_err(lc, kn, "unknown key '%s' in a fix (expected "
			    "id, when, text, env, code, config, changes)", k);
	}
	if (f->id == NULL)
		rl_err(lc, n, "a fix needs an id");
	if (f->text == NULL)
		rl_err(lc, n, "a fix needs a text");
}

/* A label of a comparison's side: the template given, or the
 * expression's own source as literal text. */
static xp_template *
rl_label(rl_load_ctx *lc, yaml_node_t *given, yaml_node_t *expr)
{
	const char *src;
	od_error e;

	if (given != NULL)
		return rl_template(lc, given, "a label");
	src = rl_scalar(lc, expr, "lhs and rhs");
	if (src == NULL)
		return NULL;
	memset(&e, 0, sizeof e);
	return xp_template_parse(src, strlen(src), NULL, NULL, &e);
}

/* A line of evidence: a template, or a mapping (a text with a condition,
 * or a comparison). */
static void
rl_load_evidence(rl_load_ctx *lc, yaml_node_t *n, rl_evidence *ev)
{
	yaml_node_t *lhs = NULL, *rhs = NULL, *ll = NULL, *rl = NULL;
	yaml_node_pair_t *p;
	uint32_t seen = 0;

	if (n->type == YAML_SCALAR_NODE) {
		ev->text = rl_template(lc, n, "evidence");
		return;
	}
	if (n->type != YAML_MAPPING_NODE) {
		rl_err(lc, n, "evidence is a text or a mapping (text, or lhs "
		    "and rhs)");
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = rl_node(lc, p->key), *vn = rl_node(lc, p->value);
		const char *k = rl_scalar(lc, kn, "a key"), *v;
		char *end;

		if (k == NULL || vn == NULL || rl_twice(lc, kn, k, &seen))
			continue;
		if (rl_key_is(k, "when")) {
			ev->when = rl_expr(lc, vn, "when");
		} else if (rl_key_is(k, "text")) {
			ev->text = rl_template(lc, vn, "evidence");
		} else if (rl_key_is(k, "lhs")) {
			lhs = vn;
			ev->lhs = rl_expr(lc, vn, "lhs");
		} else if (rl_key_is(k, "rhs")) {
			rhs = vn;
			ev->rhs = rl_expr(lc, vn, "rhs");
		} else if (rl_key_is(k, "lhs_label")) {
			ll = vn;
		} else if (rl_key_is(k, "rhs_label")) {
			rl = vn;
		} else if (rl_key_is(k, "near")) {
			v = rl_scalar(lc, vn, "near");
			if (v == NULL)
				continue;
			ev->near = strtod(v, &end);
			if (end != v && *end == '%') {
				ev->near /= 100;
				end++;
			}
			if (end == v || *end != '\0' || !(ev->near > 0 &&
			    ev->near < 1))
				rl_err(lc, vn, "near is a fraction between 0 and "
				    "1 (0.2 or 20%%), not '%s'", v);
		} else {
			rl_err(lc, kn, "unknown key '%s' in evidence (expected "
			    "when, text, lhs, rhs, lhs_label, rhs_label, near)",
			    k);
		}
	}
	if ((lhs != NULL) != (rhs != NULL) || (lhs != NULL && ev->text != NULL) ||
	    (lhs == NULL && ev->text == NULL)) {
		rl_err(lc, n, "evidence needs a text, or lhs and rhs (not both)");
		return;
	}
	if (lhs != NULL) {
		ev->lhs_label = rl_label(lc, ll, lhs);
		ev->rhs_label = rl_label(lc, rl, rhs);
	} else if (ll != NULL || rl != NULL || ev->near > 0) {
		rl_err(lc, n, "lhs_label, rhs_label and near belong to a "
		    "comparison (lhs and rhs)");
	}
}

/* The text of a variant, for `rules show`: the scalar, or its text key's;
 * NULL when it has none (an error then). */
static const char *
rl_variant_src(rl_load_ctx *lc, yaml_node_t *n)
{
	yaml_node_pair_t *p;

	if (n->type == YAML_SCALAR_NODE)
		return (const char *)n->data.scalar.value;
	if (n->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		const char *v = yu_text(rl_node(lc, p->value));

		if (v != NULL && yu_text_is(rl_node(lc, p->key), "text"))
			return v;
	}
	return NULL;
}

/* One variant of an explanation: a template, or {when, text}. */
static void
rl_load_variant(rl_load_ctx *lc, yaml_node_t *n, rl_variant *v)
{
	yaml_node_pair_t *p;
	uint32_t seen = 0;

	if (n->type == YAML_SCALAR_NODE) {
		v->text = rl_template(lc, n, "explain");
		return;
	}
	if (n->type != YAML_MAPPING_NODE) {
		rl_err(lc, n, "an explanation is a text or a mapping (when, "
		    "text)");
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = rl_node(lc, p->key), *vn = rl_node(lc, p->value);
		const char *k = rl_scalar(lc, kn, "a key");

		if (k == NULL || vn == NULL || rl_twice(lc, kn, k, &seen))
			continue;
		if (rl_key_is(k, "when"))
			v->when = rl_expr(lc, vn, "when");
		else if (rl_key_is(k, "text"))
			v->text = rl_template(lc, vn, "explain");
		else
			rl_err(lc, kn, "unknown key '%s' in an explanation "
			    "(expected when, text)", k);
	}
	if (v->text == NULL)
		rl_err(lc, n, "an explanation variant needs a text");
}

static bool
rl_valid_id(const char *id)
{
	size_t i;

	if (id[0] == '\0' || strlen(id) > 48)
		return false;
	for (i = 0; id[i] != '\0'; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		    (id[i] >= '0' && id[i] <= '9') || id[i] == '_'))
			return false;
	return true;
}

static uint32_t
rl_kinds(rl_load_ctx *lc, yaml_node_t *n)
{
	yaml_node_item_t *it;
	uint32_t mask = 0;

	if (n->type != YAML_SEQUENCE_NODE) {
		rl_err(lc, n, "kinds must be a list of kinds");
		return 0;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	    it++) {
		yaml_node_t *kn = rl_node(lc, *it);
		const char *k = rl_scalar(lc, kn, "a kind");
		int i;

		if (k == NULL)
			continue;
		for (i = 0; i < OD_KIND_COUNT; i++)
			if (strcmp(k, od_kind_name((od_kind)i)) == 0)
				break;
		if (i == OD_KIND_COUNT)
			rl_err(lc, kn, "unknown kind '%s'", k);
		else
			mask |= UINT32_C(1) << i;
	}
	return mask;
}

static void
rl_load_rule(rl_load_ctx *lc, yaml_node_t *n, rl_rule *r)
{
	yaml_node_pair_t *p;
	bool has_score = false;
	uint32_t seen = 0;

	r->line = n->start_mark.line + 1;
	if (n->type != YAML_MAPPING_NODE) {
		rl_err(lc, n, "a rule must be a mapping (id, title, when, ...)");
		return;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = rl_node(lc, p->key), *vn = rl_node(lc, p->value);
		const char *k = rl_scalar(lc, kn, "a key"), *v;
		char *end;

		if (k == NULL || vn == NULL || rl_twice(lc, kn, k, &seen))
			continue;
		if (rl_key_is(k, "id")) {
			v = rl_scalar(lc, vn, "id");
			if (v != NULL && !rl_valid_id(v))
				rl_err(lc, vn, "a rule id is lower-case "
				    "letters, digits and '_', not '%s'", v);
			/* Kept even when wrong: the file is refused anyway,
			 * and the id names the rule in later errors. */
			r->id = rl_strdup(lc, v);
		} else if (rl_key_is(k, "title")) {
			r->title = rl_strdup(lc, rl_scalar(lc, vn, "title"));
		} else if (rl_key_is(k, "kinds")) {
			r->kinds = rl_kinds(lc, vn);
		} else if (rl_key_is(k, "when")) {
			r->when = rl_expr(lc, vn, "when");
			r->when_src = rl_strdup(lc, rl_scalar(lc, vn, "when"));
		} else if (rl_key_is(k, "score")) {
			v = rl_scalar(lc, vn, "score");
			if (v == NULL)
				continue;
			has_score = true;
			r->score = strtod(v, &end);
			if (end == v || *end != '\0') {
				/* Not a number: an expression, computed per
				 * event and kept within 0..1 (rules_apply.c). */
				r->score = 0;
				r->score_src = rl_strdup(lc, v);
				r->score_expr = rl_expr(lc, vn, "score");
			} else if (!(r->score >= 0 && r->score <= 1)) {
				rl_err(lc, vn, "score must be from 0 to 1, "
				    "not '%s'", v);
			}
		} else if (rl_key_is(k, "explains")) {
			r->explains = rl_expr(lc, vn, "explains");
			r->explains_src = rl_strdup(lc, rl_scalar(lc, vn,
			    "explains"));
		} else if (rl_key_is(k, "explain")) {
			yaml_node_item_t *it;

			if (vn->type != YAML_SEQUENCE_NODE) {
				r->explain_src = rl_strdup(lc, rl_scalar(lc, vn,
				    "explain"));
				rl_load_variant(lc, vn, &r->explain[0]);
				r->nexplain = 1;
				continue;
			}
			for (it = vn->data.sequence.items.start;
			    it < vn->data.sequence.items.top; it++) {
				yaml_node_t *in = rl_node(lc, *it);

				if (r->nexplain == RL_VARIANTS_MAX) {
					rl_err(lc, vn, "at most %d variants of an "
					    "explanation", RL_VARIANTS_MAX);
					break;
				}
				if (in == NULL)
					continue;
				if (r->explain_src == NULL)
					r->explain_src = rl_strdup(lc,
					    rl_variant_src(lc, in));
				rl_load_variant(lc, in, &r->explain[r->nexplain++]);
			}
			if (r->nexplain == 0)
				rl_err(lc, vn, "explain needs a text");
		} else if (rl_key_is(k, "evidence")) {
			yaml_node_item_t *it;

			if (vn->type != YAML_SEQUENCE_NODE) {
				rl_err(lc, vn, "evidence must be a list");
				continue;
			}
			for (it = vn->data.sequence.items.start;
			    it < vn->data.sequence.items.top; it++) {
				if (r->nevidence == OD_EVIDENCE_MAX) {
					rl_err(lc, vn, "at most %d evidence "
					    "lines", OD_EVIDENCE_MAX);
					break;
				}
				rl_load_evidence(lc, rl_node(lc, *it),
				    &r->evidence[r->nevidence++]);
			}
		} else if (rl_key_is(k, "fixes")) {
			yaml_node_item_t *it;

			if (vn->type != YAML_SEQUENCE_NODE) {
				rl_err(lc, vn, "fixes must be a list");
				continue;
			}
			for (it = vn->data.sequence.items.start;
			    it < vn->data.sequence.items.top; it++) {
				if (r->nfixes == OD_FIXES_MAX) {
					rl_err(lc, vn, "at most %d fixes",
					    OD_FIXES_MAX);
					break;
				}
				rl_load_fix(lc, rl_node(lc, *it),
				    &r->fixes[r->nfixes++]);
			}
		} else if (rl_key_is(k, "confirm_with")) {
			int i;

			v = rl_scalar(lc, vn, "confirm_with");
			for (i = 0; v != NULL && rl_probes[i] != NULL; i++)
				if (strcmp(v, rl_probes[i]) == 0)
					break;
			if (v != NULL && rl_probes[i] == NULL)
				rl_err(lc, vn, "unknown probe '%s' (expected "
				    "context_cost, fits_now, largest_allocation, "
				    "fragmentation, processes or health)", v);
			else
				r->probe = rl_strdup(lc, v);
		} else {
			rl_err(lc, kn, "unknown key '%s' in a rule (expected "
			    "id, title, kinds, when, score, explains, explain, "
			    "evidence, fixes, confirm_with)", k);
		}
	}
	if (r->id == NULL)
		rl_err(lc, n, "a rule needs an id");
	if (r->title == NULL)
		rl_err(lc, n, "rule '%s' needs a title", r->id ? r->id : "?");
	if (r->when == NULL && r->when_src == NULL)
		rl_err(lc, n, "rule '%s' needs a when condition",
		    r->id ? r->id : "?");
	if (!has_score)
		rl_err(lc, n, "rule '%s' needs a score", r->id ? r->id : "?");
	if (r->nexplain == 0)
		rl_err(lc, n, "rule '%s' needs an explanation (explain)",
		    r->id ? r->id : "?");
}

/* libyaml's own error, with what it was reading when it found it. */
static void
rl_yaml_error(rl_errors *errs, const char *file, const yaml_parser_t *p)
{
	char msg[200];

	snprintf(msg, sizeof msg, "not valid YAML: %s%s%s",
	    p->context != NULL ? p->context : "",
	    p->context != NULL ? ": " : "",
	    p->problem != NULL ? p->problem : "unknown error");
	rl_err_at(errs, file, p->problem_mark, msg);
}

/*
 * One level of the document being composed (rl_compose): its node, and
 * for a mapping the key read and waiting for its value (0 for none).
 */
typedef struct rl_level {
	int node;
	int key;
} rl_level;

/* An anchor seen in the first document, for the duplicate check. */
typedef struct rl_anchor {
	char *name;
	yaml_mark_t mark;
} rl_anchor;

/*
 * Remembers the anchor of the node just added at mark; on the first
 * anchor given twice, keeps the two marks in *dup_first and *dup_second
 * (dup is then true).  False when memory ran out.
 */
static bool
rl_anchor_note(rl_anchor **v, int *n, int *cap, const yaml_char_t *name,
    yaml_mark_t mark, bool *dup, yaml_mark_t *dup_first,
    yaml_mark_t *dup_second)
{
	int i;

	if (name == NULL)
		return true;
	for (i = 0; i < *n; i++) {
		if (strcmp((*v)[i].name, (const char *)name) != 0)
			continue;
		if (!*dup) {
			*dup = true;
			*dup_first = (*v)[i].mark;
			*dup_second = mark;
		}
		return true;
	}
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		rl_anchor *nv = realloc(*v, (size_t)ncap * sizeof *nv);

		if (nv == NULL)
			return false;
		*v = nv;
		*cap = ncap;
	}
	if (((*v)[*n].name = strdup((const char *)name)) == NULL)
		return false;
	(*v)[(*n)++].mark = mark;
	return true;
}

/*
 * Adds node (just made, 0 when libyaml could not) to the level above,
 * or makes it the root.  False when memory ran out.
 */
static bool
rl_compose_attach(yaml_document_t *doc, rl_level *lv, int depth, int node)
{
	rl_level *up;

	if (node == 0)
		return false;
	if (depth == 0)
		return true;    /* the root: the document's first node */
	up = &lv[depth - 1];
	if (yaml_document_get_node(doc, up->node)->type == YAML_SEQUENCE_NODE)
		return yaml_document_append_sequence_item(doc, up->node, node);
	if (up->key == 0) {
		up->key = node;
		return true;
	}
	node = yaml_document_append_mapping_pair(doc, up->node, up->key, node);
	up->key = 0;
	return node != 0;
}

/* A tag for yaml_document_add_*: "!" and none are the default tag, as
 * libyaml's own loader has them. */
static const yaml_char_t *
rl_compose_tag(const yaml_char_t *tag)
{
	return tag == NULL || strcmp((const char *)tag, "!") == 0 ? NULL : tag;
}

/*
 * Reads a rule file's YAML into doc in one pass of libyaml's parser, with
 * the checks that keep a rule file small and its walk bounded: no aliases
 * (*name: a few lines of them can stand for billions of nodes), at most
 * RL_DEPTH_MAX levels of nesting (libyaml's loader, yaml_parser_load,
 * recurses once a level), one document.  The whole stream is parsed, so
 * that a problem after the first document is found too.  The first
 * problem in the file's order is the one reported, as a first pass of
 * those checks followed by yaml_parser_load reported it; a duplicate
 * anchor, which only yaml_parser_load refused, comes after them all, in
 * the words of libyaml 0.2.5's yaml_parser_register_anchor (src/loader.c
 * of https://github.com/yaml/libyaml; older releases spelt them
 * "occurence").  The nodes are those
 * yaml_parser_load makes for the first document, with their marks and
 * styles.  False, with the error in errs and doc empty, on any problem.
 */
static bool
rl_compose(const unsigned char *buf, size_t len, const char *file,
    rl_errors *errs, yaml_document_t *doc)
{
	yaml_parser_t p;
	yaml_event_t ev;
	rl_level lv[RL_DEPTH_MAX];
	rl_anchor *anchors = NULL;
	yaml_mark_t dup_first, dup_second;
	int depth = 0, docs = 0, nanchors = 0, cap = 0, i;
	bool ok = true, done = false, nomem = false, dup = false;

	memset(&dup_first, 0, sizeof dup_first);
	dup_second = dup_first;
	if (!yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1)) {
		rl_err_file(errs, file, "out of memory");
		return false;
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, buf, len);
	while (ok && !done) {
		/* The first document's nodes go into doc; the rest of the
		 * stream is only checked. */
		bool build = docs == 1 && !nomem;
		int node = 0;

		if (!yaml_parser_parse(&p, &ev)) {
			rl_yaml_error(errs, file, &p);
			ok = false;
			break;
		}
		switch (ev.type) {
		case YAML_ALIAS_EVENT:
			rl_err_at(errs, file, ev.start_mark, "aliases (*name) "
			    "are not allowed in rule files");
			ok = false;
			break;
		case YAML_SCALAR_EVENT:
			if (!build)
				break;
			node = yaml_document_add_scalar(doc,
			    rl_compose_tag(ev.data.scalar.tag),
			    ev.data.scalar.value, (int)ev.data.scalar.length,
			    ev.data.scalar.style);
			if (node != 0) {
				yaml_node_t *n = yaml_document_get_node(doc, node);

				n->start_mark = ev.start_mark;
				n->end_mark = ev.end_mark;
			}
			if (!rl_compose_attach(doc, lv, depth, node) ||
			    !rl_anchor_note(&anchors, &nanchors, &cap,
			    ev.data.scalar.anchor, ev.start_mark, &dup,
			    &dup_first, &dup_second))
				nomem = true;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= RL_DEPTH_MAX) {
				rl_err_at(errs, file, ev.start_mark, "nested "
				    "too deeply for a rule file");
				ok = false;
				break;
			}
			if (build && ev.type == YAML_SEQUENCE_START_EVENT)
				node = yaml_document_add_sequence(doc,
				    rl_compose_tag(
				    ev.data.sequence_start.tag),
				    ev.data.sequence_start.style);
			else if (build)
				node = yaml_document_add_mapping(doc,
				    rl_compose_tag(
				    ev.data.mapping_start.tag),
				    ev.data.mapping_start.style);
			if (build && node != 0) {
				yaml_node_t *n = yaml_document_get_node(doc, node);

				n->start_mark = ev.start_mark;
				n->end_mark = ev.end_mark;
			}
			if (build && (!rl_compose_attach(doc, lv, depth, node) ||
			    !rl_anchor_note(&anchors, &nanchors, &cap,
			    ev.type == YAML_SEQUENCE_START_EVENT ?
			    ev.data.sequence_start.anchor :
			    ev.data.mapping_start.anchor, ev.start_mark, &dup,
			    &dup_first, &dup_second)))
				nomem = true;
			lv[depth].node = build && !nomem ? node : 0;
			lv[depth].key = 0;
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			if (build && !nomem && lv[depth].node != 0)
				yaml_document_get_node(doc, lv[depth].node)->end_mark =
				    ev.end_mark;
			break;
		case YAML_DOCUMENT_START_EVENT:
			/* The loader reads the first document only: a second
			 * one would be ignored, so it is refused. */
			if (++docs > 1) {
				rl_err_at(errs, file, ev.start_mark, "a second YAML "
				    "document ('---'): a rule file holds one; put "
				    "its rules in the first one's list, or in a file "
				    "of their own");
				ok = false;
			} else {
				doc->start_mark = ev.start_mark;
			}
			break;
		case YAML_DOCUMENT_END_EVENT:
			if (docs == 1)
				doc->end_mark = ev.end_mark;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	for (i = 0; i < nanchors; i++)
		free(anchors[i].name);
	free(anchors);
	if (ok && nomem) {
		rl_err_file(errs, file, "out of memory");
		ok = false;
	} else if (ok && dup) {
		char msg[200];

		/* As rl_yaml_error words libyaml's composer error: its
		 * context, then its problem, at the second anchor. */
		snprintf(msg, sizeof msg, "not valid YAML: found duplicate "
		    "anchor; first occurrence: second occurrence");
		rl_err_at(errs, file, dup_second, msg);
		ok = false;
	}
	if (!ok) {
		yaml_document_delete(doc);
		memset(doc, 0, sizeof *doc);
	}
	return ok;
}

/* FNV-1a over a rule id, for the set's index. */
static size_t
rl_hash(const char *id)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *id != '\0'; id++)
		h = (h ^ (unsigned char)*id) * UINT64_C(1099511628211);
	return (size_t)h;
}

/* The slot of the set's index (open addressing, linear probing) that holds
 * id, or the empty slot where it would go. */
static size_t
rl_slot(const rl_set *s, const char *id)
{
	size_t mask = s->nslots - 1, k = rl_hash(id) & mask;

	while (s->slots[k] != 0 && strcmp(s->rules[s->slots[k] - 1].id, id) != 0)
		k = (k + 1) & mask;
	return k;
}

/* Makes room in the index for one more rule: at most half full, so that a
 * lookup probes a few slots, and a load of n rules costs O(n), not the
 * O(n^2) of a scan of the set per rule (49,152 rules took 14 s). */
static bool
rl_index_grow(rl_set *s)
{
	size_t nslots, k;
	int *slots, *old = s->slots;
	int i;

	if ((size_t)(s->n + 1) * 2 <= s->nslots)
		return true;
	nslots = s->nslots ? s->nslots * 2 : 64;
	slots = calloc(nslots, sizeof *slots);
	if (slots == NULL)
		return false;
	s->slots = slots;
	s->nslots = nslots;
	for (i = 0; i < s->n; i++) {
		k = rl_slot(s, s->rules[i].id);
		s->slots[k] = i + 1;
	}
	free(old);
	return true;
}

/* Adds r to the set, replacing a rule with the same id. */
static bool
rl_add(rl_set *s, rl_rule *r)
{
	size_t k;

	if (!rl_index_grow(s))
		return false;
	k = rl_slot(s, r->id);
	if (s->slots[k] != 0) {
		rl_rule_free(&s->rules[s->slots[k] - 1]);
		s->rules[s->slots[k] - 1] = *r;
		return true;
	}
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 32;
		rl_rule *nr = realloc(s->rules, (size_t)cap * sizeof *nr);

		if (nr == NULL)
			return false;
		s->rules = nr;
		s->cap = cap;
	}
	s->rules[s->n++] = *r;
	s->slots[k] = s->n;
	return true;
}

/*
 * Reads one rule file.  It is opened without blocking and checked before
 * it is read: a FIFO (named directly, through a symlink, or through
 * OOMDOC_RULES) would otherwise block the load forever, and a directory
 * or a device is not a rule file.
 */
static bool
rl_load_file(rl_set *s, const char *path, rl_errors *errs)
{
	unsigned char *buf;
	size_t len = 0;
	struct stat st;
	bool ok;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rl_err_file(errs, path, "%s", strerror(errno));
		return false;
	}
	if (fstat(fd, &st) != 0) {
		rl_err_file(errs, path, "%s", strerror(errno));
		close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		rl_err_file(errs, path, "not a regular file (%s): a rule file "
		    "must be one", S_ISDIR(st.st_mode) ? "a directory" :
		    S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ?
		    "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ?
		    "a device" : "of another type");
		close(fd);
		return false;
	}
	buf = malloc(RL_FILE_MAX + 1);
	while (buf != NULL && len <= RL_FILE_MAX) {
		ssize_t got = read(fd, buf + len, RL_FILE_MAX + 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rl_err_file(errs, path, "%s", strerror(errno));
			free(buf);
			close(fd);
			return false;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	if (buf == NULL || len > RL_FILE_MAX) {
		rl_err_file(errs, path, buf == NULL ? "out of memory" :
		    "a rule file may be at most 1 MiB");
		free(buf);
		return false;
	}
	ok = rl_load_buffer(s, path, (const char *)buf, len, errs);
	free(buf);
	return ok;
}

bool
rl_load_buffer(rl_set *s, const char *path, const char *text, size_t len,
    rl_errors *errs)
{
	const unsigned char *buf = (const unsigned char *)text;
	rl_load_ctx lc;
	yaml_node_t *root, *list = NULL;
	rl_rule rules[64];
	int nrules = 0, i, before = errs->n + errs->dropped;

	if (len > RL_FILE_MAX) {
		rl_err_file(errs, path, "a rule file may be at most 1 MiB");
		return false;
	}
	memset(&lc, 0, sizeof lc);
	if (!rl_compose(buf, len, path, errs, &lc.doc))
		return false;
	lc.y = (yu_ctx){ .file = path, .doc = &lc.doc, .errs = errs };
	lc.text = text;
	lc.len = len;
	root = yaml_document_get_root_node(&lc.doc);
	if (root == NULL) {
		yaml_document_delete(&lc.doc);
		return true;    /* an empty file holds no rule */
	}
	/* A list of rules, {rules: [...]}, or one rule. */
	if (root->type == YAML_SEQUENCE_NODE) {
		list = root;
	} else if (root->type == YAML_MAPPING_NODE &&
	    root->data.mapping.pairs.top - root->data.mapping.pairs.start == 1) {
		yaml_node_t *k = rl_node(&lc, root->data.mapping.pairs.start->key);

		if (yu_text_is(k, "knowledge")) {
			/* The knowledge table (knowledge.c), not rules. */
			bool ok;

			if (s->knowledge == NULL &&
			    (s->knowledge = kn_new()) == NULL)
				rl_err(&lc, NULL, "out of memory");
			ok = s->knowledge != NULL && kn_load(s->knowledge, path,
			    &lc.doc, rl_node(&lc,
			    root->data.mapping.pairs.start->value), errs);
			yaml_document_delete(&lc.doc);
			return ok;
		}
		if (yu_text_is(k, "recognisers")) {
			/* Recognisers (recog_load.c), not rules. */
			bool ok;

			if (s->recognisers == NULL &&
			    (s->recognisers = sk_table_new()) == NULL)
				rl_err(&lc, NULL, "out of memory");
			ok = s->recognisers != NULL && sk_table_load(
			    s->recognisers, path, &lc.doc, rl_node(&lc,
			    root->data.mapping.pairs.start->value), errs);
			yaml_document_delete(&lc.doc);
			return ok;
		}
		if (yu_text_is(k, "rules")) {
			list = rl_node(&lc, root->data.mapping.pairs.start->value);
			if (list == NULL || list->type != YAML_SEQUENCE_NODE) {
				rl_err(&lc, list, "rules must be a list");
				list = NULL;
			}
		}
	}
	memset(rules, 0, sizeof rules);
	if (list != NULL) {
		yaml_node_item_t *it;

		for (it = list->data.sequence.items.start;
		    it < list->data.sequence.items.top; it++) {
			if (nrules == 64) {
				rl_err(&lc, list, "at most 64 rules a file");
				break;
			}
			rl_load_rule(&lc, rl_node(&lc, *it), &rules[nrules++]);
		}
	} else if (lc.y.nerr == 0) {
		rl_load_rule(&lc, root, &rules[nrules++]);
	}
	/* The same id twice in one file is a mistake. */
	for (i = 0; i < nrules; i++) {
		int j;

		for (j = 0; j < i && rules[i].id != NULL; j++) {
			char msg[160];  /* the id cut as it always was */

			if (rules[j].id == NULL ||
			    strcmp(rules[i].id, rules[j].id) != 0)
				continue;
			snprintf(msg, sizeof msg, "rule id '%s' is defined "
			    "twice (first on line %d)", rules[i].id,
			    rules[j].line);
			yu_err_at(&lc.y, (uint64_t)rules[i].line, 1, "%s", msg);
		}
	}
	yaml_document_delete(&lc.doc);
	if (errs->n + errs->dropped > before) {
		for (i = 0; i < nrules; i++)
			rl_rule_free(&rules[i]);
		return false;
	}
	for (i = 0; i < nrules; i++) {
		rules[i].file = strdup(path);
		if (rules[i].file != NULL && rl_add(s, &rules[i]))
			continue;
		/* Out of memory: this rule and those after it are not kept. */
		for (; i < nrules; i++)
			rl_rule_free(&rules[i]);
		rl_err_file(errs, path, "out of memory");
		return false;
	}
	return true;
}

static int
rl_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool
rl_load(rl_set *s, const char *path, rl_errors *errs)
{
	struct stat st;
	char *names[RL_DIR_FILES_MAX];
	int n = 0, more = 0, i;
	bool ok = true, nomem = false;
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) != 0) {
		rl_err_file(errs, path, "%s", strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode))
		return rl_load_file(s, path, errs);
	d = opendir(path);
	if (d == NULL) {
		rl_err_file(errs, path, "%s", strerror(errno));
		return false;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || !((len > 5 &&
		    strcmp(de->d_name + len - 5, ".yaml") == 0) || (len > 4 &&
		    strcmp(de->d_name + len - 4, ".yml") == 0)))
			continue;
		if (n == RL_DIR_FILES_MAX || nomem) {
			more++;         /* counted, for the error below */
			continue;
		}
		names[n] = malloc(strlen(path) + len + 2);
		if (names[n] == NULL) {
			nomem = true;
			continue;
		}
		sprintf(names[n], "%s/%s", path, de->d_name);
		n++;
	}
	closedir(d);
	/* Which files would be left out depends on the order readdir gives,
	 * so a directory with too many is refused whole rather than loaded
	 * in part. */
	if (more > 0 || nomem) {
		if (nomem)
			rl_err_file(errs, path, "out of memory");
		else
			rl_err_file(errs, path, "a rules directory may hold at "
			    "most %d rule files (*.yaml, *.yml), this one holds "
			    "%d", RL_DIR_FILES_MAX, n + more);
		for (i = 0; i < n; i++)
			free(names[i]);
		return false;
	}
	qsort(names, (size_t)n, sizeof names[0], rl_cmp_names);
	for (i = 0; i < n; i++) {
		if (!rl_load_file(s, names[i], errs))
			ok = false;
		free(names[i]);
	}
	return ok;
}
