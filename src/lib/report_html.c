/*
 * report_html.c: --format html, one self-contained page for a browser.
 *
 * The page loads nothing: its style is inline, it has no script, no link,
 * no image but its own inline SVG, and a Content-Security-Policy meta tag
 * (default-src 'none'; style-src 'unsafe-inline'; img-src data:) that
 * forbids a browser to fetch anything even if something slipped in.  All
 * text from outside (the log, a file name, a rule) goes out through
 * od_escape_html (escape.c): shown as the text report shows it (controls,
 * invalid bytes and invisible format characters written out), with the
 * HTML specials as character references, so that no element, attribute
 * or entity forms from a log.  Element and attribute names, classes and
 * SVG coordinates are oomdoc's own.
 *
 * Three charts are drawn by oomdoc as SVG: the memory account of
 * od_account_of (account.c) as a stacked bar over the capacity, with the
 * request that failed below it on the same scale and a legend naming each
 * part and whether the message printed it or oomdoc derived it; the
 * series of memory readings (cx_series_of, context.c) as a line chart
 * with its axes; and the figures of each rank of a failure that ranks
 * reported differently (the per_rank rows, event.c) as a bar per rank.
 * Every size the page prints is formatted by od_size_format from the same
 * figures as the text report's (report_text.c), so that both print the
 * same numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "context.h"
#include "facts.h"
#include "report.h"
#include "snapshot.h"

/* The charts' drawing areas, in SVG user units. */
#define HT_BAR_W 600.0
#define HT_CHART_W 600.0
#define HT_CHART_H 200.0
#define HT_CHART_LEFT 90.0
#define HT_CHART_TOP 16.0

