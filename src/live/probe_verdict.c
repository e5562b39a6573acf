/*
 * probe_verdict.c: the verdicts of live mode.  Each judge reads what a
 * probe measured (probe_run.c) beside the figures of the event and says
 * whether the cause is confirmed, refuted or left open, in a sentence
 * with the figures; pb_describe says in one sentence what a run found,
 * for `oomdoc probe`, where there is no event.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

const char *
pb_outcome_name(pb_outcome o)
{
	return o == PB_CONFIRMED ? "confirmed" : o == PB_REFUTED ? "refuted" :
	    "inconclusive";
}

/* A size for a sentence. */
typedef struct {
	char s[32];
} pb_sz;

static pb_sz
sz(int64_t v)
{
	pb_sz z;

	od_size_format(v, z.s, sizeof z.s);
	return z;
}

/* The verdict, with its sentence. */
static void pb_say(pb_verdict *v, pb_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
pb_say(pb_verdict *v, pb_outcome o, const char *fmt, ...)
{
	va_list ap;

	v->outcome = o;
	va_start(ap, fmt);
	vsnprintf(v->summary, sizeof v->summary, fmt, ap);
	va_end(ap);
}

/* Whether the device differs from the log's by more than 2 %. */
static bool
pb_other_device(const od_event *ev, int64_t total_now)
{
	int64_t t = ev->mem.total;

	if (t <= 0 || total_now <= 0)
		return false;
	return (double)(t > total_now ? t - total_now : total_now - t) >
	    0.02 * (double)t;
}

/* The shortfall as the memory account has it (src/lib/account.c): what
 * the request lacked, the whole request when the printed free memory
 * would have held it; -1 unknown. */
static int64_t
pb_shortfall(const od_event *ev)
{
	int64_t q = ev->mem.requested, f = ev->mem.free;

	if (q < 0 || f < 0)
		return -1;
	return q > f ? q - f : q;
}

/*
 * The job's memory outside the allocator against the measured cost of a
 * bare CUDA context (the baseline, said in the sentence), judged against
 * the shortfall: what is beyond the baseline confirms the cause only when
 * giving it back would have served the request.
 */
/*
 * The same judged against both baselines (--torch-baseline): the job ran
 * PyTorch, so its memory outside the allocator holds at least what an
 * empty PyTorch process costs; only what is beyond that can be given
 * back, and it confirms the cause when it covers the shortfall.  What is
 * beyond the bare context but not beyond PyTorch's own is PyTorch's.
 */
static void
pb_judge_context_torch(const od_event *ev, const pb_result *r,
    pb_verdict *v)
{
	int64_t n = ev->mem.non_framework, ctx = r->context;
	int64_t tc = r->torch_context, need = pb_shortfall(ev);
	int64_t extra = dv_sat_sub(n, tc), bare = dv_sat_sub(n, ctx);

	if (extra <= dv_sat_add(tc / 4, 128 * PB_MIB)) {
		pb_say(v, PB_REFUTED, "The %s outside the allocator is %s "
		    "what an %s costs here (%s, measured; a %s costs %s): "
		    "nothing beyond what PyTorch itself needs can go.",
		    sz(n).s, -extra > dv_sat_add(tc / 4, 128 * PB_MIB) ?
		    "less than" : "about", r->torch_baseline, sz(tc).s,
		    r->baseline, sz(ctx).s);
	} else if (need < 0) {
		pb_say(v, PB_INCONCLUSIVE, "The process held %s outside the "
		    "allocator, %s beyond an %s (%s, measured) and %s beyond a "
		    "%s (%s); the log gives no shortfall to judge it against.",
		    sz(n).s, sz(extra).s, r->torch_baseline, sz(tc).s,
		    sz(bare).s, r->baseline, sz(ctx).s);
	} else if (extra >= need) {
		pb_say(v, PB_CONFIRMED, "The process held %s outside the "
		    "allocator; an %s costs %s here and a %s %s (both "
		    "measured), so %s came from libraries' workspaces, NCCL "
		    "buffers or another framework, which covers the %s "
		    "shortfall.", sz(n).s, r->torch_baseline, sz(tc).s,
		    r->baseline, sz(ctx).s, sz(extra).s, sz(need).s);
	} else {
		pb_say(v, PB_INCONCLUSIVE, "The process held %s outside the "
		    "allocator, %s beyond an %s (%s, measured) and %s beyond a "
		    "%s (%s): beyond PyTorch's own, less than the %s "
		    "shortfall, so giving it back alone would not have served "
		    "the request.", sz(n).s, sz(extra).s, r->torch_baseline,
		    sz(tc).s, sz(bare).s, r->baseline, sz(ctx).s, sz(need).s);
	}
}

static void
pb_judge_context(const od_event *ev, const pb_result *r, pb_verdict *v)
{
	int64_t n = ev->mem.non_framework, ctx = r->context, extra;
	int64_t need = pb_shortfall(ev);

	if (n >= 0 && r->torch_context > 0) {
		pb_judge_context_torch(ev, r, v);
		return;
	}
	if (n < 0) {
		pb_say(v, PB_INCONCLUSIVE, "A %s costs %s on this device, but "
		    "the log gives no non-framework figure to compare it "
		    "with.", r->baseline, sz(ctx).s);
		return;
	}
	extra = dv_sat_sub(n, ctx);
	if (extra <= dv_sat_add(ctx / 4, 128 * PB_MIB)) {
		pb_say(v, PB_REFUTED, "The %s outside the allocator is about "
		    "what a %s costs here (%s, measured): nothing beyond the "
		    "context needs to go.", sz(n).s, r->baseline, sz(ctx).s);
	} else if (need < 0) {
		pb_say(v, PB_INCONCLUSIVE, "The process held %s outside the "
		    "allocator, %s beyond a %s (%s, measured); the log gives "
		    "no shortfall to judge it against.", sz(n).s,
		    sz(extra).s, r->baseline, sz(ctx).s);
	} else if (extra >= need) {
		pb_say(v, PB_CONFIRMED, "The process held %s outside the "
		    "allocator; a %s costs %s here (measured), so %s came "
		    "from libraries' workspaces, NCCL buffers or another "
		    "framework, which covers the %s shortfall.", sz(n).s,
		    r->baseline, sz(ctx).s, sz(extra).s, sz(need).s);
	} else {
		pb_say(v, PB_INCONCLUSIVE, "The process held %s outside the "
		    "allocator, %s beyond a %s (%s, measured): less than the "
		    "%s shortfall, so giving it back alone would not have "
		    "served the request.", sz(n).s, sz(extra).s, r->baseline,
		    sz(ctx).s, sz(need).s);
	}
}

static void
pb_judge_fits(const char *cause, const od_event *ev, const pb_result *r,
    pb_verdict *v)
{
	bool fraction = strcmp(cause, "memory_fraction_limit") == 0;
	bool fits_device;       /* measured, or by the free memory */
	int64_t lim = ev->mem.allowed;

	if (r->beyond_cap && r->target > r->free_now) {
		fits_device = false;
	} else if (r->beyond_cap) {
		pb_say(v, PB_INCONCLUSIVE, "Allocated + requested = %s is "
		    "more than the cap of %s; this device has %s free, so "
		    "rerun with a larger --max-memory to test it.",
		    sz(r->target).s, sz(r->cap).s, sz(r->free_now).s);
		return;
	} else {
		fits_device = r->fit;
	}
	if (fraction) {
		if (lim < 0) {
			pb_say(v, PB_INCONCLUSIVE, "The log gives no allowed "
			    "figure to compare with.");
		} else if (!fits_device) {
			pb_say(v, PB_REFUTED, "Allocated + requested = %s does "
			    "not fit on the device itself (%s could be taken, "
			    "%s free): raising the memory fraction would not "
			    "have helped.", sz(r->target).s, sz(r->got).s,
			    sz(r->free_now).s);
		} else if (r->target > lim) {
			pb_say(v, PB_CONFIRMED, "Allocated + requested = %s "
			    "fits on this device now (%s free) but is more "
			    "than the %s PyTorch was allowed: the fraction "
			    "stopped it.", sz(r->target).s, sz(r->free_now).s,
			    sz(lim).s);
		} else {
			pb_say(v, PB_REFUTED, "Allocated + requested = %s is "
			    "within the %s allowed: the fraction was not what "
			    "stopped it.", sz(r->target).s, sz(lim).s);
		}
		return;
	}
	if (!fits_device && r->others > 0 && r->target <= r->free_now +
	    r->others) {
		pb_say(v, PB_INCONCLUSIVE, "Allocated + requested = %s does "
		    "not fit on this device now, but other processes hold %s "
		    "of it: without them it would (see foreign_process).",
		    sz(r->target).s, sz(r->others).s);
	} else if (!fits_device) {
		if (r->beyond_cap)
			pb_say(v, PB_CONFIRMED, "Allocated + requested = %s is "
			    "more than the %s free on this device now (tested "
			    "by allocation up to the cap of %s).",
			    sz(r->target).s, sz(r->free_now).s, sz(r->cap).s);
		else
			pb_say(v, PB_CONFIRMED, "Allocated + requested = %s "
			    "does not fit on this device now: only %s could "
			    "be allocated (%s free of %s).", sz(r->target).s,
			    sz(r->got).s, sz(r->free_now).s,
			    sz(r->total_now).s);
	} else if (pb_other_device(ev, r->total_now)) {
		pb_say(v, PB_INCONCLUSIVE, "Allocated + requested = %s fits "
		    "here, but this GPU (%s) is not the one of the log (%s).",
		    sz(r->target).s, sz(r->total_now).s, sz(ev->mem.total).s);
	} else {
		pb_say(v, PB_REFUTED, "Allocated + requested = %s fits on "
		    "this device now (%s free): at the failure, memory that "
		    "is not here now (other processes, memory outside the "
		    "allocator, fragmentation) took the difference.",
		    sz(r->target).s, sz(r->free_now).s);
	}
}

static void
pb_judge_largest(const od_event *ev, const pb_result *r, pb_verdict *v)
{
	int64_t q = ev->mem.requested;

	if (q > r->total_now) {
		pb_say(v, PB_CONFIRMED, "One request of %s is more than this "
		    "GPU's whole memory (%s); the largest single allocation "
		    "here is %s.", sz(q).s, sz(r->total_now).s,
		    sz(r->largest).s);
	} else if (r->request_fit == 1) {
		pb_say(v, PB_REFUTED, "A single allocation of %s succeeds on "
		    "this device now (largest single allocation %s).",
		    sz(q).s, sz(r->largest).s);
	} else if (q > r->largest && !r->largest_at_cap) {
		pb_say(v, PB_CONFIRMED, "The largest single allocation on this "
		    "device now is %s, less than the %s requested.",
		    sz(r->largest).s, sz(q).s);
	} else {
		pb_say(v, PB_INCONCLUSIVE, "The %s request is above the cap of "
		    "%s, and the largest allocation tried (%s) reached the "
		    "cap: rerun with a larger --max-memory.", sz(q).s,
		    sz(r->cap).s, sz(r->largest).s);
	}
}

/* The snapshot's verdict, as a clause for the probe's sentence. */
static const char *
pb_snapshot_says(const od_event *ev)
{
	if (!ev->snap.present)
		return "; record a memory snapshot and give it with --snapshot "
		    "for a verdict from the allocator's own blocks";
	switch (ev->snap.verdict) {
	case OD_SNAP_CONFIRMED:
		return "; the memory snapshot joined to this event confirms it "
		    "from the allocator's blocks (see the diagnosis)";
	case OD_SNAP_PARTIAL:
		return "; the memory snapshot joined to this event finds it "
		    "in part (see the diagnosis)";
	case OD_SNAP_REFUTED:
		return "; the memory snapshot joined to this event refutes it "
		    "(see the diagnosis)";
	case OD_SNAP_INCONCLUSIVE:
	case OD_SNAP_UNKNOWN:
		break;
	}
	return "; the memory snapshot joined to this event does not decide "
	    "it either (see the diagnosis)";
}

/*
 * Never a confirmation, nor a refutation: fragmentation lives inside
 * PyTorch's caching allocator, and what raw device calls show follows from
 * the log's own figures (less than the request free with the holes held;
 * enough once they are released).  The sentence says what the device
 * showed, and where a verdict comes from.
 */
static void
pb_judge_fragmentation(const od_event *ev, const pb_result *r,
    pb_verdict *v)
{
	int64_t q = ev->mem.requested;
	const char *contig = "";

	if (r->malloc_rel_st == DV_OOM && r->vmm_st == DV_OK)
		contig = "  This device needed contiguous memory for "
		    "cudaMalloc, which a GPU does not.";
	pb_say(v, PB_INCONCLUSIVE, "With %s held in %d holes and %s free, "
	    "cudaMalloc(%s): %s, mapped in chunks: %s; with the holes "
	    "released (%s free), cudaMalloc: %s, mapped: %s.  Raw device calls "
	    "cannot show fragmentation, which lives inside PyTorch's caching "
	    "allocator%s.%s%s", sz(r->holes_total).s, r->holes,
	    sz(r->free_left).s, sz(q).s, dv_status_name(r->malloc_st),
	    dv_status_name(r->vmm_held_st), sz(r->free_released).s,
	    dv_status_name(r->malloc_rel_st), dv_status_name(r->vmm_st),
	    pb_snapshot_says(ev), contig, r->scaled ? "  (Scaled: fewer holes "
	    "than the log's figure.)" : "");
}

static bool
pb_pid_in(int64_t pid, const dv_proc *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].pid == pid)
			return true;
	return false;
}

