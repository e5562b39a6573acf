/*
 * report.h: what the report writers share.  od_report_write (report.c)
 * hands the run to the writer of the format asked for: report_text.c,
 * report_markdown.c or report_json.c (schema oomdoc.report/1).  Log text
 * goes out through the escapers of escape.c.
 */
#ifndef OD_REPORT_H
#define OD_REPORT_H

#include "core.h"

#define RP_BAR_WIDTH 50

void rp_text(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
void rp_markdown(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
bool rp_json(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);

/* An input's name as the reports show it: "-" is "(standard input)". */
const char *rp_input_name(const od_input *in);
/* The top cause of the report: that of its first fatal event, else of
 * its first event; NULL when no rule matched. */
const char *rp_top_cause(od_events *set);
/* The memory picture as a bar of RP_BAR_WIDTH cells, with its legend,
 * each line after indent; nothing without a capacity. */
void rp_bar(FILE *out, const od_memory *m, const char *indent);

#endif
