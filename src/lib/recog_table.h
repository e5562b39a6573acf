/*
 * recog_table.h: the recognisers of every stack but PyTorch's caching
 * allocator, as data: YAML files beside the rules (rules/recognisers.yaml,
 * the RECOGNISERS section of oomdoc(1)), loaded into a table
 * (recog_load.c), compiled into the sk_recogniser of recogniser.h
 * (recog_stacks.c) and checked against their own examples by
 * `oomdoc rules check` (recog_check.c).
 *
 * A file holds a mapping with one key, "recognisers", whose value is a list
 * of recognisers; each is read into an sk_spec.  A recogniser whose id is
 * loaded already replaces the old one in its place, so that a user's file
 * given with --rules can change a shipped one; a new id goes to the end.
 * The order is the order of a tie: of two messages that start at the same
 * byte, the recogniser first in the table reads it.
 */
#ifndef OD_RECOG_TABLE_H
#define OD_RECOG_TABLE_H

#include <yaml.h>

#include "recogniser.h"
#include "rules.h"
#include "yaml_util.h"

/* The most recognisers of all files together: each is a candidate of
 * recogniser.h. */
#define SK_MAX RG_CANDIDATES_MAX

/* The longest pattern, once its pieces are joined and its spaces widened
 * (NUL included). */
#define SK_PATTERN_MAX 4096

/* The most examples a recogniser, fields an example, anchors a recogniser. */
#define SK_EXAMPLES_MAX 16
#define SK_FIELDS_MAX 24
#define SK_ANCHORS_MAX 16

/* Where a YAML node starts: line and column from 1. */
typedef yu_mark sk_mark;

/* A field an example must yield, as the file writes it. */
typedef struct {
	char *name;
	char *value;
	sk_mark at;
} sk_example_field;

/* An example: a text and every field the recogniser must read from it. */
typedef struct {
	char *text;
	sk_mark at;
	sk_example_field fields[SK_FIELDS_MAX];
	int nfields;
} sk_example;

/* A recogniser, as loaded.  Every string is owned by the table. */
typedef struct {
	char *id;
	char *file;             /* the file it came from */
	sk_mark at;             /* where its mapping starts */
	od_kind kind;
	od_confidence conf;
	char *framework;        /* NULL: the kind's (names.c) */
	bool fatal;             /* false: every message of it is a warning */
	ex_anchor anchors[SK_ANCHORS_MAX];      /* text owned */
	sk_mark anchor_at[SK_ANCHORS_MAX];
	int nanchors;
	char *pattern;          /* the pieces joined, not widened */
	sk_mark pattern_at;
	char *follow;           /* NULL, or a pattern for the lines after */
	sk_mark follow_at;
	/*
	 * pattern and follow (NULL for none) widened and compiled, with the
	 * options recog_stacks.c's set needs, when the load checked them
	 * (sk_compile_check); each set takes a copy (rx_code_copy) rather than
	 * compiling them again.  NULL when not checked: the set compiles
	 * them then.  Owned.
	 */
	rx_code *pattern_re;
	rx_code *follow_re;
	int follow_lines;
	bool follow_required;
	bool follow_absent;     /* no event where the follow is found */
	bool quiet_in_prose;    /* no event where the line only talks of it */
	char *confirm;          /* low confidence: what would confirm it */
	sk_example *examples;   /* owned, nexamples of them */
	int nexamples;
} sk_spec;

/* The table: owned by its rule set (rl_set.recognisers); sk_table_free
 * frees it. */
typedef struct sk_table {
	sk_spec *v;
	int n, cap;
} sk_table;

sk_table *sk_table_new(void);
void sk_table_free(sk_table *t);

/*
 * Adds the recognisers of list, the value of a file's "recognisers" key,
 * to t.  Every error goes to errs with path and the node's line and
 * column (a pattern that does not compile: the column of the pattern's
 * error); on any error nothing of the file is added and false is
 * returned.
 */
bool sk_table_load(sk_table *t, const char *path, yaml_document_t *doc,
    yaml_node_t *list, rl_errors *errs);

int sk_table_count(const sk_table *t);
/* The examples of all its recognisers. */
int sk_example_count(const sk_table *t);

/*
 * Writes pattern with each plain space outside a character class turned
 * into \s+ (or \s before a quantifier), so that wrapped messages still
 * match.  False when it does not fit in cap bytes.
 */
bool sk_widen(const char *p, char *out, size_t cap);

/*
 * The fields a recogniser fills, by the names of its pattern's groups and
 * of its examples (recog_stacks.c).  A size group's name may carry a unit
 * suffix (_b, _kb, _gib, _bin); an example's field never does: its value
 * is in bytes.
 */
typedef enum { SK_FIELD_SIZE, SK_FIELD_INT, SK_FIELD_TEXT } sk_field_type;

typedef struct {
	const char *name;
	sk_field_type type;
} sk_field;

/* The fields, NULL-terminated. */
extern const sk_field sk_fields[];

/* Writes field f of ev as an example writes it into buf; false when ev
 * does not give it (its value is that of a fresh event). */
bool sk_field_value(const od_event *ev, int f, char *buf, size_t cap);

/* Sets the field that a group named name fills from p[0..n) (an
 * rx_name_fn; arg is the od_event). */
void sk_set_field(void *arg, const char *name, const char *p, size_t n);

/*
 * Whether a match of the recognisers found at t[ms] (t tlen bytes, tx
 * what the extractor says of it, may be NULL) is a message quoted in
 * source code that a traceback shows ("raise ValueError(\"No available
 * memory ...\""): such a match is passed over, since the exception's own
 * line follows it.  Not where the input ends with that statement (its
 * string's continuation lines at most): a traceback cut there shows the
 * failure only in its raise line.
 */
bool sk_quoted_in_source(const struct rg_text *tx, const char *t,
    size_t tlen, size_t ms);

/* How many searches of recogniser i, in the state self that
 * sk_recogniser.create made, stopped at one of PCRE2's limits (regex.h)
 * rather than finding or failing: its pattern backtracks too much. */
uint64_t sk_limit_hits(const void *self, int i);
/* The sum of sk_limit_hits over all recognisers of self. */
uint64_t sk_strikes(const void *self);

/*
 * A recogniser whose searches stopped at a limit SK_STRIKES times is
 * stopped: the scanner no longer runs it, so that a pattern that
 * backtracks without end costs a bounded time per scanner, whatever the
 * log.  sk_stopped returns the first stopped recogniser from index from
 * on, or -1.
 */
#define SK_STRIKES 4
int sk_stopped(const void *self, int from);

/*
 * `oomdoc rules check` for recognisers (recog_check.c): compiles every
 * pattern with jit as the scanner would, checks each anchor against the
 * pattern and the examples, and runs every example through the
 * recogniser alone, comparing the fields; each failure goes to errs with
 * the file, line and column of what failed.  False when one did.
 */
bool sk_table_check(const sk_table *t, bool jit, rl_errors *errs);

#endif