static const char ht_style[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;"
    "max-width:62em;padding:0 1em;color:#1d1d1f;background:#fff}\n"
    "h1{font-size:1.4em}h2{font-size:1.2em;border-top:1px solid #ccc;"
    "padding-top:.8em}h3{font-size:1.05em;margin-bottom:.2em}\n"
    "pre{background:#f4f4f6;padding:.5em .7em;overflow-x:auto;"
    "white-space:pre-wrap;word-break:break-all}\n"
    "code,pre,.log{font-family:ui-monospace,monospace;font-size:.92em}\n"
    "table{border-collapse:collapse}td,th{padding:.1em .6em;"
    "text-align:left;vertical-align:top}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    "dl.facts{display:grid;grid-template-columns:max-content auto;"
    "gap:.1em 1em}dl.facts dt{font-weight:600}dl.facts dd{margin:0}\n"
    "figure{margin:1em 0}figcaption{font-size:.92em}\n"
    "svg text{font:12px system-ui,sans-serif;fill:#333}\n"
    ".swatch{display:inline-block;width:.9em;height:.9em;"
    "vertical-align:middle}\n"
    ".how{color:#666}p.label{margin:.4em 0 0}\n"
    ".p-other_processes{fill:#8e6c8a;background:#8e6c8a}"
    ".p-non_framework{fill:#c9a227;background:#c9a227}"
    ".p-allocated{fill:#c0392b;background:#c0392b}"
    ".p-reserved_unallocated{fill:#e67e22;background:#e67e22}"
    ".p-unaccounted{fill:#95a5a6;background:#95a5a6}"
    ".p-free{fill:#27ae60;background:#27ae60}"
    ".p-request{fill:#2c3e80;background:#2c3e80}"
    ".p-past{fill:none;stroke:#2c3e80;stroke-dasharray:4 3}\n"
    "polyline.series{fill:none;stroke:#2c3e80;stroke-width:2}"
    "circle.reading{fill:#2c3e80}line.axis{stroke:#333}"
    "line.failed{stroke:#c0392b;stroke-dasharray:5 4}"
    "rect.rank-bar{fill:#c0392b}\n";

/* Text from outside, in an element or a quoted attribute. */
static void
ht_text(FILE *out, const char *s)
{
	od_escape_html(out, s, strlen(s), false);
}

/* A size as the text report prints it; "-" when unknown (v < 0). */
static void
ht_size(char *buf, size_t cap, int64_t v)
{
	if (v < 0)
		snprintf(buf, cap, "-");
	else
		od_size_format(v, buf, cap);
}

/* A row of the figures table: label, size, bytes; nothing when unknown. */
static void
ht_figure(FILE *out, const char *label, int64_t v)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(out, "<tr><td>%s</td><td class=\"n\">%s</td>"
	    "<td class=\"n how\">%lld bytes</td></tr>\n", label, sz,
	    (long long)v);
}

/* A fact of the event: a term and its log text, when there is any. */
static void
ht_fact(FILE *out, const char *term, const char *v)
{
	if (v == NULL || v[0] == '\0')
		return;
	fprintf(out, "<dt>%s</dt><dd class=\"log\">", term);
	ht_text(out, v);
	fputs("</dd>\n", out);
}

/* The parts of the account in drawing order, as the bar of report.c
 * draws them: free last, so that the request starts where it does. */
static const od_part ht_order[OD_PART_COUNT] = {
	OD_PART_OTHER_PROCESSES, OD_PART_NON_FRAMEWORK, OD_PART_ALLOCATED,
	OD_PART_RESERVED_UNALLOCATED, OD_PART_UNACCOUNTED, OD_PART_FREE,
};

/*
 * The memory account as a stacked bar, the request below it, and the
 * legend; nothing without a capacity, as in the text report.  The parts
 * and their sizes are those of rp_bar (report.c): a part is drawn when it
 * holds bytes, and when the message gives no free figure what the known
 * parts leave is drawn as "free or unaccounted".  Figures that add up to
 * more than the capacity are drawn on the scale of their sum.
 */
static void
ht_account(FILE *out, const od_event *ev)
{
	const od_memory *m = &ev->mem;
	od_account a;
	int64_t part[OD_PART_COUNT], known, sum;
	double x = 0, free_x = -1;
	int i, k, drawn = 0;
	char sz[48];

	if (!rp_bar_parts(ev, &a, part, &known, &sum))
		return;
	for (k = 0; k < OD_PART_COUNT; k++)
		drawn += part[k] > 0;
	od_size_format(a.total, sz, sizeof sz);
	fputs("<figure class=\"account\">\n", out);
	fprintf(out, "<svg class=\"chart account\" role=\"img\" "
	    "data-parts=\"%d\" width=\"%.0f\" height=\"86\" "
	    "viewBox=\"0 0 %.0f 86\" xmlns=\"http://www.w3.org/2000/svg\">\n"
	    "<title>memory account of %s</title>\n", drawn, HT_BAR_W + 70,
	    HT_BAR_W + 70, sz);
	for (i = 0; i < OD_PART_COUNT; i++) {
		double w;

		k = ht_order[i];
		if (part[k] <= 0)
			continue;
		w = (double)part[k] / (double)sum * HT_BAR_W;
		if (k == OD_PART_FREE)
			free_x = x;
		od_size_format(part[k], sz, sizeof sz);
		/* A part too small to see still gets a sliver. */
		fprintf(out, "<rect class=\"part p-%s\" data-part=\"%s\" "
		    "x=\"%.2f\" y=\"4\" width=\"%.2f\" height=\"30\">"
		    "<title>%s: %s</title></rect>\n", od_part_name((od_part)k),
		    od_part_name((od_part)k), x, w < 1.5 ? 1.5 : w,
		    od_part_label((od_part)k), sz);
		x += w;
	}
	fprintf(out, "<rect x=\"0\" y=\"4\" width=\"%.0f\" height=\"30\" "
	    "fill=\"none\" stroke=\"#333\"/>\n", HT_BAR_W);
	if (m->requested > 0) {
		double at = free_x >= 0 ? free_x : x, w = (double)m->requested /
		    (double)sum * HT_BAR_W, in = at + w > HT_BAR_W ?
		    HT_BAR_W - at : w;

		od_size_format(m->requested, sz, sizeof sz);
		if (in > 0)
			fprintf(out, "<rect class=\"request p-request\" "
			    "x=\"%.2f\" y=\"42\" width=\"%.2f\" height=\"14\">"
			    "<title>the request that failed: %s</title></rect>\n",
			    at, in < 1.5 ? 1.5 : in, sz);
		/* What runs past the capacity did not fit: drawn as an
		 * outline, at most 60 units of it. */
		if (at + w > HT_BAR_W)
			fprintf(out, "<rect class=\"past p-past\" x=\"%.2f\" "
			    "y=\"42\" width=\"%.2f\" height=\"14\"/>\n",
			    HT_BAR_W, at + w - HT_BAR_W > 60 ? 60 :
			    at + w - HT_BAR_W);
		fprintf(out, "<text x=\"0\" y=\"74\">the request that failed, "
		    "from where %s%s%s</text>\n", free_x >= 0 ? "the free "
		    "memory starts" : "the parts drawn end", at + w > HT_BAR_W ?
		    "; the outline past the bar did not fit" : "",
		    at + w - HT_BAR_W > 60 ? " (cut at the chart's edge)" : "");
	}
	fputs("</svg>\n<figcaption><table class=\"legend\">\n", out);
	for (i = 0; i < OD_PART_COUNT; i++) {
		const char *label;

		k = ht_order[i];
		label = k == OD_PART_UNACCOUNTED && !a.part[k].known &&
		    part[k] > 0 ? "free or unaccounted (no free figure)" :
		    od_part_label((od_part)k);
		if (!a.part[k].known && part[k] <= 0) {
			fprintf(out, "<tr class=\"legend-row\" "
			    "data-part=\"%s\"><td></td><td>%s</td>"
			    "<td class=\"n\"></td><td class=\"how\">not in "
			    "the message</td></tr>\n",
			    od_part_name((od_part)k), label);
			continue;
		}
		if (a.part[k].known && a.part[k].bytes < 0) {
			od_size_format(-a.part[k].bytes, sz + 1, sizeof sz - 1);
			sz[0] = '-';
		} else {
			od_size_format(a.part[k].known ? a.part[k].bytes :
			    part[k], sz, sizeof sz);
		}
		fprintf(out, "<tr class=\"legend-row\" data-part=\"%s\"><td>"
		    "<span class=\"swatch p-%s\"></span></td><td>%s</td>"
		    "<td class=\"n\">%s</td><td class=\"how\">%s</td></tr>\n",
		    od_part_name((od_part)k), od_part_name((od_part)k), label,
		    sz, a.part[k].known && !a.part[k].derived ? "printed" :
		    "derived");
	}
	if (m->requested >= 0) {
		od_size_format(m->requested, sz, sizeof sz);
		fprintf(out, "<tr class=\"legend-row\" data-part=\"request\">"
		    "<td><span class=\"swatch p-request\"></span></td><td>the "
		    "request that failed</td><td class=\"n\">%s</td>"
		    "<td class=\"how\">printed</td></tr>\n", sz);
	}
	if (a.shortfall >= 0) {
		od_size_format(a.shortfall, sz, sizeof sz);
		fprintf(out, "<tr class=\"legend-row\" data-part=\"shortfall\">"
		    "<td></td><td>shortfall (request - free)</td>"
		    "<td class=\"n\">%s</td><td class=\"how\">derived</td>"
		    "</tr>\n", sz);
	}
	fputs("</table>\n", out);
	if (known > a.total)
		fputs("<p class=\"note\">The parts drawn add up to more than "
		    "the capacity: the bar is drawn on the scale of their "
		    "sum.</p>\n", out);
	for (i = 0; i < a.nnotes; i++) {
		fputs("<p class=\"note\">", out);
		ht_text(out, a.notes[i]);
		fputs("</p>\n", out);
	}
	fputs("</figcaption>\n</figure>\n", out);
}

/* Where reading r (at x, its step or its place in the series) sits in
 * the chart of series s over x0..x1: a flat series at mid height. */
static void
ht_point(const cx_series *s, const od_reading *r, int64_t x, int64_t x0,
    int64_t x1, double *px, double *py)
{
	double bottom = HT_CHART_TOP + HT_CHART_H;

	*px = HT_CHART_LEFT + (double)(x - x0) /
	    (double)(x1 > x0 ? x1 - x0 : 1) * HT_CHART_W;
	*py = s->max > s->min ? bottom - (double)(r->bytes - s->min) /
	    (double)(s->max - s->min) * HT_CHART_H : HT_CHART_TOP +
	    HT_CHART_H / 2;
}

/*
 * The series of memory readings as a line chart: one point per reading
 * of the series, at its step when every reading has one (else at its
 * place in the series), from the series' least reading (the bottom of the
 * chart) to its largest (the top), which the y axis names; a flat series
 * is drawn at mid height.  The step of the failure, when known and within
 * the steps drawn, is a dashed line.  The caption says what the text
 * report's readings lines say.
 */
static void
ht_readings(FILE *out, const od_event *ev)
{
	const od_logctx *c = &ev->ctx;
	cx_series s;
	char lo[32], hi[32], a[32], b[32];
	bool steps = true;
	int64_t x0 = 0, x1 = 0;
	int i, j;
	double bottom = HT_CHART_TOP + HT_CHART_H, right = HT_CHART_LEFT +
	    HT_CHART_W;

	cx_series_of(c, ev->rank, &s);
	if (s.n == 0)
		return;
	for (i = 0, j = 0; i < c->nkept; i++) {
		const od_reading *r = &c->readings[i];

		if (!cx_in_series(&s, r))
			continue;
		if (r->step < 0)
			steps = false;
		if (j == 0 || r->step < x0)
			x0 = r->step;
		if (j == 0 || r->step > x1)
			x1 = r->step;
		j++;
	}
	if (!steps || x1 <= x0) {
		steps = false;
		x0 = 1;
		x1 = s.n;
	}
	od_size_format(s.min, lo, sizeof lo);
	od_size_format(s.max, hi, sizeof hi);
	fputs("<figure class=\"readings\">\n", out);
	fprintf(out, "<svg class=\"chart readings\" role=\"img\" "
	    "data-points=\"%d\" width=\"%.0f\" height=\"%.0f\" "
	    "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
	    "<title>%s memory over %s</title>\n", s.n, right + 20,
	    bottom + 44, right + 20, bottom + 44, od_reading_name(s.what),
	    steps ? "the steps" : "the readings");
	fprintf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\"/>\n<line class=\"axis\" x1=\"%.0f\" "
	    "y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", HT_CHART_LEFT,
	    HT_CHART_TOP, HT_CHART_LEFT, bottom, HT_CHART_LEFT, bottom, right,
	    bottom);
	/* The y axis: the least and the largest reading, in bytes. */
	fprintf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"end\">%s</text>\n", HT_CHART_LEFT - 6,
	    s.max > s.min ? bottom : HT_CHART_TOP + HT_CHART_H / 2 + 4, lo);
	if (s.max > s.min)
		fprintf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
		    "text-anchor=\"end\">%s</text>\n", HT_CHART_LEFT - 6,
		    HT_CHART_TOP + 4, hi);
	fprintf(out, "<text class=\"unit\" x=\"4\" y=\"%.0f\">bytes</text>\n",
	    HT_CHART_TOP + HT_CHART_H / 2 - 16);
	/* The x axis: the first and the last step (or reading). */
	fprintf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"middle\">%lld</text>\n<text class=\"tick\" "
	    "x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%lld</text>\n"
	    "<text class=\"unit\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"middle\">%s</text>\n", HT_CHART_LEFT, bottom + 16,
	    (long long)x0, right, bottom + 16, (long long)x1,
	    HT_CHART_LEFT + HT_CHART_W / 2, bottom + 34, steps ? "step" :
	    "reading (the lines give no steps)");
	if (steps && ev->step >= x0 && ev->step <= x1) {
		double fx = HT_CHART_LEFT + (double)(ev->step - x0) /
		    (double)(x1 - x0) * HT_CHART_W;

		fprintf(out, "<line class=\"failed\" x1=\"%.2f\" y1=\"%.0f\" "
		    "x2=\"%.2f\" y2=\"%.0f\"/>\n<text x=\"%.2f\" y=\"%.0f\" "
		    "text-anchor=\"end\">failed at step %lld</text>\n", fx,
		    HT_CHART_TOP, fx, bottom, fx - 4, HT_CHART_TOP + 12,
		    (long long)ev->step);
	}
	fputs("<polyline class=\"series\" points=\"", out);
	for (i = 0, j = 0; i < c->nkept; i++) {
		const od_reading *r = &c->readings[i];
		double px, py;

		if (!cx_in_series(&s, r))
			continue;
		j++;
		ht_point(&s, r, steps ? r->step : j, x0, x1, &px, &py);
		fprintf(out, "%s%.2f,%.2f", j > 1 ? " " : "", px, py);
	}
	fputs("\"/>\n", out);
	for (i = 0, j = 0; i < c->nkept; i++) {
		const od_reading *r = &c->readings[i];
		double px, py;

		if (!cx_in_series(&s, r))
			continue;
		j++;
		ht_point(&s, r, steps ? r->step : j, x0, x1, &px, &py);
		fprintf(out, "<circle class=\"reading\" cx=\"%.2f\" "
		    "cy=\"%.2f\" r=\"3\"><title>", px, py);
		if (r->step >= 0)
			fprintf(out, "step %lld, ", (long long)r->step);
		fprintf(out, "line %llu</title></circle>\n",
		    (unsigned long long)r->line);
	}
	fputs("</svg>\n<figcaption>", out);
	fprintf(out, "<p>%d reading%s of %s memory", s.n, s.n == 1 ? "" : "s",
	    od_reading_name(s.what));
	if (s.rank >= 0)
		fprintf(out, ", rank %d", s.rank);
	if (c->nreadings > s.n)
		fprintf(out, "; %d read in all", c->nreadings);
	fprintf(out, ": min %s, max %s.</p>\n", lo, hi);
	od_size_format(s.median, a, sizeof a);
	if (s.have_rate) {
		od_size_format(s.first_step_bytes, lo, sizeof lo);
		od_size_format(s.last_step_bytes, hi, sizeof hi);
		od_size_format((int64_t)(s.per_step < 0 ? -s.per_step :
		    s.per_step), b, sizeof b);
		fprintf(out, "<p>Over time: %s at step %lld to %s at step "
		    "%lld: ", lo, (long long)s.first_step, hi,
		    (long long)s.last_step);
		if (s.per_step > -1 && s.per_step < 1)
			fputs("no change per step", out);
		else
			fprintf(out, "%s%s per step", s.per_step < 0 ? "-" :
			    "+", b);
		fprintf(out, "; median %s", a);
		if (ev->step >= 0)
			fprintf(out, "; failed at step %lld",
			    (long long)ev->step);
		fputs(".</p>\n", out);
	} else if (s.n >= 2) {
		od_size_format(s.first, lo, sizeof lo);
		od_size_format(s.last, hi, sizeof hi);
		fprintf(out, "<p>Over time: %s first to %s last (the lines "
		    "give no steps); median %s.</p>\n", lo, hi, a);
	}
	if (s.nranks >= 2) {
		od_size_format(s.rank_low, lo, sizeof lo);
		od_size_format(s.rank_high, hi, sizeof hi);
		fprintf(out, "<p>Ranks: last readings of %d ranks from %s to "
		    "%s (rank %d highest).</p>\n", s.nranks, lo, hi, s.high_rank);
	}
	fputs("</figcaption>\n</figure>\n", out);
}

