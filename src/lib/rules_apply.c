/*
 * rules_apply.c: applying the loaded rules to an event.  Every rule whose
 * kinds include the event's and whose condition holds gives a cause: its
 * score (a number, or an expression of the facts kept within 0..1), a
 * confidence from that score, no surer than the event, and the texts of
 * its explanation, evidence and fixes rendered from the facts.  The causes
 * are ranked by score, and the event's fingerprint is taken from the top
 * one (fingerprint.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "facts.h"
#include "rules.h"

#define RL_TEXT_MAX 2048        /* bytes of one rendered text */


/* Renders a template; NULL when a part of it is unknown, or when memory
 * ran out (then *ok becomes false). */
static char *
rl_render(const xp_template *t, fc_source *src, bool keep_unknown, bool *ok)
{
	char buf[RL_TEXT_MAX], *s;

	if (t == NULL)
		return NULL;
	if (!xp_template_render(t, fc_lookup, src, buf, sizeof buf) &&
	    !keep_unknown)
		return NULL;
	if ((s = strdup(buf)) == NULL)
		*ok = false;
	return s;
}

/*
 * Ranks the causes by score, best first.  Causes of equal score keep the
 * order of their rules in the set (load order), so the ranking is the same
 * on every C library: qsort need not be stable, this insertion sort is.
 */
static void
rl_rank(od_cause *c, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		od_cause t = c[i];

		for (j = i; j > 0 && c[j - 1].score < t.score; j--)
			c[j] = c[j - 1];
		c[j] = t;
	}
}

/*
 * Makes room for a cause of score score among n = OD_CAUSES_MAX: the one
 * that would rank last (the lowest score, the last loaded of those) goes,
 * when the new one would rank before it.  Returns the new count, or -1
 * when the new cause would rank last itself.
 */
static int
rl_make_room(od_cause *found, int n, double score)
{
	int low = 0, k;

	for (k = 1; k < n; k++)
		if (found[k].score <= found[low].score)
			low = k;
	if (found[low].score >= score)
		return -1;
	od_cause_clear(&found[low]);
	memmove(&found[low], &found[low + 1],
	    (size_t)(n - low - 1) * sizeof found[0]);
	return n - 1;
}

bool
rl_apply(const rl_set *s, od_event *ev, const fc_user_facts *user)
{
	fc_source src = { .ev = ev, .user = user };
	od_cause found[OD_CAUSES_MAX];
	int n = 0, i, k;
	bool ok = true;

	/* An event keeps its OD_CAUSES_MAX best causes, whatever the number
	 * of rules that fire. */
	for (i = 0; s != NULL && i < s->n; i++) {
		const rl_rule *r = &s->rules[i];
		double score = r->score;
		od_cause *c;

		if (r->kinds != 0 && !(r->kinds & (UINT32_C(1) << ev->kind)))
			continue;
		if (!xp_true(xp_eval(r->when, fc_lookup, &src)))
			continue;
		if (r->score_expr != NULL) {
			xv_value v = xp_eval(r->score_expr, fc_lookup, &src);

			/* A score that cannot be computed for this event
			 * gives no cause, as an unknown condition fires
			 * none. */
			if (v.type != XV_NUM || !isfinite(v.num))
				continue;
			score = v.num < 0 ? 0 : v.num > 1 ? 1 : v.num;
		}
		if (n == OD_CAUSES_MAX) {
			int room = rl_make_room(found, n, score);

			if (room < 0)
				continue;
			n = room;
		}
		c = &found[n];
		memset(c, 0, sizeof *c);
		c->rule = r->id;
		c->title = r->title;
		c->probe = r->probe;
		c->score = score;
		/* The confidence follows the score this event got. */
		c->confidence = c->score >= 0.75 ? OD_CONF_HIGH :
		    c->score >= 0.5 ? OD_CONF_MEDIUM : OD_CONF_LOW;
		/* A cause is no surer than the event it explains. */
		if (ev->confidence < c->confidence)
			c->confidence = ev->confidence;
		c->explanation = rl_render(r->explain, &src, true, &ok);
		for (k = 0; k < r->nevidence; k++) {
			char *e = rl_render(r->evidence[k], &src, false, &ok);

			if (e != NULL)
				c->evidence[c->nevidence++] = e;
		}
		for (k = 0; k < r->nfixes; k++) {
			const rl_fix *rf = &r->fixes[k];
			od_fix *f = &c->fixes[c->nfixes];

			if (rf->when != NULL &&
			    !xp_true(xp_eval(rf->when, fc_lookup, &src)))
				continue;
			memset(f, 0, sizeof *f);
			f->id = rf->id;
			/* A fix whose numbers are unknown helps no one. */
			f->text = rl_render(rf->text, &src, false, &ok);
			if (rf->env_value != NULL) {
				if ((f->env_name = strdup(rf->env_name)) ==
				    NULL)
					ok = false;
				f->env_value = rl_render(rf->env_value, &src,
				    false, &ok);
			}
			if (rf->code != NULL)
				f->code = rl_render(rf->code, &src, false, &ok);
			if (rf->config_value != NULL) {
				if ((f->config_key = strdup(rf->config_key)) ==
				    NULL)
					ok = false;
				f->config_value = rl_render(rf->config_value,
				    &src, false, &ok);
			}
			if (f->text == NULL || (rf->env_value != NULL &&
			    f->env_value == NULL) || (rf->code != NULL &&
			    f->code == NULL) || (rf->config_value != NULL &&
			    f->config_value == NULL)) {
				od_cause tmp;

				memset(&tmp, 0, sizeof tmp);
				tmp.fixes[0] = *f;
				tmp.nfixes = 1;
				od_cause_clear(&tmp);
				continue;
			}
			c->nfixes++;
		}
		n++;
	}
	rl_rank(found, n);
	for (i = 0; i < ev->ncauses; i++)
		od_cause_clear(&ev->causes[i]);
	free(ev->causes);
	ev->causes = NULL;
	ev->ncauses = 0;
	if (n > 0) {
		ev->causes = malloc((size_t)n * sizeof *ev->causes);
		if (ev->causes != NULL) {
			memcpy(ev->causes, found, (size_t)n * sizeof *ev->causes);
			ev->ncauses = n;
		} else {
			for (i = 0; i < n; i++)
				od_cause_clear(&found[i]);
			ok = false;
		}
	}
	rl_fingerprint(ev);
	return ok;
}
