/*
 * api_rules.c: the public interface's rule set (include/oomdoc/oomdoc.h):
 * the core's rules (rules.c) with the errors of their loads and the facts
 * the caller gives, which every application of the rules reads.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "facts.h"
#include "rules.h"

struct oomdoc_rules {
	rl_set *set;
	rl_errors errs;         /* of every load so far */
	fc_user_facts facts;
};

oomdoc_rules *
oomdoc_rules_new(void)
{
	oomdoc_rules *r = calloc(1, sizeof *r);

	if (r == NULL)
		return NULL;
	r->set = rl_new();
	if (r->set == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void
oomdoc_rules_free(oomdoc_rules *r)
{
	if (r == NULL)
		return;
	rl_free(r->set);
	free(r);
}

const struct sk_table *
api_recognisers(const oomdoc_rules *r)
{
	return r != NULL ? r->set->recognisers : NULL;
}

bool
oomdoc_rules_load(oomdoc_rules *r, const char *path)
{
	return rl_load(r->set, path, &r->errs);
}

bool
oomdoc_rules_load_text(oomdoc_rules *r, const char *name, const char *text,
    size_t len)
{
	return rl_load_buffer(r->set, name, text, len, &r->errs);
}

int
oomdoc_rules_count(const oomdoc_rules *r)
{
	return rl_count(r->set);
}

int
oomdoc_rules_error_count(const oomdoc_rules *r)
{
	return r->errs.n;
}

bool
oomdoc_rules_error(const oomdoc_rules *r, int i, oomdoc_error *out)
{
	if (i < 0 || i >= r->errs.n)
		return false;
	api_error(out, &r->errs.v[i]);
	return true;
}

int
oomdoc_rules_errors_dropped(const oomdoc_rules *r)
{
	return r->errs.dropped;
}

bool
oomdoc_rules_fact(oomdoc_rules *r, const char *name_value, oomdoc_error *err)
{
	od_error e;

	memset(&e, 0, sizeof e);
	if (fc_user_add(&r->facts, name_value, &e))
		return true;
	api_error(err, &e);
	return false;
}

void
oomdoc_rules_apply(const oomdoc_rules *r, oomdoc_event *ev)
{
	rl_apply(r != NULL ? r->set : NULL, ev, r != NULL ? &r->facts : NULL);
}
