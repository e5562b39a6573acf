/*
 * live_report.h: what the writers of the live report share.
 * lv_report_write (live_report.c) hands the report to the writer of its
 * format: live_report_text.c, live_report_markdown.c or
 * live_report_json.c (schema oomdoc.live/1).  Strings that come from
 * elsewhere (input names, rule ids, a report read back) are escaped as the
 * log's are (src/lib/escape.c).
 */
#ifndef OD_LIVE_REPORT_H
#define OD_LIVE_REPORT_H

#include "live.h"

typedef struct {
	int confirmed, refuted, inconclusive, total;
} lr_count;

/* The verdicts of the report, by outcome. */
lr_count lr_counts(const lv_report *r);
/* A measurement's value, for text and Markdown. */
void lr_value(const pb_meas *m, char *buf, size_t len);

void lr_text(FILE *out, const lv_report *r);
void lr_markdown(FILE *out, const lv_report *r);
void lr_json_report(FILE *out, const lv_report *r);

#endif
