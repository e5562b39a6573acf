/*
 * facts.h: the facts of an event, by name, for the rules' conditions and
 * templates; and the facts the user supplies with --fact.
 */
#ifndef OD_FACTS_H
#define OD_FACTS_H

#include "expr.h"
#include "core.h"

#define FC_USER_MAX 32

/* Facts the user gives (--fact NAME=VALUE); they win over the log's. */
typedef struct {
	char name[48];
	char text[128];         /* the value as given, for strings */
	xv_value value;
} fc_user;

typedef struct {
	fc_user v[FC_USER_MAX];
	int n;
} fc_user_facts;

/*
 * What a lookup reads: one event and the user's facts, and the room where
 * the facts that are built as text (user_frame, alloc_conf_prefix) are
 * written.  A string that a lookup returns may point into that room, so it
 * lives as long as the source and until the same fact is looked up again;
 * each caller has its own source, so two threads never share the room.
 */
typedef struct {
	char user_frame[300];   /* "file:line in function" */
	char alloc_conf_prefix[200];
	char release[16];       /* release.min or release.max, "1.10" */
} fc_scratch;

typedef struct {
	const od_event *ev;
	const fc_user_facts *user;
	const struct kn_table *kn;      /* the knowledge table, or NULL */
	fc_scratch scratch;
	bool nomem;             /* a renderer ran out of memory (rules_apply.c) */
} fc_source;

/* xp_fact_exists and xp_lookup for the rules; ctx is an fc_source. */
bool fc_exists(void *ctx, const char *name, size_t len);
bool fc_lookup(void *ctx, const char *name, size_t len, xv_value *out);

/*
 * Parses "NAME=VALUE" into the user's facts: a size with a unit ("2GiB")
 * is a byte count, a number is a number, true/false a boolean, anything
 * else a string.  False with err filled in for an unknown name, a
 * malformed argument or too many facts.
 */
bool fc_user_add(fc_user_facts *u, const char *arg, od_error *err);

/* Which of ev's "Process N" clauses is the process itself, or -1 (live
 * mode leaves it off the fake device it builds from the log). */
int fc_self(const od_event *ev);

/* The name of fact i, or NULL past the last one (`oomdoc rules facts`,
 * which the manual's checks read). */
const char *fc_name(int i);

#endif