/* The figure of a per-rank row the bars show, by index. */
static int64_t
ht_rank_figure(const od_rank_row *r, int f)
{
	switch (f) {
	case 0: return r->allocated;
	case 1: return r->reserved;
	case 2: return r->requested;
	default: return r->free;
	}
}

static const char *const ht_rank_figures[4] = {
	"allocated", "reserved", "requested", "free",
};

/*
 * The ranks of a failure that ranks reported with different figures: a
 * bar per rank of the first figure of allocated, reserved, requested and
 * free that the most rows give (a row without it has its rank and no
 * bar), on a scale from zero to the largest, then the table of every
 * figure, as the text report's.
 */
static void
ht_per_rank(FILE *out, const od_event *ev, const od_input *inputs)
{
	int i, f, best = 0, nbest = -1, bars = 0;
	int64_t top = 0;
	double slot, bottom = HT_CHART_TOP + HT_CHART_H;
	bool inputs_differ = false;
	char sz[48], zero[16];

	if (ev->nper_rank == 0)
		return;
	for (f = 0; f < 4; f++) {
		int n = 0;

		for (i = 0; i < ev->nper_rank; i++)
			n += ht_rank_figure(&ev->per_rank[i], f) >= 0;
		if (n > nbest) {
			nbest = n;
			best = f;
		}
	}
	for (i = 0; i < ev->nper_rank; i++) {
		int64_t v = ht_rank_figure(&ev->per_rank[i], best);

		top = v > top ? v : top;
		bars += v >= 0;
		inputs_differ |= ev->per_rank[i].input != ev->input;
	}
	fprintf(out, "<figure class=\"per-rank\">\n<p>%d ranks reported it "
	    "with different figures; rank %d first.</p>\n",
	    ev->nper_rank + ev->per_rank_dropped, ev->per_rank[0].rank);
	slot = HT_CHART_W / ev->nper_rank;
	od_size_format(top, sz, sizeof sz);
	fprintf(out, "<svg class=\"chart per-rank\" role=\"img\" "
	    "data-ranks=\"%d\" data-bars=\"%d\" data-figure=\"%s\" "
	    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n<title>%s memory of "
	    "each rank</title>\n", ev->nper_rank, bars, ht_rank_figures[best],
	    HT_CHART_LEFT + HT_CHART_W + 20, bottom + 44, HT_CHART_LEFT +
	    HT_CHART_W + 20, bottom + 44, ht_rank_figures[best]);
	fprintf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\"/>\n<line class=\"axis\" x1=\"%.0f\" "
	    "y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", HT_CHART_LEFT,
	    HT_CHART_TOP, HT_CHART_LEFT, bottom, HT_CHART_LEFT, bottom,
	    HT_CHART_LEFT + HT_CHART_W, bottom);
	od_size_format(0, zero, sizeof zero);
	fprintf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"end\">%s</text>\n", HT_CHART_LEFT - 6, bottom,
	    zero);
	if (top > 0)
		fprintf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
		    "text-anchor=\"end\">%s</text>\n", HT_CHART_LEFT - 6,
		    HT_CHART_TOP + 4, sz);
	fprintf(out, "<text class=\"unit\" x=\"4\" y=\"%.0f\">%s, bytes"
	    "</text>\n"
	    "<text class=\"unit\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"middle\">rank</text>\n", HT_CHART_TOP +
	    HT_CHART_H / 2 - 16, ht_rank_figures[best], HT_CHART_LEFT +
	    HT_CHART_W / 2, bottom + 34);
	for (i = 0; i < ev->nper_rank; i++) {
		const od_rank_row *r = &ev->per_rank[i];
		int64_t v = ht_rank_figure(r, best);
		double x = HT_CHART_LEFT + slot * i + slot * 0.15;
		double w = slot * 0.7;

		fprintf(out, "<g class=\"rank\" data-rank=\"%d\">", r->rank);
		if (v >= 0) {
			double h = top > 0 ? (double)v / (double)top *
			    HT_CHART_H : 0;

			od_size_format(v, sz, sizeof sz);
			fprintf(out, "<rect class=\"rank-bar\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">"
			    "<title>rank %d: %s %s</title></rect>", x,
			    bottom - h, w, h, r->rank, ht_rank_figures[best], sz);
		}
		fprintf(out, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">"
		    "%d</text></g>\n", x + w / 2, bottom + 16, r->rank);
	}
	fputs("</svg>\n<table class=\"per-rank\">\n<tr><th>rank</th><th>GPU"
	    "</th><th>line</th><th>requested</th><th>free</th><th>allocated"
	    "</th><th>reserved</th><th>total</th>", out);
	fputs(inputs_differ ? "<th>input</th></tr>\n" : "</tr>\n", out);
	for (i = 0; i < ev->nper_rank; i++) {
		const od_rank_row *r = &ev->per_rank[i];
		const int64_t v[5] = { r->requested, r->free, r->allocated,
		    r->reserved, r->total };
		int k;

		fprintf(out, "<tr><td class=\"n\">%d</td>", r->rank);
		if (r->device >= 0)
			fprintf(out, "<td class=\"n\">%d</td>", r->device);
		else
			fputs("<td class=\"n\">-</td>", out);
		if (r->line > 0)
			fprintf(out, "<td class=\"n\">%llu</td>",
			    (unsigned long long)r->line);
		else
			fputs("<td class=\"n\">-</td>", out);
		for (k = 0; k < 5; k++) {
			ht_size(sz, sizeof sz, v[k]);
			fprintf(out, "<td class=\"n\">%s</td>", sz);
		}
		if (inputs_differ) {
			fputs("<td class=\"log\">", out);
			ht_text(out, rp_input_name(&inputs[r->input]));
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (ev->per_rank_dropped > 0)
		fprintf(out, "<p>(%d more ranks not listed)</p>\n",
		    ev->per_rank_dropped);
	fputs("</figure>\n", out);
}

/* What rp_explains (report.c) says of a cause, as one paragraph: it
 * holds only numbers and fixed words, escaped all the same. */
static void
ht_explains(FILE *out, const od_cause *c, const od_event *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (m == NULL)
		return;
	rp_explains(m, "", c, ev);
	if (fclose(m) == 0 && len > 0) {
		while (len > 0 && buf[len - 1] == '\n')
			len--;
		fputs("<p class=\"explains\">", out);
		od_escape_html(out, buf, len, false);
		fputs("</p>\n", out);
	}
	free(buf);
}

/* A fix: its text, and the setting it changes as a block that copies as
 * it is. */
static void
ht_fix(FILE *out, const od_fix *f)
{
	fputs("<li class=\"fix\">", out);
	ht_text(out, f->text);
	if (f->env_name != NULL) {
		fputs("\n<pre class=\"env\"><code>export ", out);
		ht_text(out, f->env_name);
		fputc('=', out);
		ht_text(out, f->env_value);
		fputs("</code></pre>", out);
	}
	if (f->code != NULL) {
		fputs("\n<pre class=\"code\"><code>", out);
		od_escape_html(out, f->code, strlen(f->code), true);
		fputs("</code></pre>", out);
	}
	if (f->config_key != NULL) {
		fputs("\n<pre class=\"config\"><code>", out);
		ht_text(out, f->config_key);
		fputs(": ", out);
		ht_text(out, f->config_value);
		fputs("</code></pre>", out);
	}
	fputs("</li>\n", out);
}

/* The causes of an event, best first: title, score, what it accounts
 * for, explanation, evidence and fixes, each setting as a block that
 * copies as it is. */
static void
ht_causes(FILE *out, const od_event *ev)
{
	int i, k;

	if (ev->ncauses == 0) {
		fputs("<p class=\"no-causes\">No rule matched.</p>\n", out);
		return;
	}
	fputs("<h3>Likely causes</h3>\n<ol class=\"causes\">\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fputs("<li class=\"cause\" data-rule=\"", out);
		ht_text(out, c->rule);
		fputs("\"><p><strong class=\"rule\">", out);
		ht_text(out, c->rule);
		fprintf(out, "</strong> (%s, score %.2f): ",
		    od_confidence_name(c->confidence), c->score);
		ht_text(out, c->title);
		fputs("</p>\n", out);
		ht_explains(out, c, ev);
		if (c->explanation != NULL) {
			fputs("<p class=\"explanation\">", out);
			ht_text(out, c->explanation);
			fputs("</p>\n", out);
		}
		if (c->nevidence > 0) {
			fputs("<p class=\"label\"><strong>Evidence</strong></p>\n"
			    "<ul class=\"evidence\">\n", out);
			for (k = 0; k < c->nevidence; k++) {
				fputs("<li>", out);
				ht_text(out, c->evidence[k].text);
				fputs("</li>\n", out);
			}
			fputs("</ul>\n", out);
		}
		if (c->nfixes > 0) {
			fputs("<p class=\"label\"><strong>Fixes</strong></p>\n"
			    "<ul class=\"fixes\">\n", out);
			for (k = 0; k < c->nfixes; k++)
				ht_fix(out, &c->fixes[k]);
			fputs("</ul>\n", out);
		}
		if (c->probe != NULL) {
			fputs("<p class=\"probe\">Live probe that can confirm "
			    "it: <code>", out);
			ht_text(out, c->probe);
			fputs("</code></p>\n", out);
		}
		fputs("</li>\n", out);
	}
	fputs("</ol>\n", out);
	if (ev->fingerprint[0] != '\0')
		fprintf(out, "<p class=\"fingerprint\">Fingerprint "
		    "<code>%s</code></p>\n", ev->fingerprint);
}

