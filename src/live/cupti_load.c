/*
 * cupti_load.c: CUPTI's memory activity through dlopen (see
 * cupti_load.h).
 *
 * CUPTI hands over filled buffers on its own thread through
 * bufferCompleted, which has no user pointer: the records are added up
 * into one accumulator under a mutex, and ct_take forces a flush and
 * moves the sums out.  Only the fields that CUpti_ActivityMemory2, 3 and 4
 * share are read, so that an older libcupti (a PyTorch wheel's) is read
 * right too; the source of an allocation (Memory4) only when the library
 * is as new as the headers this was built with.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_load.h"

#ifndef OOMDOC_HAVE_CUPTI

/* Built without CUPTI's headers: no activity is recorded. */
ct_lib *
ct_open(const char *path, char *note, size_t len)
{
	(void)path;
	snprintf(note, len, "CUPTI not available: this oomdoc was built "
	    "without CUPTI's headers");
	return NULL;
}

void
ct_take(ct_lib *ct, dv_activity *out)
{
	(void)ct;
	(void)out;
}

void
ct_close(ct_lib *ct)
{
	(void)ct;
}

void
ct_account(dv_activity *a, int operation, int kind, uint64_t bytes,
    const char *source)
{
	(void)a;
	(void)operation;
	(void)kind;
	(void)bytes;
	(void)source;
}

#else

#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>

#define CT_BUFFER (1u << 20)

struct ct_lib {
	void *so;
	bool has_source;        /* the records are CUpti_ActivityMemory4 */
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc,
	    CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*result_string)(CUptiResult, const char **);
	CUptiResult (*version)(uint32_t *);
};

/* The one library in use (CUPTI's callbacks carry no pointer). */
static ct_lib *ct_active;
static pthread_mutex_t ct_lock = PTHREAD_MUTEX_INITIALIZER;
static dv_activity ct_sum;

