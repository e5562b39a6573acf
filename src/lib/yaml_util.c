/*
 * yaml_util.c: the errors and node reading that the YAML loaders share
 * (yaml_util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_util.h"

od_error *
yu_error_slot(rl_errors *errs)
{
	if (errs->n >= RL_ERRORS_MAX) {
		errs->dropped++;
		return NULL;
	}
	return &errs->v[errs->n++];
}

static void
yu_verrors_add(rl_errors *errs, const char *file, uint64_t line,
    uint64_t col, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

static void
yu_verrors_add(rl_errors *errs, const char *file, uint64_t line,
    uint64_t col, const char *fmt, va_list ap)
{
	od_error *e = yu_error_slot(errs);

	if (e == NULL)
		return;
	snprintf(e->file, sizeof e->file, "%s", file != NULL ? file : "");
	e->line = line;
	e->col = col;
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

void
yu_errors_add(rl_errors *errs, const char *file, uint64_t line, uint64_t col,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	yu_verrors_add(errs, file, line, col, fmt, ap);
	va_end(ap);
}

yu_mark
yu_mark_of(const yaml_node_t *n)
{
	yu_mark m = { 0, 0 };

	if (n != NULL) {
		m.line = (uint64_t)n->start_mark.line + 1;
		m.col = (uint64_t)n->start_mark.column + 1;
	}
	return m;
}

void
yu_verr_at(yu_ctx *c, uint64_t line, uint64_t col, const char *fmt,
    va_list ap)
{
	c->nerr++;
	yu_verrors_add(c->errs, c->file, line, col, fmt, ap);
}

void
yu_err_at(yu_ctx *c, uint64_t line, uint64_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	yu_verr_at(c, line, col, fmt, ap);
	va_end(ap);
}

void
yu_err(yu_ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	yu_mark m = yu_mark_of(n);
	va_list ap;

	va_start(ap, fmt);
	yu_verr_at(c, m.line, m.col, fmt, ap);
	va_end(ap);
}

yaml_node_t *
yu_node(const yu_ctx *c, int i)
{
	return yaml_document_get_node(c->doc, i);
}

const char *
yu_text(const yaml_node_t *n)
{
	if (n == NULL || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

bool
yu_text_is(const yaml_node_t *n, const char *s)
{
	const char *t = yu_text(n);

	return t != NULL && strcmp(t, s) == 0;
}

char *
yu_strdup(yu_ctx *c, const yaml_node_t *at, const char *s)
{
	char *d = s != NULL ? strdup(s) : NULL;

	if (s != NULL && d == NULL)
		yu_err(c, at, "out of memory");
	return d;
}

/* A key and the index of its pair, for yu_repeated_keys. */
typedef struct {
	const char *text;
	size_t at;
} yu_key;

static int
yu_key_cmp(const void *a, const void *b)
{
	const yu_key *x = a, *y = b;
	int d = strcmp(x->text, y->text);

	return d != 0 ? d : x->at < y->at ? -1 : x->at > y->at;
}

bool *
yu_repeated_keys(const yu_ctx *c, const yaml_node_t *map)
{
	size_t n = (size_t)(map->data.mapping.pairs.top -
	    map->data.mapping.pairs.start), k = 0, i;
	bool *rep = calloc(n + 1, sizeof *rep);
	yu_key *keys = malloc((n + 1) * sizeof *keys);

	if (rep == NULL || keys == NULL) {
		free(rep);
		free(keys);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const char *t = yu_text(yu_node(c,
		    map->data.mapping.pairs.start[i].key));

		if (t != NULL)
			keys[k++] = (yu_key){ .text = t, .at = i };
	}
	qsort(keys, k, sizeof *keys, yu_key_cmp);
	for (i = 1; i < k; i++)
		if (strcmp(keys[i].text, keys[i - 1].text) == 0)
			rep[keys[i].at] = true;
	free(keys);
	return rep;
}