/* Where the event stands in the run's story, as the text report says. */
static void
ht_story(FILE *out, const od_event *ev, const od_event *first,
    size_t nfirst, int ninputs)
{
	if (ev->first_failure) {
		char after[512], root[512];

		fprintf(out, "<dt>story</dt><dd>the run's first failure, %s",
		    ninputs > 1 ? "in the order of the inputs" : "in log order");
		if (ev->rank >= 0)
			fprintf(out, ": rank %d (the reports that follow it, "
			    "and torchrun's &quot;root cause&quot; table, may "
			    "name other ranks)", ev->rank);
		fputs("</dd>\n", out);
		rp_aftermath(ev, after, root, sizeof after);
		if (after[0] != '\0') {
			fputs("<dt>after it</dt><dd>", out);
			ht_text(out, after);
			fputs("</dd>\n", out);
		}
		if (root[0] != '\0') {
			fputs("<dt>root cause</dt><dd>", out);
			ht_text(out, root);
			fputs("</dd>\n", out);
		}
	}
	if (ev->secondary != NULL && first != NULL) {
		fprintf(out, "<dt>secondary</dt><dd>follows from #%zu (line %llu",
		    nfirst, (unsigned long long)first->line);
		if (first->rank >= 0)
			fprintf(out, ", rank %d", first->rank);
		fputs("): ", out);
		ht_text(out, ev->secondary);
		fputs("</dd>\n", out);
	}
}

