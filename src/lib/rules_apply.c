/*
 * rules_apply.c: applying the loaded rules to an event.  Every rule whose
 * kinds include the event's and whose condition holds gives a cause: its
 * score (a number, or an expression of the facts kept within 0..1), a
 * confidence from that score, no surer than the event (and the score then
 * no higher than that confidence's band), the bytes it
 * accounts for (explains) and the part of the shortfall they explain,
 * and the texts of its explanation, evidence and fixes rendered from the
 * facts.  The causes rank by the bytes they account for, then by score,
 * and the event's fingerprint is taken from the top one (fingerprint.c).
 *
 * No text with an unknown value is printed: of an explanation's variants
 * the first whose condition holds and whose values are all known is used
 * (none: no explanation), and an evidence line or a fix with an unknown
 * value is left out.  A comparison prints the operator that holds for the
 * numbers it prints, and for the byte counts the JSON gives.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "facts.h"
#include "knowledge.h"
#include "rules.h"

#define RL_TEXT_MAX 2048        /* bytes of one rendered text */


/* A copy of s, or NULL with src->nomem set when memory ran out. */
static char *
rl_copy(const char *s, fc_source *src)
{
	char *c = strdup(s);

	if (c == NULL)
		src->nomem = true;
	return c;
}

/* Renders a template; NULL when a part of it is unknown, or when memory
 * ran out (then src->nomem is set). */
static char *
rl_render(const xp_template *t, fc_source *src)
{
	char buf[RL_TEXT_MAX];

	if (t == NULL ||
	    !xp_template_render(t, fc_lookup, src, buf, sizeof buf))
		return NULL;
	return rl_copy(buf, src);
}

/*
 * Evaluates a fix's changes into f; false when a value is unknown or not
 * a finite number (the fix is then left out, as one with an unknown part
 * of its text).
 */
static bool
rl_changes(const rl_fix *rf, od_fix *f, fc_source *src)
{
	int k;

	for (k = 0; k < rf->nchanges; k++) {
		xv_value from = xp_eval(rf->changes[k].from, fc_lookup, src);
		xv_value to = xp_eval(rf->changes[k].to, fc_lookup, src);

		if (from.type != XV_NUM || to.type != XV_NUM ||
		    !isfinite(from.num) || !isfinite(to.num))
			return false;
		f->changes[k].setting = rf->changes[k].setting;
		f->changes[k].from = from.num;
		f->changes[k].to = to.num;
	}
	f->nchanges = rf->nchanges;
	return true;
}

/*
 * Whether cause a ranks before cause b: more bytes accounted for first
 * (a cause without them after every cause with them), then the higher
 * score.  Equal causes keep the order of their rules in the set.
 */
static bool
rl_before(const od_cause *a, const od_cause *b)
{
	if ((a->cause_bytes >= 0) != (b->cause_bytes >= 0))
		return a->cause_bytes >= 0;
	if (a->cause_bytes != b->cause_bytes)
		return a->cause_bytes > b->cause_bytes;
	return a->score > b->score;
}

/* Ranks the causes, best first, by an insertion sort, which is stable:
 * the ranking is the same on every C library. */
static void
rl_rank(od_cause *c, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		od_cause t = c[i];

		for (j = i; j > 0 && rl_before(&t, &c[j - 1]); j--)
			c[j] = c[j - 1];
		c[j] = t;
	}
}

/*
 * Makes room for cause nc among n = OD_CAUSES_MAX: the one that would
 * rank last (of equals, the last loaded) goes, when the new one would
 * rank before it.  Returns the new count, or -1 when the new cause would
 * rank last itself.
 */
static int
rl_make_room(od_cause *found, int n, const od_cause *nc)
{
	int low = 0, k;

	for (k = 1; k < n; k++)
		if (!rl_before(&found[k], &found[low]))
			low = k;
	if (!rl_before(nc, &found[low]))
		return -1;
	od_cause_clear(&found[low]);
	memmove(&found[low], &found[low + 1],
	    (size_t)(n - low - 1) * sizeof found[0]);
	return n - 1;
}

/* A number as a whole byte count; false when unknown or not finite. */
static bool
rl_bytes(const xp_expr *e, fc_source *src, int64_t *out)
{
	xv_value v = xp_eval(e, fc_lookup, src);

	if (v.type != XV_NUM || !isfinite(v.num) || fabs(v.num) > 9.0e18)
		return false;
	*out = (int64_t)llround(v.num);
	return true;
}