static void
pb_judge_processes(const od_event *ev, const pb_result *r, pb_verdict *v)
{
	int64_t others = 0;
	char still[96], named[96];
	size_t ns = 0, nn = 0;
	int i, nstill = 0;

	still[0] = named[0] = '\0';
	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].bytes > 0)
			others += r->procs[i].bytes;
	for (i = 0; i < ev->mem.nprocs; i++) {
		int64_t pid = ev->mem.procs[i].pid;

		if (nn < sizeof named - 1)
			nn += (size_t)snprintf(named + nn, sizeof named - nn,
			    "%s%lld", nn ? ", " : "", (long long)pid);
		if (pb_pid_in(pid, r->procs, r->nprocs)) {
			nstill++;
			if (ns < sizeof still - 1)
				ns += (size_t)snprintf(still + ns,
				    sizeof still - ns, "%s%lld", ns ? ", " : "",
				    (long long)pid);
		}
	}
	if (nstill > 0) {
		pb_say(v, PB_CONFIRMED, "Processes the log names still hold "
		    "memory on this GPU: %s; %d other process(es) hold %s in "
		    "all.", still, r->nprocs, sz(others).s);
	} else if (r->total_now > 0 && others >= r->total_now / 10) {
		pb_say(v, PB_CONFIRMED, "%d other process(es) hold %s of this "
		    "GPU now (%.0f%%).", r->nprocs, sz(others).s,
		    100.0 * (double)others / (double)r->total_now);
	} else if (r->nprocs == 0) {
		pb_say(v, PB_INCONCLUSIVE, "No other process holds memory on "
		    "this GPU now%s%s%s; that says nothing of the moment of "
		    "the failure.", nn ? " (the log named " : "", named,
		    nn ? ")" : "");
	} else {
		pb_say(v, PB_INCONCLUSIVE, "Other processes hold only %s of "
		    "this GPU now.", sz(others).s);
	}
}