/* The figures of the event, as the text report's "memory at the
 * failure" lists them. */
static void
ht_figures(FILE *out, const od_event *ev)
{
	const od_memory *m = &ev->mem;
	rp_figure fig[RP_FIGURES_MAX];
	int i, nfig;

	fputs("<table class=\"figures\">\n", out);
	nfig = rp_figures(ev, fig);
	for (i = 0; i < nfig; i++) {
		char label[80];

		snprintf(label, sizeof label, "%s%.47s", fig[i].depth > 0 ?
		    "&#160;&#160;" : "", fig[i].label);
		if (fig[i].bytes >= 0)
			ht_figure(out, label, fig[i].bytes);
		else if (fig[i].always)
			fprintf(out, "<tr><td>%s</td><td class=\"n\">unknown"
			    "</td><td></td></tr>\n", label);
	}
	fputs("</table>\n", out);
	if (m->procs_dropped > 0)
		fprintf(out, "<p>(%d more processes not listed)</p>\n",
		    m->procs_dropped);
}

/* The figures of a memory snapshot joined to the event (snapshot.c). */
static void
ht_snapshot(FILE *out, const od_event *ev)
{
	const od_snapshot_facts *s = &ev->snap;
	const char *v = od_snapshot_verdict_name(s->verdict);
	rp_figure fig[RP_SNAPSHOT_FIGURES_MAX];
	int i, nfig;

	if (!s->present)
		return;
	fprintf(out, "<h3>Memory snapshot</h3>\n<p>Device %d, %lld segment%s: "
	    "fragmentation %s.</p>\n<table class=\"snapshot\">\n", s->device,
	    (long long)s->segments, s->segments == 1 ? "" : "s",
	    v != NULL ? v : "not judged (no request known)");
	nfig = rp_snapshot_figures(ev, fig);
	for (i = 0; i < nfig; i++) {
		char label[112];

		snprintf(label, sizeof label, "%.*s%.47s", 12 * fig[i].depth,
		    "&#160;&#160;&#160;&#160;&#160;&#160;&#160;&#160;",
		    fig[i].label);
		ht_figure(out, label, fig[i].bytes);
	}
	fputs("</table>\n", out);
	if (s->history && s->owner[0] != '\0') {
		char sz[48];

		od_size_format(s->owner_bytes, sz, sizeof sz);
		fprintf(out, "<p>Most live bytes (%s) from <code>", sz);
		ht_text(out, s->owner);
		fputs("</code></p>\n", out);
	}
}

