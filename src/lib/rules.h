/*
 * rules.h: the rule engine.  Rules are data (YAML files, see rules/ and
 * the RULES section of oomdoc(1)): each maps the facts of an event to a
 * likely cause, with a score, an explanation, evidence and fixes whose
 * numbers are computed from the event.
 *
 * Loading rules reads the files named and nothing else; no rule can run a
 * command or open a file.
 */
#ifndef OD_RULES_H
#define OD_RULES_H

#include "facts.h"
#include "core.h"

#define RL_ERRORS_MAX 64

/* Errors of a load, each with its file, line and column. */
typedef struct {
	od_error v[RL_ERRORS_MAX];
	int n;
	int dropped;            /* errors beyond RL_ERRORS_MAX */
} rl_errors;

typedef struct rl_set rl_set;

rl_set *rl_new(void);
void rl_free(rl_set *s);

/*
 * Loads a rule file, or every *.yaml and *.yml file of a directory in
 * name order.  A rule whose id is already loaded replaces the old one.
 * Every error found is added to errs; a file with errors adds no rule.
 * Returns false when there was an error.
 */
bool rl_load(rl_set *s, const char *path, rl_errors *errs);

/* Loads the rules of one file's text, named path in errors and listings. */
bool rl_load_buffer(rl_set *s, const char *path, const char *text, size_t len,
    rl_errors *errs);

/* Finds the causes of ev and its fingerprint. */
void rl_apply(const rl_set *s, od_event *ev, const fc_user_facts *user);

/* The report's fingerprint, from its events' fingerprints. */
void rl_report_fingerprint(od_events *set, char out[17]);

/* The loaded rules, for `oomdoc rules list` and `rules show`. */
int rl_count(const rl_set *s);
void rl_describe(const rl_set *s, int i, FILE *out, bool full);
int rl_find(const rl_set *s, const char *id);

#endif
