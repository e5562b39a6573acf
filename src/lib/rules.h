/*
 * rules.h: the rule engine.  Rules are data (YAML files, see rules/ and
 * the RULES section of oomdoc(1)): each maps the facts of an event to a
 * likely cause, with a score, an explanation, evidence and fixes whose
 * numbers are computed from the event.
 *
 * Loading rules reads the files named and nothing else; no rule can run a
 * command or open a file.
 *
 * This is the one header of the rule engine, whose files are
 * rules_load.c (the YAML loader), rules_apply.c (rules applied to an
 * event), fingerprint.c (the fingerprints of events and reports) and
 * rules_describe.c (`rules list` and `rules show`).  The types below the
 * errors are shared by those files only.
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

/* A setting a fix changes: expressions of the value it has and gets. */
typedef struct {
	char *setting;
	xp_expr *from, *to;
} rl_change;

/* A fix of a rule, as loaded: its condition and templates. */
typedef struct {
	char *id;
	rl_change changes[OD_CHANGES_MAX];
	int nchanges;
	xp_expr *when;
	xp_template *text;
	char *env_name;
	xp_template *env_key;   /* env_name as a template ({alloc_conf_var}) */
	xp_template *env_value;
	xp_template *code;
	char *config_key;
	xp_template *config_value;
} rl_fix;

#define RL_VARIANTS_MAX 8

/* One variant of a text: printed when its condition holds (none: always)
 * and every value in it is known. */
typedef struct {
	xp_expr *when;
	xp_template *text;
} rl_variant;

/*
 * A line of evidence, as loaded: a text, or a comparison of two byte
 * counts (lhs and rhs, expressions) whose operator the engine picks so
 * that it holds for the numbers printed; each side is printed as its
 * label (a template, by default the expression's source) and its value.
 * near > 0: when the two are within that fraction of rhs, the line says
 * so ("close to it, within N%").
 */
typedef struct {
	xp_expr *when;
	xp_template *text;
	xp_expr *lhs, *rhs;
	xp_template *lhs_label, *rhs_label;
	double near;
} rl_evidence;

/* A rule, as loaded.  The set owns every pointer in it. */
typedef struct {
	char *id;
	char *title;
	char *file;
	int line;
	uint32_t kinds;         /* bit per od_kind; 0: every kind */
	char *when_src;
	xp_expr *when;
	double score;           /* the score, when it is a number */
	char *score_src;        /* or the expression that computes it per event */
	xp_expr *score_expr;
	char *explains_src;     /* the bytes the cause accounts for */
	xp_expr *explains;
	char *explain_src;      /* the first variant's source */
	rl_variant explain[RL_VARIANTS_MAX];
	int nexplain;
	rl_evidence evidence[OD_EVIDENCE_MAX];
	int nevidence;
	rl_fix fixes[OD_FIXES_MAX];
	int nfixes;
	char *probe;            /* confirm_with: the live-mode probe */
} rl_rule;

/* The loaded rules, in load order (a rule that replaces another by id takes
 * its place). */
struct rl_set {
	rl_rule *rules;
	int n, cap;
	/* An index of rules by id (rules_load.c): nslots slots, a power of
	 * two, each 0 (empty) or a rule's index + 1. */
	int *slots;
	size_t nslots;
	struct kn_table *knowledge;     /* knowledge.h; owned, may be NULL */
	struct sk_table *recognisers;   /* recog_table.h; owned, may be NULL */
};

/* Sets ev's fingerprint from its kind, its top cause, its exception and
 * error, and its last user frame (fingerprint.c). */
void rl_fingerprint(od_event *ev);

rl_set *rl_new(void);
void rl_free(rl_set *s);

/*
 * Loads a rule file, or every *.yaml and *.yml file of a directory in
 * name order (a directory of more than 256 is an error, and none of them
 * is loaded).  A rule file must be a regular file holding one YAML
 * document: a FIFO, a socket, a device or a directory named *.yaml is an
 * error, found without blocking on it, and so is a second document.  A rule whose id is already loaded replaces the old one.
 * Every error found is added to errs; a file with errors adds no rule.
 * Returns false when there was an error.
 */
bool rl_load(rl_set *s, const char *path, rl_errors *errs);

/* Loads the rules of one file's text, named path in errors and listings. */
bool rl_load_buffer(rl_set *s, const char *path, const char *text, size_t len,
    rl_errors *errs);

/*
 * Finds the causes of ev and its fingerprint.  The causes rank by the
 * bytes they account for (explains; a cause without them ranks after
 * those with them), then by score, then in load order; OD_CAUSES_MAX of
 * them are kept.  False when memory ran out (a cause, or a part of one,
 * may be missing).
 */
bool rl_apply(const rl_set *s, od_event *ev, const fc_user_facts *user);

/* Whether the live probes (CUDA, NVML) can run for ev: not for an event of
 * another vendor's device.  rl_apply names no probe for such an event. */
bool rl_probe_runs(const od_event *ev);

/* The report's fingerprint, from its events' fingerprints. */
void rl_report_fingerprint(od_events *set, char out[17]);

/* The loaded rules, for `oomdoc rules list` and `rules show`. */
int rl_count(const rl_set *s);
void rl_describe(const rl_set *s, int i, FILE *out, bool full);
int rl_find(const rl_set *s, const char *id);

/* Whether name is an environment variable name as the shells take one
 * (rules_load.c): a fix's env line must name one, also once rendered. */
bool rl_valid_env(const char *name);

#endif
