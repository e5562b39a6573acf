/*
 * ut_recognisers.h: the shipped recognisers (rules/recognisers.yaml) for
 * the unit tests that scan, loaded once per test program from the source
 * tree (OOMDOC_TEST_RECOGNISERS, which tests/CMakeLists.txt defines) and
 * freed at exit.  A load error fails the program at once: a scanner
 * without them would read only PyTorch's messages.
 */
#ifndef UT_RECOGNISERS_H
#define UT_RECOGNISERS_H

#include <stdio.h>
#include <stdlib.h>

#include "rules.h"

static rl_set *ut_rules;

static void
ut_recognisers_free(void)
{
	rl_free(ut_rules);
	ut_rules = NULL;
}

static const struct sk_table *
ut_recognisers(void)
{
	rl_errors errs = { .n = 0 };

	if (ut_rules != NULL)
		return ut_rules->recognisers;
	ut_rules = rl_new();
	if (ut_rules == NULL || !rl_load(ut_rules, OOMDOC_TEST_RECOGNISERS,
	    &errs) || ut_rules->recognisers == NULL) {
		fprintf(stderr, "cannot load %s: %s\n", OOMDOC_TEST_RECOGNISERS,
		    errs.n > 0 ? errs.v[0].msg : "no recognisers");
		exit(1);
	}
	atexit(ut_recognisers_free);
	return ut_rules->recognisers;
}

#endif
