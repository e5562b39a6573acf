/*
 * rules_describe.c: the loaded rules as `oomdoc rules list` and `rules
 * show` print them.
 */
#include <stdio.h>
#include <string.h>

#include "rules.h"

int
rl_count(const rl_set *s)
{
	return s->n;
}

int
rl_find(const rl_set *s, const char *id)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->rules[i].id, id) == 0)
			return i;
	return -1;
}

void
rl_describe(const rl_set *s, int i, FILE *out, bool full)
{
	const rl_rule *r = &s->rules[i];
	int k;

	if (!full) {
		char score[8];

		/* A score computed per event shows as "expr" here and
		 * whole in `rules show`. */
		if (r->score_src != NULL)
			snprintf(score, sizeof score, "expr");
		else
			snprintf(score, sizeof score, "%.2f", r->score);
		fprintf(out, "%-24s %-4s  %s  (%s:%d)\n", r->id, score,
		    r->title, r->file, r->line);
		return;
	}
	fprintf(out, "id:           %s\ntitle:        %s\nfrom:         "
	    "%s:%d\nkinds:        ", r->id, r->title, r->file, r->line);
	if (r->kinds == 0)
		fputs("every kind", out);
	for (k = 0; k < OD_KIND_COUNT; k++)
		if (r->kinds & (UINT32_C(1) << k))
			fprintf(out, "%s ", od_kind_name((od_kind)k));
	fprintf(out, "\nwhen:         %s\nscore:        ", r->when_src);
	if (r->score_src != NULL)
		fputs(r->score_src, out);
	else
		fprintf(out, "%.2f", r->score);
	if (r->explains_src != NULL)
		fprintf(out, "\nexplains:     %s", r->explains_src);
	fprintf(out, "\nexplain:      %s\n", r->explain_src);
	for (k = 0; k < r->nfixes; k++)
		fprintf(out, "fix:          %s\n", r->fixes[k].id);
	if (r->probe != NULL)
		fprintf(out, "confirm_with: %s\n", r->probe);
}
