/*
 * account.h: the memory account of an event (account.c), the one place
 * that splits a device's capacity into parts that add up to it.  The
 * rules' facts (facts.c), the memory bar (report.c) and the reports'
 * account (report_text.c, report_markdown.c, report_fields.c) all read it
 * from od_account_of, so that no two of them count a byte differently.
 */
#ifndef OD_ACCOUNT_H
#define OD_ACCOUNT_H

#include "core.h"

/* The parts of the capacity, in the order the reports list them. */
typedef enum {
	OD_PART_OTHER_PROCESSES,   /* other processes' NVML usage */
	OD_PART_NON_FRAMEWORK,     /* this process outside the allocator */
	OD_PART_ALLOCATED,         /* allocated by the framework */
	OD_PART_RESERVED_UNALLOCATED, /* reserved by it, not allocated */
	OD_PART_FREE,              /* free on the device */
	OD_PART_UNACCOUNTED,       /* what the message leaves unexplained */
	OD_PART_COUNT
} od_part;

typedef struct {
	int64_t bytes;          /* meaningful only when known */
	bool known;
	bool derived;           /* computed by oomdoc, not printed */
} od_account_part;

#define OD_ACCOUNT_NOTES_MAX 4

typedef struct {
	bool valid;             /* a capacity is known: the parts apply */
	int64_t total;
	od_account_part part[OD_PART_COUNT];
	int self;               /* this process's "Process N" line, or -1 */
	int64_t self_bytes;     /* this process's NVML usage as used, or -1 */
	int others;             /* other processes' lines, -1 unknown */
	int64_t shortfall;      /* what the request lacked, or -1 */
	/* Why a figure was set aside or derived as it was, in sentences. */
	const char *notes[OD_ACCOUNT_NOTES_MAX];
	int nnotes;
} od_account;

/* Fills *a from ev's figures; a->valid is false without a capacity. */
void od_account_of(const od_event *ev, od_account *a);
/* The part's name as JSON and the facts spell it ("other_processes"). */
const char *od_part_name(od_part p);
/* The part's label in the text and Markdown reports. */
const char *od_part_label(od_part p);

#endif
