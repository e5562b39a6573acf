/*
 * rules_describe.c: the loaded rules as `oomdoc rules list` and `rules
 * show` print them.  Everything a rule file gave (its name, the rule's
 * title, condition, score and explanation) is written through
 * od_escape_line, as the text report writes log text: a rule file is
 * input, and its text must not drive the terminal.
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
		fprintf(out, "%-24s %-4s  ", r->id, score);
		od_escape_line(out, r->title);
		fputs("  (", out);
		od_escape_line(out, r->file);
		fprintf(out, ":%d)\n", r->line);
		return;
	}
	fprintf(out, "id:           %s\ntitle:        ", r->id);
	od_escape_line(out, r->title);
	fputs("\nfrom:         ", out);
	od_escape_line(out, r->file);
	fprintf(out, ":%d\nkinds:        ", r->line);
	if (r->kinds == 0)
		fputs("every kind", out);
	for (k = 0; k < OD_KIND_COUNT; k++)
		if (r->kinds & (UINT32_C(1) << k))
			fprintf(out, "%s ", od_kind_name((od_kind)k));
	fputs("\nwhen:         ", out);
	od_escape_line(out, r->when_src);
	fputs("\nscore:        ", out);
	if (r->score_src != NULL)
		od_escape_line(out, r->score_src);
	else
		fprintf(out, "%.2f", r->score);
	if (r->explains_src != NULL) {
		fputs("\nexplains:     ", out);
		od_escape_line(out, r->explains_src);
	}
	fputs("\nexplain:      ", out);
	od_escape_line(out, r->explain_src);
	fputc('\n', out);
	for (k = 0; k < r->nfixes; k++)
		fprintf(out, "fix:          %s\n", r->fixes[k].id);
	if (r->probe != NULL)
		fprintf(out, "confirm_with: %s\n", r->probe);
}
