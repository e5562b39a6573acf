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
		fprintf(out, "%-24s %.2f  %s  (%s:%d)\n", r->id, r->score,
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
	fprintf(out, "\nwhen:         %s\nscore:        %.2f\nexplain:      "
	    "%s\n", r->when_src, r->score, r->explain_src);
	for (k = 0; k < r->nfixes; k++)
		fprintf(out, "fix:          %s\n", r->fixes[k].id);
	if (r->probe != NULL)
		fprintf(out, "confirm_with: %s\n", r->probe);
}
