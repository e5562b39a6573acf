/*
 * knowledge.h: the versioned knowledge table (rules/knowledge.yaml): which
 * PyTorch releases have which allocator variables, options and values,
 * what a message's layout and hint prove about its release, and each
 * vendor's commands.  The facts of facts.c that fixes use are answered
 * from it.
 */
#ifndef OD_KNOWLEDGE_H
#define OD_KNOWLEDGE_H

#include <yaml.h>

#include "core.h"
#include "rules.h"

/* A release as MAJOR * 100 + MINOR; KN_OPEN: up to the newest. */
#define KN_OPEN 99999

/* The releases a message can come from, both ends included. */
typedef struct {
	int min, max;
} kn_range;

/* The table: owned by its rule set (rl_set.knowledge); kn_free frees it. */
typedef struct kn_table kn_table;

kn_table *kn_new(void);
void kn_free(kn_table *t);

/*
 * Adds the entries of list, the value of a file's "knowledge" key, to t.
 * Every error goes to errs with path and the entry's line and column;
 * on any error nothing of the file is added and false is returned.
 */
bool kn_load(kn_table *t, const char *path, yaml_document_t *doc,
    yaml_node_t *list, rl_errors *errs);

/* The number of entries, for `oomdoc rules check`. */
int kn_count(const kn_table *t);

/* The releases ev's message can come from; false when unknown (not a
 * PyTorch message, or a layout the table does not bound). */
bool kn_release(const kn_table *t, const od_event *ev, kn_range *r);

/* Writes a release as "1.10"; buf holds at least 12 bytes. */
void kn_release_text(int release, char *buf, size_t cap);

/* The vendor of ev's device: "nvidia", "amd", "intel", "apple", or NULL. */
const char *kn_vendor(const od_event *ev);

/* The allocator variable that exists in every release of ev's range for
 * its vendor, the first in the table's order, or NULL. */
const char *kn_alloc_var(const kn_table *t, const od_event *ev);

/* Whether option exists in every release of ev's range (1), in none (0),
 * or that is unknown (-1). */
int kn_option(const kn_table *t, const od_event *ev, const char *option);

/* The smallest value of option that every release of ev's range accepts,
 * or -1 when unknown. */
int64_t kn_option_min(const kn_table *t, const od_event *ev,
    const char *option);

/* The autocast API every release of the range has (torch.autocast or
 * torch.cuda.amp.autocast), or NULL (none, or unknown). */
const char *kn_autocast(const kn_table *t, const od_event *ev);

/* Whether the feature entry name (one with since: an API, a setting) is
 * in every release the log shows (1), in none (0), or that is unknown
 * (-1); a feature of framework tensorflow counts TensorFlow's releases. */
int kn_feature(const kn_table *t, const od_event *ev, const char *name);

/* A command entry's value for ev's vendor (smi_procs, visible_devices,
 * mps_watermark), or NULL. */
const char *kn_command(const kn_table *t, const od_event *ev,
    const char *name);

/* The compute capability of the NVIDIA model the log names (8.0 for
 * A100), from the table's gpu entries; -1 when unknown or not NVIDIA. */
double kn_compute_capability(const kn_table *t, const od_event *ev);

/* What the failing frame (or else the phase) says the request is:
 * "activation", "parameter", or NULL when they do not tell. */
const char *kn_role(const kn_table *t, const od_event *ev);

#endif
