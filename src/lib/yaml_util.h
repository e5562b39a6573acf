/*
 * yaml_util.h: what the loaders of the YAML files under rules/ share
 * (rules_load.c reads the file and the document, then hands the value of
 * a "recognisers" key to recog_load.c and that of a "knowledge" key to
 * knowledge.c): errors with their file, line and column added to a load's
 * errors, and the reading of libyaml's nodes.
 *
 * Each loader keeps the texts of its own errors; these functions only
 * place them and count them.
 */
#ifndef OD_YAML_UTIL_H
#define OD_YAML_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <yaml.h>

#include "rules.h"

/* Where a YAML node starts: line and column from 1 (0 and 0: no place). */
typedef struct {
	uint64_t line, col;
} yu_mark;

/*
 * One file being loaded: the name its errors carry, its document, and
 * the load's errors (none owned).  nerr counts the errors of this file,
 * dropped ones too, so that a loader can tell whether a part of the file
 * added any.
 */
typedef struct {
	const char *file;
	yaml_document_t *doc;
	rl_errors *errs;
	int nerr;
} yu_ctx;

/* The next free entry of errs, or NULL (and one more dropped) when it
 * holds RL_ERRORS_MAX already. */
od_error *yu_error_slot(rl_errors *errs);

/* Adds an error of file at line and column to errs (dropped when full). */
void yu_errors_add(rl_errors *errs, const char *file, uint64_t line,
    uint64_t col, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Where n starts; 0 and 0 for NULL. */
yu_mark yu_mark_of(const yaml_node_t *n);

/* An error of c's file at line and column, counted in c->nerr. */
void yu_err_at(yu_ctx *c, uint64_t line, uint64_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void yu_verr_at(yu_ctx *c, uint64_t line, uint64_t col, const char *fmt,
    va_list ap) __attribute__((format(printf, 4, 0)));

/* An error of c's file where node n starts (no place for NULL). */
void yu_err(yu_ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Node i of c's document, or NULL. */
yaml_node_t *yu_node(const yu_ctx *c, int i);

/* The text of scalar n; NULL when n is NULL or not a scalar. */
const char *yu_text(const yaml_node_t *n);

/* Whether n is a scalar whose text is s. */
bool yu_text_is(const yaml_node_t *n, const char *s);

/* A copy of s (NULL for NULL) that the caller frees; out of memory, NULL
 * and the error "out of memory" at node at (no place for NULL), so that a
 * value lost is not taken for a value missing. */
char *yu_strdup(yu_ctx *c, const yaml_node_t *at, const char *s);

/*
 * Which pairs of mapping map have a scalar key that an earlier pair has
 * too: an array of one flag a pair, in their order, that the caller
 * frees; NULL when memory ran out.  It sorts the keys, so that a mapping
 * of many keys (a 1 MiB file holds 70 000) costs n log n, not n^2.
 */
bool *yu_repeated_keys(const yu_ctx *c, const yaml_node_t *map);

#endif