/* A sentence added to the verdict's. */
static void pb_add(pb_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
pb_add(pb_verdict *v, const char *fmt, ...)
{
	size_t n = strlen(v->summary);
	va_list ap;

	if (n + 1 >= sizeof v->summary)
		return;
	va_start(ap, fmt);
	vsnprintf(v->summary + n, sizeof v->summary - n, fmt, ap);
	va_end(ap);
}

/* How much a counter rose between the two readings; 0 when it did not,
 * or when either reading is unknown. */
static int64_t
pb_rise(int64_t before, int64_t after)
{
	return before >= 0 && after >= 0 && after > before ? after - before :
	    0;
}

/*
 * The counters read before and after the tests (probe_run.c): a rise of
 * the uncorrected ECC count, of the rows remapped for uncorrectable
 * errors, or a remap that became pending, is a fault the tests met;
 * true with the verdict said.  A rise of the corrected counts is added
 * as a warning with its numbers: the hardware corrected those errors.
 */
static bool
pb_judge_counters(const pb_result *r, pb_verdict *v)
{
	const dv_health *h = &r->health, *g = &r->health_after;
	int64_t unc, rows;

	if (!r->health_ran || !r->health_after_ran)
		return false;
	unc = pb_rise(h->ecc_uncorrected, g->ecc_uncorrected);
	rows = pb_rise(h->remapped_uncorrectable, g->remapped_uncorrectable);
	if (unc > 0) {
		pb_say(v, PB_CONFIRMED, "The uncorrectable ECC count rose from "
		    "%lld to %lld during the health test%s: this GPU's memory "
		    "is faulty.", (long long)h->ecc_uncorrected,
		    (long long)g->ecc_uncorrected, h->on_parent ? " (counted "
		    "on the MIG instance's parent GPU)" : "");
	} else if (rows > 0) {
		pb_say(v, PB_CONFIRMED, "The rows remapped for uncorrectable "
		    "errors rose from %lld to %lld during the health test: "
		    "this GPU's memory is faulty.",
		    (long long)h->remapped_uncorrectable,
		    (long long)g->remapped_uncorrectable);
	} else if (h->remap_known && g->remap_known && !h->remap_pending &&
	    g->remap_pending) {
		pb_say(v, PB_CONFIRMED, "A row remap became pending during the "
		    "health test: the GPU met a memory error and needs a reset "
		    "before its memory can be trusted.");
	} else {
		return false;
	}
	return true;
}

/* The warning on corrected errors, after whatever verdict was said. */
static void
pb_warn_corrected(const pb_result *r, pb_verdict *v)
{
	const dv_health *h = &r->health, *g = &r->health_after;
	int64_t corr, rows;

	if (!r->health_ran || !r->health_after_ran)
		return;
	corr = pb_rise(h->ecc_corrected, g->ecc_corrected);
	rows = pb_rise(h->remapped_correctable, g->remapped_correctable);
	if (corr > 0)
		pb_add(v, "  Warning: the corrected ECC count rose from %lld to "
		    "%lld during the test (the hardware corrected them; a "
		    "rising count is worth watching).",
		    (long long)h->ecc_corrected, (long long)g->ecc_corrected);
	if (rows > 0)
		pb_add(v, "  Warning: the rows remapped for correctable errors "
		    "rose from %lld to %lld during the test.",
		    (long long)h->remapped_correctable,
		    (long long)g->remapped_correctable);
}

static void
pb_judge_health_now(const pb_result *r, pb_verdict *v);

static void
pb_judge_health(const pb_result *r, pb_verdict *v)
{
	if (r->pat_ran && r->pat.ecc_fault)
		pb_say(v, PB_CONFIRMED, "The driver reported an uncorrectable "
		    "ECC error (CUDA_ERROR_ECC_UNCORRECTABLE) while the memory "
		    "test ran: this GPU's memory is faulty.");
	else if (r->pat_ran && r->pat.errors > 0)
		pb_say(v, PB_CONFIRMED, "The pattern test read back %lld wrong "
		    "word(s) over %s (first at 0x%llx; static patterns %lld, "
		    "moving inversions %lld, random %lld with seed %llu): this "
		    "GPU's memory is faulty.", (long long)r->pat.errors,
		    sz(r->pat.bytes).s, (unsigned long long)r->pat.bad[0],
		    (long long)r->pat.kind_errors[DV_PT_STATIC],
		    (long long)r->pat.kind_errors[DV_PT_MOVING],
		    (long long)r->pat.kind_errors[DV_PT_RANDOM],
		    (unsigned long long)r->pat.seed);
	else if (!pb_judge_counters(r, v))
		pb_judge_health_now(r, v);
	pb_warn_corrected(r, v);
}

/*
 * The reference a triad is judged against, said as what it is (into out,
 * size cap): a published BabelStream triad, or a share of the data
 * sheet's peak for a part with none.
 */
static void
pb_ref_phrase(const bw_ref *ref, char *out, size_t cap)
{
	char basis[120];

	bw_ref_basis(ref, basis, sizeof basis);
	if (ref->measured)
		snprintf(out, cap, "%.2f TB/s an %s reaches (BabelStream)",
		    ref->triad_bps / 1e12, ref->name);
	else
		snprintf(out, cap, "%.2f TB/s taken for an %s (%s)",
		    ref->triad_bps / 1e12, ref->name, basis);
}

/* The verdict from the counters as they stand and the tests' figures. */
static void
pb_judge_health_now(const pb_result *r, pb_verdict *v)
{
	const dv_health *h = r->health_after_ran ? &r->health_after :
	    &r->health;
	/* Against what the part reaches (bandwidth_ref.c), not its peak. */
	double frac = r->bw_ran && r->ref != NULL ? r->bw.triad_bps /
	    r->ref->triad_bps : -1;

	if (h->ecc_known && h->ecc_uncorrected > 0) {
		pb_say(v, PB_CONFIRMED, "The driver counts %lld uncorrectable "
		    "ECC error(s) since it loaded.",
		    (long long)h->ecc_uncorrected);
	} else if (h->remap_known && (h->remap_pending || h->remap_failure)) {
		pb_say(v, PB_CONFIRMED, "%s", h->remap_failure ? "Row remapping "
		    "failed on this GPU: it needs service." : "A row remap is "
		    "pending: the GPU needs a reset before its memory can be "
		    "trusted.");
	} else if (h->retired_known && h->retired_pending) {
		pb_say(v, PB_CONFIRMED, "A page retirement is pending: the "
		    "GPU needs a reset.");
	} else if (r->pat_ran && !r->pat.cut && (h->ecc_known ||
	    h->remap_known) && (frac < 0 || frac >= BW_REF_FACTOR)) {
		char bw[300], ref[240];

		if (frac >= 0) {
			pb_ref_phrase(r->ref, ref, sizeof ref);
			snprintf(bw, sizeof bw, "triad bandwidth at %.0f%% of "
			    "the %s", 100.0 * frac, ref);
		} else if (r->bw_ran)
			snprintf(bw, sizeof bw, "bandwidth not judged: no "
			    "reference for this part");
		else
			snprintf(bw, sizeof bw, "bandwidth not measured");
		pb_say(v, PB_REFUTED, "No pattern errors over %s in %d "
		    "passes (static, moving inversions, random), %s, %s%s, %s.  "
		    "These checks pass now; that is not a general statement of "
		    "health: `dcgmi diag -r 2` (DCGM) is a fuller check.",
		    sz(r->pat.bytes).s, r->pat.passes, h->ecc_known ?
		    "no uncorrectable ECC errors" : "ECC counters not supported",
		    h->remap_known ? "no pending or failed remaps" :
		    "remapped-row counters not supported", r->health_after_ran ?
		    " (the counters read before and after the test)" : "", bw);
	} else if (frac >= 0 && frac < BW_REF_FACTOR) {
		char ref[240];

		pb_ref_phrase(r->ref, ref, sizeof ref);
		pb_say(v, PB_INCONCLUSIVE, "No memory errors were found, but "
		    "the triad bandwidth is only %.0f%% of the %s; suspect "
		    "below %.0f%%: check clocks, throttling and other "
		    "processes.", 100.0 * frac, ref, 100.0 * BW_REF_FACTOR);
	} else {
		pb_say(v, PB_INCONCLUSIVE, "No errors were found, but %s%s%s%s; "
		    "`dcgmi diag -r 2` (DCGM) is a fuller check.",
		    !r->pat_ran ? "the pattern test did not run" : r->pat.cut ?
		    "the pattern test was cut short by the time limit" :
		    "the ECC and remapping counters could not be read",
		    r->note[0] != '\0' ? " (" : "", r->note,
		    r->note[0] != '\0' ? ")" : "");
	}
}

void
pb_judge(const char *cause, const od_event *ev, const pb_result *r,
    pb_verdict *v)
{
	v->cause = cause;
	v->result = r;
	v->probe = r->probe;
	if (v->probe_name == NULL)
		v->probe_name = pb_name(r->probe);
	if (!r->ran) {
		pb_say(v, PB_INCONCLUSIVE, "%s", r->note[0] != '\0' ? r->note :
		    "the probe did not run");
		return;
	}
	switch (r->probe) {
	case PB_CONTEXT_COST:
		pb_judge_context(ev, r, v);
		break;
	case PB_FITS_NOW:
		pb_judge_fits(cause, ev, r, v);
		break;
	case PB_LARGEST_ALLOCATION:
		pb_judge_largest(ev, r, v);
		break;
	case PB_FRAGMENTATION:
		pb_judge_fragmentation(ev, r, v);
		break;
	case PB_PROCESSES:
		pb_judge_processes(ev, r, v);
		break;
	case PB_HEALTH:
	case PB_COUNT:
		pb_judge_health(r, v);
		break;
	}
}

void
pb_describe(const pb_result *r, char *buf, size_t len)
{
	pb_verdict v;
	od_event none;

	if (!r->ran) {
		snprintf(buf, len, "%s", r->note[0] != '\0' ? r->note :
		    "the probe did not run");
		return;
	}
	switch (r->probe) {
	case PB_CONTEXT_COST:
		if (r->torch_context > 0)
			snprintf(buf, len, "A %s costs %s on this device, an "
			    "%s %s.", r->baseline, sz(r->context).s,
			    r->torch_baseline, sz(r->torch_context).s);
		else
			snprintf(buf, len, "A %s costs %s on this device.",
			    r->baseline, sz(r->context).s);
		break;
	case PB_PROCESSES: {
		int64_t others = 0;
		int i;

		for (i = 0; i < r->nprocs; i++)
			if (r->procs[i].bytes > 0)
				others += r->procs[i].bytes;
		snprintf(buf, len, "%d other process(es) hold %s of this GPU.",
		    r->nprocs, sz(others).s);
		break;
	}
	case PB_LARGEST_ALLOCATION:
		snprintf(buf, len, "The largest single allocation is %s%s; %s "
		    "can be allocated in all, of %s free.", sz(r->largest).s,
		    r->largest_at_cap ? " (the cap)" : "", sz(r->allocatable).s,
		    sz(r->free_now).s);
		break;
	case PB_HEALTH:
		memset(&v, 0, sizeof v);
		od_event_init(&none);
		pb_judge("hardware_fault", &none, r, &v);
		snprintf(buf, len, "%s: %s", v.outcome == PB_CONFIRMED ?
		    "Faulty" : v.outcome == PB_REFUTED ? "Healthy" :
		    "Not decided", v.summary);
		break;
	default:
		snprintf(buf, len, "It ran.");
		break;
	}
}