/* The sign of a - b. */
static int
rl_sign(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* A byte count as the templates print it, and read back. */
static int64_t
rl_printed(int64_t v, char *buf, size_t cap)
{
	xv_value x = { .type = XV_NUM, .bytes = true, .num = (double)v };
	int64_t back = v;

	xp_format(x, buf, cap);
	if (v >= 0 && !od_size_parse_text(buf, strlen(buf), &back))
		back = v;
	return back;
}

/*
 * Renders a comparison: "LABEL VALUE OP LABEL VALUE".  The operator holds
 * for the byte counts and for the values as printed (rounding is
 * monotonic, so where the printed values are equal and the counts are not,
 * "<=" or ">=" holds for both).  Near the threshold it says how close.
 */
static bool
rl_compare(const rl_evidence *re, fc_source *src, od_evidence *out)
{
	char ll[512], rlab[512], lv[64], rv[64], text[RL_TEXT_MAX];
	char close[64] = "";
	int64_t l, r;
	int exact, shown;
	const char *op;

	if (!rl_bytes(re->lhs, src, &l) || !rl_bytes(re->rhs, src, &r))
		return false;
	if (!xp_template_render(re->lhs_label, fc_lookup, src, ll, sizeof ll) ||
	    !xp_template_render(re->rhs_label, fc_lookup, src, rlab,
	    sizeof rlab))
		return false;
	exact = rl_sign(l, r);
	shown = rl_sign(rl_printed(l, lv, sizeof lv), rl_printed(r, rv,
	    sizeof rv));
	if (exact == 0)
		op = "=";
	else if (shown == 0)
		op = exact < 0 ? "<=" : ">=";
	else
		op = exact < 0 ? "<" : ">";
	out->near_pct = -1;
	if (re->near > 0 && exact != 0 && r > 0) {
		double d = fabs((double)l - (double)r) / (double)r;

		if (d <= re->near) {
			/* The percentage rounded up, so that "within" holds. */
			out->near_pct = (int)ceil(d * 100);
			if (out->near_pct < 1)
				out->near_pct = 1;
			snprintf(close, sizeof close, ", close to it (within "
			    "%d%%)", out->near_pct);
		}
	}
	snprintf(text, sizeof text, "%s%s%s %s %s%s%s%s", ll, ll[0] ? " " : "",
	    lv, op, rlab, rlab[0] ? " " : "", rv, close);
	out->text = rl_copy(text, src);
	out->compare = true;
	out->lhs = l;
	out->rhs = r;
	snprintf(out->op, sizeof out->op, "%s", op);
	return out->text != NULL;
}

/* Renders a line of evidence into out; false when it is left out. */
static bool
rl_evidence_render(const rl_evidence *re, fc_source *src, od_evidence *out)
{
	memset(out, 0, sizeof *out);
	out->near_pct = -1;
	if (re->when != NULL && !xp_true(xp_eval(re->when, fc_lookup, src)))
		return false;
	if (re->lhs != NULL)
		return rl_compare(re, src, out);
	out->text = rl_render(re->text, src);
	return out->text != NULL;
}

/* The first variant that holds with every value known, or NULL. */
static char *
rl_explain(const rl_rule *r, fc_source *src)
{
	char *t;
	int i;

	for (i = 0; i < r->nexplain; i++) {
		const rl_variant *v = &r->explain[i];

		if (v->when != NULL && !xp_true(xp_eval(v->when, fc_lookup, src)))
			continue;
		if ((t = rl_render(v->text, src)) != NULL)
			return t;
	}
	return NULL;
}

/*
 * Whether the live probes can run for ev: they allocate and measure
 * through CUDA and NVML (src/live/device_cuda.c), so an event of another
 * vendor's device (AMD's HIP, Intel's XPU, Apple's MPS, Huawei's Ascend
 * NPU, a TPU) gets no probe to confirm a cause with; one whose vendor is
 * unknown (a stack that runs on several) keeps it.
 */
bool
rl_probe_runs(const od_event *ev)
{
	const char *v = kn_vendor(ev);

	/* Nor for a failure of host memory in TensorFlow's CPU allocator
	 * ("by allocator cpu"). */
	if (strcmp(ev->allocator, "cpu") == 0)
		return false;
	return v == NULL || strcmp(v, "nvidia") == 0;
}

bool
rl_apply(const rl_set *s, od_event *ev, const fc_user_facts *user)
{
	fc_source src = { .ev = ev, .user = user, .kn = s->knowledge };
	od_cause found[OD_CAUSES_MAX];
	int n = 0, i, k;

	/* An event keeps its OD_CAUSES_MAX best causes, whatever the number
	 * of rules that fire. */
	for (i = 0; s != NULL && i < s->n; i++) {
		const rl_rule *r = &s->rules[i];
		double score = r->score;
		od_cause *c, probe;
		int64_t held = OD_UNKNOWN, shortfall = OD_UNKNOWN;
		xv_value sv;
		char shown[32];

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
		/* The bytes the cause accounts for, never below zero, and
		 * the part of the shortfall they explain. */
		if (r->explains != NULL && rl_bytes(r->explains, &src, &held) &&
		    held < 0)
			held = 0;
		if (fc_lookup(&src, "shortfall", 9, &sv) && sv.type == XV_NUM)
			shortfall = (int64_t)llround(sv.num);
		memset(&probe, 0, sizeof probe);
		probe.cause_bytes = held;
		probe.score = score;
		if (n == OD_CAUSES_MAX) {
			int room = rl_make_room(found, n, &probe);

			if (room < 0)
				continue;
			n = room;
		}
		c = &found[n];
		memset(c, 0, sizeof *c);
		c->rule = r->id;
		c->title = r->title;
		c->probe = rl_probe_runs(ev) ? r->probe : NULL;
		c->score = score;
		c->cause_bytes = held;
		c->explains_bytes = held >= 0 && shortfall >= 0 ?
		    (held < shortfall ? held : shortfall) : OD_UNKNOWN;
		/* The confidence follows the score this event got, as the
		 * reports print it (two decimals). */
		snprintf(shown, sizeof shown, "%.2f", c->score);
		c->confidence = strtod(shown, NULL) >= 0.75 ? OD_CONF_HIGH :
		    strtod(shown, NULL) >= 0.5 ? OD_CONF_MEDIUM : OD_CONF_LOW;
		/* A cause is no surer than the event it explains. */
		if (ev->confidence < c->confidence)
			c->confidence = ev->confidence;
		c->explanation = rl_explain(r, &src);
		for (k = 0; k < r->nevidence; k++)
			if (rl_evidence_render(&r->evidence[k], &src,
			    &c->evidence[c->nevidence]))
				c->nevidence++;
		/* Room for the rule's fixes, those that render. */
		if (r->nfixes > 0 && (c->fixes = malloc((size_t)r->nfixes *
		    sizeof *c->fixes)) == NULL)
			src.nomem = true;
		for (k = 0; c->fixes != NULL && k < r->nfixes; k++) {
			const rl_fix *rf = &r->fixes[k];
			od_fix *f = &c->fixes[c->nfixes];

			if (rf->when != NULL &&
			    !xp_true(xp_eval(rf->when, fc_lookup, &src)))
				continue;
			memset(f, 0, sizeof *f);
			f->id = rf->id;
			/* A fix whose numbers are unknown helps no one. */
			f->text = rl_render(rf->text, &src);
			if (rf->env_value != NULL) {
				/* The variable's name can depend on the release
				 * and the vendor. */
				f->env_name = rf->env_key != NULL ?
				    rl_render(rf->env_key, &src) :
				    rl_copy(rf->env_name, &src);
				if (f->env_name != NULL &&
				    !rl_valid_env(f->env_name)) {
					free(f->env_name);
					f->env_name = NULL;
				}
				f->env_value = rl_render(rf->env_value, &src);
			}
			if (rf->code != NULL)
				f->code = rl_render(rf->code, &src);
			if (rf->config_value != NULL) {
				f->config_key = rl_copy(rf->config_key, &src);
				f->config_value = rl_render(rf->config_value,
				    &src);
			}
			if (!rl_changes(rf, f, &src) || f->text == NULL ||
			    (rf->env_value != NULL &&
			    (f->env_value == NULL || f->env_name == NULL)) ||
			    (rf->code != NULL && f->code == NULL) ||
			    (rf->config_value != NULL && f->config_value == NULL)) {
				od_fix_clear(f);
				continue;
			}
			c->nfixes++;
		}
		n++;
	}
	rl_rank(found, n);
	/*
	 * The score of a cause held down to its event's confidence is held
	 * down with it, to the top of that confidence's band (0.74 medium,
	 * 0.49 low), after the ranking, which keeps the rules' own order:
	 * the word and the number printed beside it then agree.
	 */
	for (i = 0; i < n; i++) {
		double top = found[i].confidence == OD_CONF_LOW ? 0.49 :
		    found[i].confidence == OD_CONF_MEDIUM ? 0.74 : 1;

		if (found[i].score > top)
			found[i].score = top;
	}
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
			src.nomem = true;
		}
	}
	rl_fingerprint(ev);
	return !src.nomem;
}