void
ct_account(dv_activity *a, int operation, int kind, uint64_t bytes,
    const char *source)
{
	const char *name;
	int i;

	if (operation == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
		a->releases++;
		a->release_bytes += (int64_t)bytes;
		return;
	}
	if (operation != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		return;
	a->allocs++;
	a->alloc_bytes += (int64_t)bytes;
	if (kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
		a->device_bytes += (int64_t)bytes;
	else
		a->other_bytes += (int64_t)bytes;
	/* The last part of the path is enough to tell who asked. */
	name = source != NULL && source[0] != '\0' ? source : "unknown";
	if (strrchr(name, '/') != NULL)
		name = strrchr(name, '/') + 1;
	for (i = 0; i < a->nsources; i++)
		if (strcmp(a->sources[i], name) == 0)
			break;
	if (i == a->nsources && i < DV_SOURCES_MAX) {
		snprintf(a->sources[i], sizeof a->sources[i], "%s", name);
		a->nsources++;
	}
	if (i < a->nsources)
		a->source_allocs[i]++;
}

static void CUPTIAPI
ct_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment. */
	*buffer = aligned_alloc(8, CT_BUFFER);
	*size = *buffer != NULL ? CT_BUFFER : 0;
	*max_records = 0;
}

static void CUPTIAPI
ct_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
    size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	ct_lib *ct;

	(void)size;
	pthread_mutex_lock(&ct_lock);
	ct = ct_active;
	while (ct != NULL && ct->next(buffer, valid, &rec) ==
	    CUPTI_SUCCESS) {
		const CUpti_ActivityMemory4 *m;

		if (rec->kind != CUPTI_ACTIVITY_KIND_MEMORY2)
			continue;
		m = (const CUpti_ActivityMemory4 *)(const void *)rec;
		ct_account(&ct_sum, (int)m->memoryOperationType,
		    (int)m->memoryKind, m->bytes,
		    ct->has_source ? m->source : NULL);
	}
	if (ct != NULL && ct->dropped != NULL &&
	    ct->dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
		ct_sum.dropped += (int64_t)dropped;
	pthread_mutex_unlock(&ct_lock);
	free(buffer);
}

static void
ct_sym(void *so, const char *name, void *fn)
{
	void *p = dlsym(so, name);

	memcpy(fn, &p, sizeof p);
}

static const char *
ct_err(const ct_lib *ct, CUptiResult r)
{
	const char *s = NULL;

	if (ct->result_string != NULL)
		ct->result_string(r, &s);
	return s != NULL ? s : "unknown CUPTI error";
}

ct_lib *
ct_open(const char *path, char *note, size_t len)
{
	static const char *const names[] = {
		"libcupti.so.13", "libcupti.so", "libcupti.so.12",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
		"/usr/local/cuda/lib64/libcupti.so",
	};
	ct_lib *ct;
	CUptiResult r;
	uint32_t v = 0;
	size_t i;

	note[0] = '\0';
	if (ct_active != NULL) {
		snprintf(note, len, "CUPTI is already in use");
		return NULL;
	}
	ct = calloc(1, sizeof *ct);
	if (ct == NULL) {
		snprintf(note, len, "CUPTI not loaded: out of memory");
		return NULL;
	}
	if (path != NULL) {
		ct->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	} else {
		for (i = 0; ct->so == NULL && i < sizeof names / sizeof names[0];
		    i++)
			ct->so = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (ct->so == NULL) {
		const char *e = dlerror();

		snprintf(note, len, "CUPTI not available: cannot load %s (%s); "
		    "set OOMDOC_CUPTI to its path", path != NULL ? path :
		    "libcupti.so", e != NULL ? e : "no reason given");
		free(ct);
		return NULL;
	}
	ct_sym(ct->so, "cuptiActivityRegisterCallbacks", &ct->reg);
	ct_sym(ct->so, "cuptiActivityEnable", &ct->enable);
	ct_sym(ct->so, "cuptiActivityDisable", &ct->disable);
	ct_sym(ct->so, "cuptiActivityFlushAll", &ct->flush);
	ct_sym(ct->so, "cuptiActivityGetNextRecord", &ct->next);
	ct_sym(ct->so, "cuptiActivityGetNumDroppedRecords", &ct->dropped);
	ct_sym(ct->so, "cuptiGetResultString", &ct->result_string);
	ct_sym(ct->so, "cuptiGetVersion", &ct->version);
	if (ct->reg == NULL || ct->enable == NULL || ct->disable == NULL ||
	    ct->flush == NULL || ct->next == NULL) {
		snprintf(note, len, "CUPTI not available: the library lacks "
		    "the activity API");
		dlclose(ct->so);
		free(ct);
		return NULL;
	}
	if (ct->version != NULL && ct->version(&v) == CUPTI_SUCCESS)
		ct->has_source = v >= CUPTI_API_VERSION;
	ct_active = ct;
	r = ct->reg(ct_requested, ct_completed);
	if (r == CUPTI_SUCCESS)
		r = ct->enable(CUPTI_ACTIVITY_KIND_MEMORY2);
	if (r != CUPTI_SUCCESS) {
		snprintf(note, len, "CUPTI not available: %s%s", ct_err(ct, r),
		    r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
		    " (another profiler holds it)" : "");
		ct_active = NULL;
		dlclose(ct->so);
		free(ct);
		return NULL;
	}
	return ct;
}

void
ct_take(ct_lib *ct, dv_activity *out)
{
	if (ct == NULL)
		return;
	ct->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&ct_lock);
	*out = ct_sum;
	memset(&ct_sum, 0, sizeof ct_sum);
	pthread_mutex_unlock(&ct_lock);
	out->available = true;
}

void
ct_close(ct_lib *ct)
{
	if (ct == NULL)
		return;
	ct->disable(CUPTI_ACTIVITY_KIND_MEMORY2);
	ct->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&ct_lock);
	ct_active = NULL;
	pthread_mutex_unlock(&ct_lock);
	/* CUPTI may still call back from its thread: the library stays. */
	free(ct);
}

#endif