static void
ht_event(FILE *out, size_t n, const od_event *ev, const od_input *inputs,
    int ninputs, const od_event *first, size_t nfirst)
{
	const od_host *h = &ev->host;
	const od_labels *l = &ev->labels;
	int i;

	fprintf(out, "<section class=\"event\" id=\"event-%zu\">\n<h2>#%zu "
	    "%s%s</h2>\n<dl class=\"facts\">\n<dt>where</dt><dd><span "
	    "class=\"log\">", n, n, od_event_title(ev), ev->fatal ? "" :
	    " (warning, not the failure itself)");
	ht_text(out, rp_input_name(&inputs[ev->input]));
	fputs("</span>", out);
	if (ev->line > 0)
		fprintf(out, ":%llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, "-%llu", (unsigned long long)ev->end_line);
	if (ev->rank >= 0)
		fprintf(out, ", rank %d", ev->rank);
	if (ev->device >= 0)
		fprintf(out, ", %s %d", od_device_word(ev), ev->device);
	if (h->job[0] != '\0') {
		fputs(", job <span class=\"log\">", out);
		ht_text(out, h->job);
		fputs("</span>", out);
	}
	/* The scheduler's or the line's record's (od_labels). */
	if (l->pod[0] != '\0') {
		fputs(", pod <span class=\"log\">", out);
		if (l->namespace_[0] != '\0') {
			ht_text(out, l->namespace_);
			fputc('/', out);
		}
		ht_text(out, l->pod);
		fputs("</span>", out);
	} else if (l->namespace_[0] != '\0') {
		fputs(", namespace <span class=\"log\">", out);
		ht_text(out, l->namespace_);
		fputs("</span>", out);
	}
	if (l->container[0] != '\0') {
		fputs(", container <span class=\"log\">", out);
		ht_text(out, l->container);
		fputs("</span>", out);
	}
	if (l->host[0] != '\0') {
		fputs(", host <span class=\"log\">", out);
		ht_text(out, l->host);
		fputs("</span>", out);
	}
	fputs("</dd>\n", out);
	for (i = 1; i < ev->nseen; i++) {
		fputs(i == 1 ? "<dt>also in</dt><dd class=\"log\">" :
		    "<dt></dt><dd class=\"log\">", out);
		ht_text(out, rp_input_name(&inputs[ev->seen[i].input]));
		fprintf(out, ":%llu</dd>\n", (unsigned long long)
		    ev->seen[i].line);
	}
	if (ev->nranks > 1 || ev->occurrences > 1) {
		fprintf(out, "<dt>seen</dt><dd>%llu time%s", (unsigned long long)
		    ev->occurrences, ev->occurrences == 1 ? "" : "s");
		if (ev->nranks > 0) {
			fputs(", ranks ", out);
			for (i = 0; i < ev->nranks; i++)
				fprintf(out, "%s%d", i ? "," : "", ev->ranks[i]);
			if (ev->ranks_dropped)
				fputs(",...", out);
		}
		fputs("</dd>\n", out);
	}
	ht_story(out, ev, first, nfirst, ninputs);
	ht_fact(out, "time", ev->timestamp);
	ht_fact(out, "exception", ev->exception);
	ht_fact(out, "error", ev->error);
	ht_fact(out, "tensor", ev->tensor_shape);
	ht_fact(out, "dtype", ev->dtype);
	ht_fact(out, "allocator", ev->allocator);
	if (ev->layout != OD_LAYOUT_OTHER_STACK)
		fprintf(out, "<dt>format</dt><dd>%s</dd>\n",
		    od_layout_name(ev->layout));
	if (ev->confidence != OD_CONF_HIGH) {
		fprintf(out, "<dt>confidence</dt><dd>%s", od_confidence_name(
		    ev->confidence));
		if (ev->verify_hint != NULL) {
			fputs(": to confirm, look for ", out);
			ht_text(out, ev->verify_hint);
		}
		fputs("</dd>\n", out);
	}
	if (h->pid >= 0 || h->process[0] != '\0' || h->has_exit ||
	    h->signal[0] != '\0') {
		fputs("<dt>process</dt><dd>", out);
		if (h->pid >= 0)
			fprintf(out, "pid %lld ", (long long)h->pid);
		if (h->process[0] != '\0') {
			fputs("(<span class=\"log\">", out);
			ht_text(out, h->process);
			fputs("</span>) ", out);
		}
		if (h->has_exit)
			fprintf(out, "exit code %lld ", (long long)h->exit_code);
		if (h->signal[0] != '\0') {
			fputs("signal <span class=\"log\">", out);
			ht_text(out, h->signal);
			fputs("</span>", out);
		}
		fputs("</dd>\n", out);
	}
	fputs("</dl>\n<h3>Message</h3>\n<pre class=\"message\">", out);
	od_escape_html(out, ev->message != NULL ? ev->message : "",
	    ev->message_len, true);
	fputs(ev->message_cut ? " [...]</pre>\n" : "</pre>\n", out);
	ht_causes(out, ev);
	fputs("<h3>Memory at the failure</h3>\n", out);
	ht_figures(out, ev);
	ht_account(out, ev);
	ht_snapshot(out, ev);
	ht_readings(out, ev);
	ht_per_rank(out, ev, inputs);
	fputs("</section>\n", out);
}

bool
rp_html(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set), nfirst = 0;
	uint64_t dropped = od_events_dropped(set);
	const od_event *first;
	int k, nread = 0;

	(void)o;
	for (k = 0; k < ninputs; k++)
		nread += !inputs[k].failed;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
	    "<meta name=\"referrer\" content=\"no-referrer\">\n"
	    "<meta name=\"generator\" content=\"oomdoc\">\n<title>oomdoc: ",
	    out);
	if (ninputs == 1)
		ht_text(out, rp_input_name(&inputs[0]));
	else
		fprintf(out, "%d inputs", ninputs);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>",
	    ht_style);
	if (n == 0 && nread < ninputs)
		fprintf(out, "No out-of-memory failure found in the %d input%s "
		    "read to the end (%d could not be read)", nread,
		    nread == 1 ? "" : "s", ninputs - nread);
	else {
		if (n == 0)
			fputs("No out-of-memory failure found", out);
		else
			fprintf(out, "%zu out-of-memory %s%s found", n,
			    rp_events_noun(set), n == 1 ? "" : "s");
		if (ninputs == 1) {
			fputs(" in <span class=\"log\">", out);
			ht_text(out, rp_input_name(&inputs[0]));
			fputs("</span>", out);
		} else {
			fprintf(out, " in %d inputs", ninputs);
		}
	}
	fputs("</h1>\n", out);
	first = rp_first_failure(set, &nfirst);
	for (i = 0; i < n; i++)
		ht_event(out, i + 1, od_events_get(set, i), inputs, ninputs,
		    first, nfirst + 1);
	if (dropped > 0)
		fprintf(out, "<p>%llu more events were not kept (the limit is %d "
		    "distinct events)</p>\n", (unsigned long long)dropped,
		    OD_EVENTS_MAX);
	fputs("<footer><p>Written by oomdoc. Sizes are in binary units "
	    "(1 GiB = 1024 MiB); &quot;printed&quot; figures are the "
	    "message's, &quot;derived&quot; ones oomdoc computed from them."
	    "</p></footer>\n</body>\n</html>\n", out);
	return true;
}
