/*
 * test_extract.c: each era's message, the prefixes, and the shapes real
 * logs give them, run through the scanner from an in-memory buffer; the
 * regex module's readers and limits; both recognisers through their
 * interface.
 */
#define _GNU_SOURCE             /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "decide.h"
#include "extract.h"
#include "recogniser.h"
#include "regex.h"
#include "ut_recognisers.h"

#define GiB(x) ((int64_t)((x) * 1073741824.0 + 0.5))
#define MiB(x) ((int64_t)((x) * 1048576.0 + 0.5))

static od_scanner *sc;

static int
setup(void **state)
{
	od_error err;

	(void)state;
	sc = od_scanner_new(true, ut_recognisers(), &err);
	return sc == NULL;
}

static int
teardown(void **state)
{
	(void)state;
	od_scanner_free(sc);
	return 0;
}

/* Scans text and returns its event set (the caller frees it). */
static od_events *
scan(const char *text, od_input *info)
{
	od_events *set = od_events_new();
	od_input dummy;

	od_scan_buffer(sc, text, strlen(text), 0, info ? info : &dummy, set);
	return set;
}

static void
test_era_cached(void **state)
{
	od_events *set = scan("x\nRuntimeError: CUDA out of memory. Tried to "
	    "allocate 16.00 GiB (GPU 0; 11.93 GiB total capacity; 4.00 GiB "
	    "already allocated; 7.33 GiB free; 179.00 KiB cached)\n", NULL);
	od_event *ev;

	(void)state;
	assert_int_equal(od_events_count(set), 1);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->kind, OD_KIND_CUDA_CACHING_ALLOCATOR);
	assert_int_equal(ev->layout, OD_LAYOUT_CACHED);
	assert_int_equal(ev->line, 2);
	assert_int_equal(ev->device, 0);
	assert_string_equal(ev->exception, "RuntimeError");
	assert_int_equal(ev->mem.requested, GiB(16));
	assert_int_equal(ev->mem.total, 12809739960LL);
	assert_int_equal(ev->mem.allocated, GiB(4));
	assert_int_equal(ev->mem.free, 7870527570LL);
	assert_int_equal(ev->mem.reserved_unallocated, 183296);
	assert_int_equal(ev->mem.reserved, GiB(4) + 183296);
	assert_int_equal(ev->mem.process_in_use, OD_UNKNOWN);
	assert_int_equal(ev->mem.allowed, OD_UNKNOWN);
	od_events_free(set);
}

static void
test_era_reserved_total(void **state)
{
	od_events *set = scan("RuntimeError: CUDA out of memory. Tried to "
	    "allocate 152.00 MiB (GPU 0; 31.72 GiB total capacity; 24.89 GiB "
	    "already allocated; 6.12 MiB free; 1.00 GiB allowed; 30.70 GiB "
	    "reserved in total by PyTorch) If reserved memory is >> allocated "
	    "memory try setting max_split_size_mb to avoid fragmentation.  See "
	    "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n",
	    NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->layout, OD_LAYOUT_RESERVED_TOTAL);
	assert_int_equal(ev->hint, OD_HINT_MAX_SPLIT);
	assert_int_equal(ev->mem.requested, MiB(152));
	assert_int_equal(ev->mem.free, 6417285);        /* 6.12 MiB */
	assert_int_equal(ev->mem.allowed, GiB(1));
	assert_int_equal(ev->mem.reserved, 32963873997LL);
	assert_int_equal(ev->mem.allocated, 26725433999LL);
	assert_int_equal(ev->mem.reserved_unallocated,
	    32963873997LL - 26725433999LL);
	/* The message runs to the end of the hint. */
	assert_non_null(strstr(ev->message, "PYTORCH_CUDA_ALLOC_CONF"));
	od_events_free(set);
}

static void
test_era_capacty_with_processes(void **state)
{
	od_events *set = scan("torch.cuda.OutOfMemoryError: CUDA out of memory. "
	    "Tried to allocate 138.00 MiB. GPU 0 has a total capacty of 15.90 "
	    "GiB of which 8.44 MiB is free. Process 1246069 has 577.00 MiB "
	    "memory in use. Including non-PyTorch memory, this process has "
	    "15.32 GiB memory in use. Of the allocated memory 14.12 GiB is "
	    "allocated by PyTorch, and 410.41 MiB is reserved by PyTorch but "
	    "unallocated. If reserved but unallocated memory is large try "
	    "setting max_split_size_mb to avoid fragmentation.  See "
	    "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n",
	    NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->layout, OD_LAYOUT_CAPACTY);
	assert_string_equal(ev->exception, "torch.cuda.OutOfMemoryError");
	assert_int_equal(ev->mem.nprocs, 1);
	assert_int_equal(ev->mem.procs[0].pid, 1246069);
	assert_int_equal(ev->mem.procs[0].bytes, MiB(577));
	assert_int_equal(ev->mem.process_in_use, 16449724744LL);
	assert_int_equal(ev->mem.allocated, 15161234555LL);
	assert_int_equal(ev->mem.reserved_unallocated, 430346076);
	assert_int_equal(ev->mem.reserved, 15161234555LL + 430346076);
	assert_int_equal(ev->mem.non_framework,
	    16449724744LL - 15161234555LL - 430346076);
	assert_int_equal(ev->hint, OD_HINT_MAX_SPLIT);
	od_events_free(set);
}

static void
test_era_new_allowed_pools(void **state)
{
	od_events *set = scan("torch.OutOfMemoryError: CUDA out of memory. Tried "
	    "to allocate 2.00 MiB. GPU 0 has a total capacity of 79.19 GiB of "
	    "which 2.07 GiB is free. Including non-PyTorch memory, this process "
	    "has 77.11 GiB memory in use. 75.23 GiB allowed; Of the allocated "
	    "memory 74.23 GiB is allocated by PyTorch, with 104.00 MiB "
	    "allocated in private pools (e.g., CUDA Graphs), and 943.54 MiB is "
	    "reserved by PyTorch but unallocated. If reserved but unallocated "
	    "memory is large try setting PYTORCH_CUDA_ALLOC_CONF="
	    "expandable_segments:True to avoid fragmentation.  See "
	    "documentation for Memory Management  (https://pytorch.org/docs/"
	    "stable/notes/cuda.html#environment-variables)\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->layout, OD_LAYOUT_CAPACITY);
	assert_int_equal(ev->hint, OD_HINT_EXPANDABLE);
	assert_int_equal(ev->mem.allowed, 80777597420LL);
	assert_int_equal(ev->mem.private_pools, MiB(104));
	assert_int_equal(ev->mem.reserved_unallocated, 989373399);
	assert_int_equal(ev->mem.requested, MiB(2));
	assert_int_equal(ev->mem.nprocs, 0);
	assert_int_equal(ev->message[ev->message_len - 1], ')');
	od_events_free(set);
}

static void
test_hip_and_xpu(void **state)
{
	od_events *set = scan("torch.OutOfMemoryError: HIP out of memory. Tried "
	    "to allocate 672.00 MiB. GPU 0 has a total capacity of 191.98 GiB of "
	    "which 0 bytes is free. Of the allocated memory 191.53 GiB is "
	    "allocated by PyTorch, and 520.00 KiB is reserved by PyTorch but "
	    "unallocated.\nXPU out of memory. Tried to allocate 8.00 GiB. GPU 0 "
	    "has a total capacity of 15.11 GiB. Of the allocated memory 0 bytes "
	    "is allocated by PyTorch, and 0 bytes is reserved by PyTorch but "
	    "unallocated. Please use `empty_cache` to release all unoccupied "
	    "cached memory.\n", NULL);
	od_event *ev;

	(void)state;
	assert_int_equal(od_events_count(set), 2);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->kind, OD_KIND_HIP);
	assert_int_equal(ev->mem.free, 0);
	assert_int_equal(ev->mem.reserved_unallocated, 532480);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->kind, OD_KIND_XPU);
	assert_int_equal(ev->line, 2);
	assert_int_equal(ev->mem.free, OD_UNKNOWN);
	assert_int_equal(ev->mem.allocated, 0);
	assert_int_equal(ev->mem.reserved, 0);
	assert_non_null(strstr(ev->message, "empty_cache"));
	od_events_free(set);
}

/*
 * torch_npu's message (torch_npu/csrc/core/npu/NPUCachingAllocator.cpp of
 * Ascend/pytorch, DeviceCachingAllocator::malloc): the current layout
 * with "current active" and "allowed", the early one ending in "cached)",
 * and neither device word after the other's head.
 */
static void
test_npu(void **state)
{
	od_events *set = scan("RuntimeError: NPU out of memory. Tried to "
	    "allocate 1.40 GiB (NPU 1; 32.00 GiB total capacity; 28.00 GiB "
	    "already allocated; 28.10 GiB current active; 741.02 MiB free; "
	    "30.00 GiB allowed; 29.50 GiB reserved in total by PyTorch) If "
	    "reserved memory is >> allocated memory try setting "
	    "max_split_size_mb to avoid fragmentation.\n"
	    "RuntimeError: NPU out of memory. Tried to allocate 20.00 MiB (NPU "
	    "0; 30.21 GiB total capacity; 29.10 GiB already allocated; 12.50 "
	    "MiB free; 300.00 MiB cached)\n"
	    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (NPU "
	    "0; 8.00 GiB total capacity; 7.00 GiB already allocated; 1.00 MiB "
	    "free; 7.50 GiB reserved in total by PyTorch)\n"
	    "RuntimeError: NPU out of memory. Tried to allocate 4.00 MiB (GPU "
	    "0; 8.00 GiB total capacity; 7.00 GiB already allocated; 1.00 MiB "
	    "free; 7.50 GiB reserved in total by PyTorch)\n", NULL);
	od_event *ev;

	(void)state;
	assert_int_equal(od_events_count(set), 4);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->kind, OD_KIND_NPU);
	assert_int_equal(ev->device, 1);
	assert_int_equal(ev->layout, OD_LAYOUT_RESERVED_TOTAL);
	assert_int_equal(ev->hint, OD_HINT_MAX_SPLIT);
	assert_int_equal(ev->mem.requested, 1503238554LL);
	assert_int_equal(ev->mem.total, 34359738368LL);
	assert_int_equal(ev->mem.allocated, 30064771072LL);
	assert_int_equal(ev->mem.free, 777015788LL);
	assert_int_equal(ev->mem.allowed, 32212254720LL);
	assert_int_equal(ev->mem.reserved, 31675383808LL);
	assert_int_equal(ev->mem.reserved_unallocated, 1610612736LL);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->kind, OD_KIND_NPU);
	assert_int_equal(ev->device, 0);
	assert_int_equal(ev->layout, OD_LAYOUT_CACHED);
	assert_int_equal(ev->mem.requested, MiB(20));
	assert_int_equal(ev->mem.free, 13107200);
	assert_int_equal(ev->mem.reserved_unallocated, MiB(300));
	assert_int_equal(ev->mem.reserved, 31245887078LL + MiB(300));
	/* The head alone is read where the parenthesis names the other
	 * device. */
	ev = od_events_get(set, 2);
	assert_int_equal(ev->kind, OD_KIND_CUDA_CACHING_ALLOCATOR);
	assert_int_equal(ev->layout, OD_LAYOUT_HEAD_ONLY);
	assert_int_equal(ev->mem.total, OD_UNKNOWN);
	ev = od_events_get(set, 3);
	assert_int_equal(ev->kind, OD_KIND_NPU);
	assert_int_equal(ev->layout, OD_LAYOUT_HEAD_ONLY);
	assert_int_equal(ev->mem.total, OD_UNKNOWN);
	od_events_free(set);
}

static void
test_async_block(void **state)
{
	od_events *set = scan("torch.OutOfMemoryError: Allocation on device 0 "
	    "would exceed allowed memory. (out of memory)\n"
	    "Currently allocated     : 28.69 GiB\n"
	    "Requested               : 7.29 GiB\n"
	    "Device limit            : 31.36 GiB\n"
	    "Free (according to CUDA): 29.94 MiB\n"
	    "PyTorch limit (set by user-supplied memory fraction)\n"
	    "                        : 17179869184.00 GiB\n"
	    "next line\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->layout, OD_LAYOUT_ASYNC);
	assert_int_equal(ev->line, 1);
	assert_int_equal(ev->end_line, 7);
	assert_int_equal(ev->mem.allocated, 30805652931LL);
	assert_int_equal(ev->mem.requested, 7827577897LL);
	assert_int_equal(ev->mem.total, 33672543601LL);
	assert_int_equal(ev->mem.free, 31394365);
	assert_int_equal(ev->mem.allowed, OD_UNKNOWN);   /* the sentinel */
	od_events_free(set);
}

static void
test_warning_and_nvml(void **state)
{
	od_events *set = scan("[W1107 10:22:33.123456 1234 CUDACachingAllocator"
	    ".cpp:3933] memory allocation failed with OOM on device 0 while "
	    "trying to allocate 580911104 bytes (free: 191430656, total: "
	    "42405855232)\nRuntimeError: NVML_SUCCESS == r INTERNAL ASSERT "
	    "FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":950, please "
	    "report a bug to PyTorch.\n", NULL);
	od_event *ev;

	(void)state;
	assert_int_equal(od_events_count(set), 2);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->layout, OD_LAYOUT_WARNING);
	assert_false(ev->fatal);
	assert_int_equal(ev->mem.requested, 580911104);
	assert_int_equal(ev->mem.free, 191430656);
	assert_int_equal(ev->mem.total, 42405855232LL);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->layout, OD_LAYOUT_NVML_ASSERT);
	assert_true(ev->fatal);
	assert_int_equal(ev->mem.requested, OD_UNKNOWN);
	od_events_free(set);
}

static void
test_prefixes_and_ranks(void **state)
{
	static const struct {
		const char *prefix;
		int rank;
		const char *ts;
	} cases[] = {
		{ "[rank3]: ", 3, "" },
		{ "[default5]:", 5, "" },
		{ "7: ", 7, "" },
		{ "[1,2]<stderr>:", 2, "" },
		{ "2024-05-01T12:00:00.123456789Z stderr F ", -1,
		  "2024-05-01T12:00:00.123456789Z" },
		{ "2024-05-01T12:00:00.123456789Z [rank1]: ", 1,
		  "2024-05-01T12:00:00.123456789Z" },
		{ "trainer-1  | ", -1, "" },
		{ "(VllmWorkerProcess pid=1234) ERROR 04-27 09:07:04 "
		  "[multiproc_worker_utils.py:242] ", -1, "" },
		{ "E0325 20:57:27.620000 2606 torch/distributed/run.py:123] ",
		  -1, "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512];
		od_events *set;
		od_event *ev;

		snprintf(text, sizeof text, "%storch.OutOfMemoryError: CUDA out "
		    "of memory. Tried to allocate 20.00 MiB. GPU 1 has a total "
		    "capacity of 23.65 GiB of which 3.06 MiB is free.\n",
		    cases[i].prefix);
		set = scan(text, NULL);
		ev = od_events_get(set, 0);
		assert_non_null(ev);
		assert_int_equal(ev->rank, cases[i].rank);
		assert_int_equal(ev->device, 1);
		assert_string_equal(ev->timestamp, cases[i].ts);
		od_events_free(set);
	}
}

/* A message wrapped at word boundaries, each line with its rank prefix. */
static void
test_wrapped_lines(void **state)
{
	od_events *set = scan("[rank0]: torch.cuda.OutOfMemoryError: CUDA out of "
	    "memory. Tried to allocate 138.00 MiB.\n"
	    "[rank0]: GPU 0 has a total capacty of 15.90 GiB of which 8.44 MiB "
	    "is free.\n"
	    "[rank0]: Process 1246069 has 577.00 MiB memory in use. Including "
	    "non-PyTorch memory,\n"
	    "[rank0]: this process has 15.32 GiB memory in use. Of the allocated "
	    "memory\n"
	    "[rank0]: 14.12 GiB is allocated by PyTorch, and 410.41 MiB is "
	    "reserved\n"
	    "[rank0]: by PyTorch but unallocated.\n"
	    "[rank0]: epoch 3\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->line, 1);
	assert_int_equal(ev->end_line, 6);
	assert_int_equal(ev->rank, 0);
	assert_int_equal(ev->mem.process_in_use, 16449724744LL);
	assert_int_equal(ev->mem.reserved_unallocated, 430346076);
	assert_null(strstr(ev->message, "[rank0]"));
	od_events_free(set);
}

static void
test_glued_repr_headless_truncated(void **state)
{
	od_events *set;
	od_event *ev;

	(void)state;
	set = scan("whyCUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; "
	    "4.00 GiB total capacity; 2.00 GiB already allocated; 0 bytes free;"
	    " 3.00 GiB reserved in total by PyTorch)\n", NULL);
	ev = od_events_get(set, 0);
	assert_non_null(ev);
	assert_int_equal(ev->mem.free, 0);
	od_events_free(set);

	set = scan("OutOfMemoryError('CUDA out of memory. Tried to allocate "
	    "20.00 MiB (GPU 0; 4.00 GiB total capacity; 2.00 GiB already "
	    "allocated\n", NULL);
	ev = od_events_get(set, 0);
	assert_non_null(ev);
	assert_string_equal(ev->exception, "OutOfMemoryError");
	assert_int_equal(ev->mem.allocated, GiB(2));
	assert_int_equal(ev->mem.free, OD_UNKNOWN);
	od_events_free(set);

	set = scan("Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total "
	    "capacity; 2.00 GiB already allocated; 1.00 MiB free; 3.00 GiB "
	    "reserved in total by PyTorch)\n", NULL);
	assert_int_equal(od_events_count(set), 1);
	od_events_free(set);

	set = scan("RuntimeError:CUDA out of memory. Tried to allocate 3725.29 "
	    "GiB. GPU\n", NULL);
	ev = od_events_get(set, 0);
	assert_non_null(ev);
	assert_int_equal(ev->layout, OD_LAYOUT_HEAD_ONLY);
	assert_int_equal(ev->mem.requested, 3999999679529LL);
	assert_int_equal(ev->mem.total, OD_UNKNOWN);
	od_events_free(set);
}

/* Lines that mention memory but are no OOM report. */
static void
test_near_misses(void **state)
{
	static const char *const texts[] = {
		"help: use --grad-ckpt to avoid CUDA out of memory errors\n",
		"Tried to allocate 384.00 MiB on shared pool.\n",
		"warning: PYTORCH_CUDA_ALLOC_CONF expandable_segments ignored\n",
		"|  0  NVIDIA A100  | 30731MiB / 32510MiB |\n",
		"the GPU has a total capacity of 80 GB\n",
	};
	/* Cut messages with a strong phrase: no recogniser's, but the
	 * fallback's low-confidence event (recog_fallback.c). */
	static const char *const cut[] = {
		"MPS backend out of memory (MPS allocated: 1.00 GiB)\n",
		"CUDA out of memory.\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		od_events *set = scan(texts[i], NULL);

		if (od_events_count(set) != 0)
			fail_msg("an event in: %s", texts[i]);
		od_events_free(set);
	}
	for (i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		od_events *set = scan(cut[i], NULL);

		assert_int_equal(od_events_count(set), 1);
		assert_int_equal(od_events_get(set, 0)->kind,
		    OD_KIND_UNRECOGNISED);
		od_events_free(set);
	}
}

/*
 * The fallback: a strong phrase that no recogniser reads is a low-
 * confidence `unrecognised` event with the phrase and no figures, fatal
 * only when the line says it failed; the quiet cases give nothing; a
 * recogniser's message wins, on the same line or in the lines after.
 */
static void
test_fallback(void **state)
{
	static const struct {
		const char *text;
		const char *phrase;     /* NULL: no event */
		bool fatal;
	} cases[] = {
		{ "RuntimeError: CUDA error(2): out of memory\n", "out of memory",
		  true },
		{ "E1201 10:00:00.1 12 alloc.cc:9] pool: Out of memory\n",
		  "Out of memory", true },
		{ "worker 3 reported OutOfMemory on gpu 1\n", "OutOfMemory",
		  false },
		{ "mmap of shard 3 failed: Cannot allocate memory\n",
		  "Cannot allocate memory", true },
		{ "fork: Cannot allocate memory\n", "Cannot allocate memory",
		  true },
		{ "ERROR: failed to allocate 2.00 GiB for the KV pool\n",
		  "failed to allocate", true },
		{ "status: RESOURCE_EXHAUSTED while compiling\n",
		  "RESOURCE_EXHAUSTED", false },
		/* The neighbours of the quiet cases below, still events: a
		 * pasted message in a code span keeps its "Error: ", a
		 * message quoted in lower case, a line that ends in ')'. */
		{ "I get `ArenaError: arena out of memory` at step 3\n",
		  "out of memory", true },
		{ "worker: \"out of memory\" from the pool (OOM)\n",
		  "out of memory", false },
		{ "alloc.cc:9] pool 2: OOM, out of memory (arena 7)\n",
		  "out of memory", false },
		/* A status with no other limit near it, one that names
		 * memory beside a quota, a message with its ": " that ends in
		 * ';', a message quoted alone on a notebook's line. */
		{ "status = StatusCode.RESOURCE_EXHAUSTED\n",
		  "RESOURCE_EXHAUSTED", false },
		{ "RESOURCE_EXHAUSTED: device memory; pool quota 8\n",
		  "RESOURCE_EXHAUSTED", false },
		{ "XlaRuntimeError: RESOURCE_EXHAUSTED: pool 3;\n",
		  "RESOURCE_EXHAUSTED", true },
		{ "  \"ArenaError: arena out of memory\\n\",\n",
		  "out of memory", true },
		/* Quiet: advice, recovery, source code, a search, a setting,
		 * an option, a phrase that needs more. */
		{ "INFO: if you run out of memory, lower --batch-size\n", NULL,
		  false },
		{ "out of memory on step 4, retrying with batch 8\n", NULL,
		  false },
		{ "    except torch.cuda.OutOfMemoryError:\n", NULL, false },
		{ "  # catch out of memory here\n", NULL, false },
		{ "+ grep -c \"out of memory\" run.log\n", NULL, false },
		{ "retry_on: [UNAVAILABLE, RESOURCE_EXHAUSTED]\n", NULL, false },
		{ "  --offload   move weights to CPU when out of memory\n", NULL,
		  false },
		{ "the pool logs Cannot allocate memory now and then\n", NULL,
		  false },
		{ "warning: failed to allocate a port\n", NULL, false },
		{ "The caller indicates that this is not a failure: out of "
		  "memory\n", NULL, false },
		/* Quiet: a generalisation, a title, a term named (quoted in
		 * title case, spelt out after OOM, a list's item, a short
		 * code span), a question. */
		{ "It typically means the container ran out of memory.\n", NULL,
		  false },
		{ "Fix out of memory for training with large batch size\n",
		  NULL, false },
		{ "When \"Out of Memory\" (OOM) errors occur, ask for more\n",
		  NULL, false },
		{ "The OOM (Out Of Memory) meaning is spelt out here\n", NULL,
		  false },
		{ "* runtime error, out of memory etc.\n", NULL, false },
		{ "keywords: exit code 137, OOM, out of memory, killed\n", NULL,
		  false },
		{ "when it finds `torch.OutOfMemoryError` in the log\n", NULL,
		  false },
		/* A class's full path alone in a longer span, and a phrase
		 * followed by what it usually means (English, Chinese 一般). */
		{ "To debug `tensorflow.python.framework.errors_impl."
		  "ResourceExhaustedError`, pass the option\n", NULL, false },
		{ "Out of memory usually means the batch is too large\n", NULL,
		  false },
		{ "OutOfMemory\xe4\xb8\x80\xe8\x88\xac\xe6\x98\xaf batch "
		  "size\n", NULL, false },
		{ "Does it go on after an out of memory error?\n", NULL,
		  false },
		/* A full-width question mark, an elided size. */
		{ "\xe5\x87\xba\xe7\x8e\xb0out of memory\xe6\x80\x8e\xe4\xb9\x88"
		  "\xe5\x8a\x9e\xef\xbc\x9f\n", NULL, false },
		{ "(`RuntimeError: failed to allocate ... bytes of tensor`)\n",
		  NULL, false },
		/* Quiet: gRPC's status for a message size or a quota, on its
		 * line or the next; source code (a name assigned, a name as
		 * an argument, a statement, an exception's documentation). */
		{ "status = StatusCode.RESOURCE_EXHAUSTED\n"
		  "details = \"Received message larger than max (9 vs. 4)\"\n",
		  NULL, false },
		{ "rpc error: code = ResourceExhausted desc = grpc: received "
		  "message larger than max (4977817 vs. 4194304)\n", NULL,
		  false },
		{ "429 RESOURCE_EXHAUSTED (e.g. check quota).\n", NULL, false },
		{ "  THPException_OutOfMemoryError = PyErr_NewException(\n",
		  NULL, false },
		{ "-    \"torch.cuda.OutOfMemoryError\",\n", NULL, false },
		{ "  type->tp_name = \"torch.OutOfMemoryError\";\n", NULL,
		  false },
		{ "    \"Exception raised when CUDA is out of memory\",\n", NULL,
		  false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_events *set = scan(cases[i].text, NULL);
		od_event *ev;

		if (cases[i].phrase == NULL) {
			if (od_events_count(set) != 0)
				fail_msg("an event in: %s", cases[i].text);
			od_events_free(set);
			continue;
		}
		if (od_events_count(set) != 1)
			fail_msg("no one event in: %s", cases[i].text);
		ev = od_events_get(set, 0);
		assert_int_equal(ev->kind, OD_KIND_UNRECOGNISED);
		assert_int_equal(ev->confidence, OD_CONF_LOW);
		assert_string_equal(ev->error, cases[i].phrase);
		assert_int_equal(ev->fatal, cases[i].fatal);
		assert_non_null(ev->verify_hint);
		/* No figures: none was read. */
		assert_true(ev->mem.requested == OD_UNKNOWN &&
		    ev->mem.total == OD_UNKNOWN && ev->mem.free == OD_UNKNOWN);
		od_events_free(set);
	}
}

/*
 * What would confirm a fallback event names the tool of the vendor its
 * line names, and no other vendor's; a line that names no device names
 * no vendor's tool.
 */
static void
test_fallback_vendor_hint(void **state)
{
	static const char *const tools[] = {
		"nvidia-smi", "rocm-smi", "xpu-smi", "vm_stat",
	};
	static const struct {
		const char *text;
		const char *tool;       /* NULL: none of the tools */
	} cases[] = {
		{ "RuntimeError: CUDA error(2): out of memory\n", "nvidia-smi" },
		{ "rocblas: hipMalloc failed: out of memory\n", "rocm-smi" },
		{ "RuntimeError: XPU error: out of memory\n", "xpu-smi" },
		{ "Error: MPS backend: out of memory somewhere\n", "vm_stat" },
		{ "RuntimeError: TPU backend: out of memory\n", NULL },
		{ "fatal: out of memory while packing\n", NULL },
		/* Inside a longer word: no vendor. */
		{ "relationship failed: out of memory\n", NULL },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_events *set = scan(cases[i].text, NULL);
		const od_event *ev;

		if (od_events_count(set) != 1)
			fail_msg("no one event in: %s", cases[i].text);
		ev = od_events_get(set, 0);
		assert_int_equal(ev->kind, OD_KIND_UNRECOGNISED);
		assert_non_null(ev->verify_hint);
		for (k = 0; k < sizeof tools / sizeof tools[0]; k++) {
			bool named = strstr(ev->verify_hint, tools[k]) != NULL;
			bool want = cases[i].tool != NULL &&
			    strcmp(cases[i].tool, tools[k]) == 0;

			if (named != want)
				fail_msg("%s %s in the hint of: %s", tools[k],
				    named ? "named" : "not named", cases[i].text);
		}
		od_events_free(set);
	}
}

/* The fallback gives way: to a recogniser's message later on its line,
 * in the lines after it, and to the event just before it. */
/*
 * The decision of decide.c: each text gives no event but a mention with
 * the reason named (first); its neighbour gives an event and no mention.
 */
static void
test_mentions(void **state)
{
	static const struct {
		const char *text;
		const char *reason;     /* NULL: an event, no mention */
	} cases[] = {
		/* Weak and quiet: the fallback's phrase in a sentence, and a
		 * program's line with it. */
		{ "The CI runs out of memory (4GB) because of parallel jobs.\n",
		  dc_reason_weak },
		{ "worker 3 reported OutOfMemory on gpu 1\n", NULL },
		/* A bare status inside a sentence, alone or in a code span,
		 * and a status after a key, in a column or a short line. */
		{ "Have an `OOMKilled` **event** tied to the pod and logs\n",
		  dc_reason_prose },
		{ "a container killed for OOM reports `reason: OOMKilled` and "
		  "exit code 137 in `ContainerStatus`.\n", dc_reason_prose },
		{ "After a couple of hours the container keeps dying with exit "
		  "code 137\n", dc_reason_prose },
		{ "    Reason:       OOMKilled\n", NULL },
		{ "job-x-dn0-0   0/1     OOMKilled   0          126m\n", NULL },
		{ "Process finished with exit code 137 (interrupted by signal 9: "
		  "SIGKILL)\n", NULL },
		{ "Process finished with exit code 137 (interrupted by signal "
		  "9:SIGKILL)\n", NULL },
		/* A CUDA status name, codes listed after a status, and CJK
		 * words around one. */
		{ "an over-budget cudaMalloc returns cudaErrorMemoryAllocation "
		  "and the process keeps running\n", dc_reason_prose },
		{ "1. The worker logs show exit code 137/143, but the pod "
		  "status has exit code 0.\n", dc_reason_prose },
		{ "\xe5\x8e\x9f\xe5\x9b\xa0 OOMKilled \xe8\xaf\xb4\xe6\x98"
		  "\x8e\xe5\xae\xb9\xe5\x99\xa8\xe8\xb6\x85\xe8\xbf\x87"
		  "\xe4\xba\x86\xe9\x99\x90\xe5\x88\xb6\xe3\x80\x82\n",
		  dc_reason_prose },
		/* A failure word only in the code span that quotes the phrase,
		 * and one outside it. */
		{ "- when it is nonzero, log something like `memory cgroup out "
		  "of memory: process killed`\n", dc_reason_weak },
		{ "Error: the task was killed, log says `memory cgroup out of "
		  "memory: process killed`\n", NULL },
		/* A link's title, and a message before a link. */
		{ "- [XLA failed to allocate request for memory on device]"
		  "(https://github.com/google/jax/discussions/21375)\n",
		  dc_reason_link },
		{ "CUDA error in func 'init' at line 245 : out of memory. "
		  "[log](https://example.com/log)\n", NULL },
		/* A line that a diff adds after another, and a kill with no
		 * diff before it. */
		{ "+.. code-block:: text\n+   ICONLoss(all_loss=tensor(1.0676))\n"
		  "+   Killed\n", dc_reason_diff },
		{ "epoch 3 loss 1.0676\nKilled\n", NULL },
		/* A status compared in source code, and one reported. */
		{ "      if (status == cudaErrorMemoryAllocation) { throw "
		  "rmm::out_of_memory{msg}; }\n", dc_reason_compared },
		{ "} else if (host_scalar_status == cudaErrorMemoryAllocation) "
		  "{\n", dc_reason_compared },
		/* A message under a comparison's label of a description, and
		 * under a report's heading. */
		{ "### Before\n```\nRuntimeError: CUDA out of memory. Tried to "
		  "allocate 20.00 MiB\n", dc_reason_example },
		{ "After\n```\nRuntimeError: CUDA out of memory. Tried to "
		  "allocate 20.00 MiB\n", dc_reason_example },
		{ "### Logs\n```\nRuntimeError: CUDA out of memory. Tried to "
		  "allocate 20.00 MiB\n", NULL },
		/* The fallback's phrase where it took it, past a glossary's
		 * that comes first on the line. */
		{ "The OOM (Out of Memory) killer logs the message 'Out of "
		  "memory: Kill process' and goes on.\n", dc_reason_weak },
		/* A shell's kill after the program's own other error, and after
		 * a memory error or a launcher's report. */
		{ "KeyError: 'model.layers.0.mlp.gate.weight'\n"
		  "Received sigquit from a child process.\n"
		  "./serve.sh: line 9: 48211 Killed                  python3 "
		  "-m server\n", dc_reason_explained },
		{ "numpy.core._exceptions.MemoryError: Unable to allocate "
		  "array\n./run.sh: line 9: 48211 Killed                  "
		  "python3 x.py\n", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_events *set = scan(cases[i].text, NULL);
		size_t want_events = cases[i].reason == NULL ? 1 : 0;

		if (od_events_count(set) < want_events ||
		    (cases[i].reason != NULL && od_events_count(set) != 0))
			fail_msg("%zu events in: %s", od_events_count(set),
			    cases[i].text);
		if (cases[i].reason == NULL) {
			if (od_events_mention_count(set) != 0)
				fail_msg("a mention (%s) in: %s",
				    od_events_mention_get(set, 0)->reason,
				    cases[i].text);
		} else {
			/* Two statuses of one sentence are two mentions. */
			if (od_events_mention_count(set) < 1)
				fail_msg("%zu mentions in: %s",
				    od_events_mention_count(set),
				    cases[i].text);
			assert_ptr_equal(od_events_mention_get(set, 0)->reason,
			    cases[i].reason);
			assert_int_equal(od_events_mention_get(set, 0)->line,
			    strchr(cases[i].text, '\n')[1] == '\0' ? 1 : 3);
		}
		od_events_free(set);
	}
}

/*
 * dc_mention's memo (decide.h): the answers with it are the answers
 * without it, over a log of short and long lines, some of them another
 * error of the program, asked at line starts mostly in order (now and
 * then the same line again, or an earlier one) with the text before each
 * cut at its whole length or at a few hundred bytes or so (a cut inside a
 * line, whose kept part the memo must not take for the whole line).
 */
static void
test_mention_memo(void **state)
{
	static const char *const lines[] = {
		"ValueError: not a memory error\n", "step 1\n", "\n",
		"KeyError: 'w'\n", "Killed\n", "  File \"x.py\", line 3\n",
		"MemoryError: out of memory\n", "x\r\n",
	};
	static const size_t cut[] = { SIZE_MAX, 90, 200, 700, 3000 };
	enum { NLINES = 3000 };
	char *text = malloc(NLINES * 320);
	size_t *start = malloc(NLINES * sizeof *start), len = 0, i, j;
	uint32_t r = 12345;
	dc_memo memo = { 0 };
	char killed[] = "Killed";
	od_event ev;
	int explained = 0;

	(void)state;
	assert_non_null(text);
	assert_non_null(start);
	for (i = 0; i < NLINES; i++) {
		start[i] = len;
		r = r * 1103515245u + 12345u;
		if ((r >> 16) % 7 == 0) {
			/* A long line: plain words. */
			size_t n = 40 + (r >> 8) % 250;

			memset(text + len, 'w', n);
			len += n;
			text[len++] = '\n';
		} else {
			/* Another error now and then, among many plain lines. */
			const char *l = (r >> 16) % 53 == 1 ? lines[0] :
			    (r >> 16) % 59 == 2 ? lines[3] :
			    lines[1 + (r >> 20) % 7];

			memcpy(text + len, l, strlen(l));
			len += strlen(l);
		}
	}
	od_event_init(&ev);
	ev.kind = OD_KIND_HOST_OOM_KILLER;
	ev.confidence = OD_CONF_LOW;
	ev.message = killed;
	ev.message_len = 6;
	for (i = 1, j = 0; i < NLINES; j++) {
		size_t at = start[i], n = (i + 1 < NLINES ? start[i + 1] : len) -
		    at, c, from;
		const char *with, *without;

		r = r * 1103515245u + 12345u;
		c = cut[(r >> 16) % 5];
		from = c == SIZE_MAX || c > at ? 0 : at - c;
		with = dc_mention(&ev, text + at, n, at, text + from, at - from,
		    &memo);
		without = dc_mention(&ev, text + at, n, at, text + from,
		    at - from, NULL);
		if (with != without)
			fail_msg("line %zu (ask %zu, %zu bytes before): %s with "
			    "the memo, %s without", i, j, at - from,
			    with != NULL ? with : "none",
			    without != NULL ? without : "none");
		explained += without != NULL;
		/* Mostly the next line, some the same, some back a few. */
		switch ((r >> 24) % 8) {
		case 0: break;
		case 1: i = i > 5 ? i - 5 : 1; break;
		case 2: i += 3; break;
		default: i++; break;
		}
	}
	/* Both answers came up. */
	assert_true(explained > 100 && (size_t)explained < j - 100);
	ev.message = NULL;
	od_event_clear(&ev);
	free(start);
	free(text);
}

/* The hits of ex_extract on text: each anchor's every place, in order,
 * at most max of them. */
static size_t
repeat_hits(const ex_ctx *x, const char *text, size_t len, size_t *hit,
    size_t max)
{
	const ex_anchor *a;
	size_t na, i, n = 0, k, j;

	a = ex_anchors(x, &na);
	for (i = 0; i < na; i++) {
		const char *p = text;

		while (n < max && (p = memmem(p, len - (size_t)(p - text),
		    a[i].text, strlen(a[i].text))) != NULL) {
			hit[n++] = (size_t)(p - text);
			p++;
		}
	}
	for (i = 1; i < n; i++)
		for (k = hit[i], j = i; j > 0 && hit[j - 1] > k; j--)
			hit[j] = hit[j - 1], hit[j - 1] = k;
	return n;
}

/*
 * A hit that repeats an earlier one that gave no event is not read again
 * (extract.c, ex_repeated): its answer must be what reading it gives.
 * Logs of one stretch of lines repeated, with one other line put in
 * among them, are read hit by hit twice, once in a window that lets the
 * extractor keep what it read (a generation) and once in one that does
 * not (generation 0: nothing is reused), and every answer compared.
 */
static void
test_repeat_same(void **state)
{
	/* The split literals are in parentheses: clang's
	 * -Wstring-concatenation takes one in a list of short ones for a
	 * lost comma. */
	static const char *const units[] = {
		"Killed Killed Killed Killed\n",
		"out of memory\nstep 3\n",
		("[rank1]: RuntimeError: CUDA out of memory. Tried to allocate "
		    "20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.49 GiB "
		    "already allocated; 8.31 MiB free; 6.61 GiB reserved in "
		    "total by PyTorch)\n"),
		("W0101 OOM when allocating tensor with shape[8,64] and type "
		    "float\n"),
	};
	static const char *const odd[] = {
		"", "Traceback (most recent call last):\n",
		"  File \"x.py\", line 3, in <module>\n",
		("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
		    "2.00 GiB.\n"),
		"Killed\n", "\n", "MemoryError\n",
		("on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
		    "GPU_0_bfc\n"),
	};
	static const int at[] = { 3, 20, 45 };
	enum { REPS = 60, HITS = 2048 };
	od_error err;
	ex_ctx *a = ex_new(true, ut_recognisers(), &err);
	ex_ctx *b = ex_new(true, ut_recognisers(), &err);
	char *text = malloc(64 * 1024);
	size_t *hit = malloc(HITS * sizeof *hit);
	size_t u, o, t, i, nhits, len, compared = 0;
	uint64_t gen = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(text);
	assert_non_null(hit);
	for (u = 0; u < sizeof units / sizeof units[0]; u++)
	for (o = 0; o < sizeof odd / sizeof odd[0]; o++)
	for (t = 0; t < sizeof at / sizeof at[0]; t++) {
		size_t consumed = 0;
		int r;

		len = 0;
		for (r = 0; r < REPS; r++) {
			if (r == at[t]) {
				memcpy(text + len, odd[o], strlen(odd[o]));
				len += strlen(odd[o]);
			}
			memcpy(text + len, units[u], strlen(units[u]));
			len += strlen(units[u]);
		}
		/* New bytes: a new generation. */
		gen++;
		nhits = repeat_hits(a, text, len, hit, HITS);
		for (i = 0; i < nhits; i++) {
			ex_window w = { .buf = text, .len = len, .hit = hit[i],
			    .line_start_known = true, .gen = gen };
			od_event ea, eb;
			ex_span sa, sb;
			bool oka, okb;

			if (hit[i] < consumed)
				continue;
			w.from = consumed;
			w.line_start = hit[i];
			while (w.line_start > 0 && text[w.line_start - 1] != '\n')
				w.line_start--;
			oka = ex_extract(a, &w, &ea, &sa);
			w.gen = 0;
			okb = ex_extract(b, &w, &eb, &sb);
			compared++;
			if (oka != okb)
				fail_msg("unit %zu, other line %zu after %d, hit "
				    "at %zu: %s with what was kept, %s without",
				    u, o, at[t], hit[i], oka ? "an event" :
				    "none", okb ? "an event" : "none");
			if (!oka)
				continue;
			assert_int_equal(ea.kind, eb.kind);
			assert_string_equal(ea.message, eb.message);
			assert_int_equal(sa.start, sb.start);
			assert_int_equal(sa.end, sb.end);
			consumed = sa.end;
			od_event_clear(&ea);
			od_event_clear(&eb);
		}
	}
	assert_true(compared > 1000);
	free(hit);
	free(text);
	ex_free(b);
	ex_free(a);
}

static void
test_fallback_gives_way(void **state)
{
	static const char *const texts[] = {
		"Error: out of memory; OOM when allocating tensor with shape"
		    "[8,64] and type float on /job:localhost/device:GPU:0 by "
		    "allocator GPU_0_bfc\n",
		"tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
		    "Graph execution error:\n\nOOM when allocating tensor with "
		    "shape[8,64] and type float on /job:localhost/device:GPU:0 by "
		    "allocator GPU_0_bfc\n",
		/* One element in two literals (parentheses: clang's
		 * -Wstring-concatenation asks for them). */
		("RuntimeError: CUDA error: out of memory\nwrapper: job failed: "
		    "out of memory\n"),
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		od_events *set = scan(texts[i], NULL);

		assert_int_equal(od_events_count(set), 1);
		assert_int_not_equal(od_events_get(set, 0)->kind,
		    OD_KIND_UNRECOGNISED);
		od_events_free(set);
	}
}

/*
 * Text inside text (lines.c): a traceback in a JSON string, a repr, a
 * Rust panic string and a notebook's HTML output are read as the message
 * they quote, with the log's own line number.
 */
static void
test_unescaped(void **state)
{
	static const struct {
		const char *text;
		od_kind kind;
		int64_t requested;
	} cases[] = {
		{ "x\n{\"level\": \"error\", \"msg\": \"Traceback (most recent "
		  "call last):\\n  File \\\"t.py\\\", line 3\\ntorch.OutOfMemoryError"
		  ": CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
		  "total capacity of 4.00 GiB of which 1.00 GiB is free.\\n\"}\n",
		  OD_KIND_CUDA_CACHING_ALLOCATOR, INT64_C(2147483648) },
		{ "x\nerr = OutOfMemoryError('CUDA out of memory. Tried to "
		  "allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.49 GiB "
		  "already allocated; 8.31 MiB free; 6.61 GiB reserved in total "
		  "by PyTorch)\\n')\n", OD_KIND_CUDA_CACHING_ALLOCATOR,
		  INT64_C(20971520) },
		{ "x\nthread 'main' panicked at 'called `Result::unwrap()` on an "
		  "`Err` value: \"\\\\n\\tCUDA error: out of memory\"', src/main.rs:5:9\n",
		  OD_KIND_CUDA_RAW, OD_UNKNOWN },
		{ "x\n<pre><span style=\"color:rgb(205,49,49)\">OutOfMemoryError"
		  "</span>: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
		  "has a total capacity of 4.00 GiB of which 1.00 GiB is free. "
		  "Of the allocated memory 2.50 GiB is allocated by PyTorch, and "
		  "10.00 MiB is reserved by PyTorch but unallocated. See "
		  "&quot;Memory Management&quot;</pre>\n",
		  OD_KIND_CUDA_CACHING_ALLOCATOR, INT64_C(2147483648) },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_events *set = scan(cases[i].text, NULL);
		od_event *ev = od_events_get(set, 0);

		if (od_events_count(set) != 1)
			fail_msg("no one event in case %zu", i);
		assert_int_equal(ev->kind, cases[i].kind);
		assert_int_equal(ev->line, 2);
		assert_true(ev->mem.requested == cases[i].requested);
		od_events_free(set);
	}
}

/* Bare '\r' splits lines but does not count; CRLF counts once. */
static void
test_line_numbers(void **state)
{
	od_input info;
	od_events *set = scan("a\r\nb\r 10%\r 20%\r 30%\nc\n"
	    "[rank2]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 "
	    "MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already allocated; "
	    "0 bytes free; 1.00 GiB reserved in total by PyTorch)\r\nz", &info);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->line, 4);
	assert_int_equal(ev->rank, 2);
	assert_int_equal(info.lines, 5);
	od_events_free(set);
}

/* Equal messages group; different ones from one rank stay apart (a rank
 * that fails twice; other ranks' figures join: test_per_rank). */
static void
test_grouping(void **state)
{
	const char *m = "RuntimeError: CUDA out of memory. Tried to allocate "
	    "2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already "
	    "allocated; 0 bytes free; 1.00 GiB reserved in total by PyTorch)\n";
	char text[2048];
	od_events *set;
	od_event *ev;

	(void)state;
	snprintf(text, sizeof text, "[rank1]: %s[rank0]: %s%s[rank1]: %s"
	    "[rank1]: RuntimeError: CUDA out of memory. Tried to allocate "
	    "4.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already "
	    "allocated; 0 bytes free; 1.00 GiB reserved in total by "
	    "PyTorch)\n", m, m, m, m);
	set = scan(text, NULL);
	assert_int_equal(od_events_count(set), 2);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->occurrences, 4);
	assert_int_equal(ev->rank, 1);
	assert_int_equal(ev->nranks, 2);
	assert_int_equal(ev->ranks[0], 0);
	assert_int_equal(ev->ranks[1], 1);
	assert_int_equal(ev->nper_rank, 0);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->rank, 1);
	assert_int_equal(ev->line, 5);
	od_events_free(set);
}

/*
 * Ranks that report one failure with their own figures are one event
 * with a per-rank table, the first report's figures its own: rank 2
 * (2 MiB requested, line 1), rank 0 (4 MiB, line 2), rank 0 again with
 * the same figures (a repeat), rank 3 echoing rank 2's message word for
 * word (line 4), rank 1 with a third request (line 5).  The same message
 * 2000 filler lines after the last one is another failure, which makes
 * the first one the run's first failure; torchrun's exitcode -9 report
 * after it is secondary.
 */
static void
test_per_rank(void **state)
{
	static const char fmt[] = "[rank%d]: RuntimeError: CUDA out of memory. "
	    "Tried to allocate %d.00 MiB (GPU %d; 4.00 GiB total capacity; "
	    "1.00 GiB already allocated; %d.00 MiB free; 1.00 GiB reserved in "
	    "total by PyTorch)\n";
	static const int rows[][4] = {
		{ 2, 2, 2, 10 }, { 0, 4, 0, 12 }, { 0, 4, 0, 12 }, { 2, 2, 2, 10 },
		{ 1, 8, 1, 9 },
	};
	size_t cap = 1 << 20, n = 0, k;
	char *text = malloc(cap);
	od_events *set;
	od_event *ev;

	(void)state;
	assert_non_null(text);
	for (k = 0; k < 5; k++)
		n += (size_t)snprintf(text + n, cap - n, fmt,
		    k == 3 ? 3 : rows[k][0], rows[k][1], rows[k][2], rows[k][3]);
	for (k = 0; k < 2000; k++)
		n += (size_t)snprintf(text + n, cap - n, "step %zu\n", k);
	n += (size_t)snprintf(text + n, cap - n, fmt, 4, 2, 0, 10);
	n += (size_t)snprintf(text + n, cap - n, "E1201 09:52:17.398000 30112 "
	    "torch/distributed/elastic/multiprocessing/api.py:869] failed "
	    "(exitcode: -9) local_rank: 1 (pid: 30121) of binary: "
	    "/usr/bin/python3\n");
	set = scan(text, NULL);
	free(text);
	assert_int_equal(od_events_count(set), 3);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->line, 1);
	assert_int_equal(ev->rank, 2);
	assert_int_equal(ev->mem.requested, MiB(2));
	assert_int_equal(ev->occurrences, 5);
	assert_int_equal(ev->nranks, 4);
	assert_true(ev->first_failure);
	assert_null(ev->secondary);
	assert_int_equal(ev->nper_rank, 4);
	assert_int_equal(ev->per_rank[0].rank, 2);
	assert_int_equal(ev->per_rank[0].line, 1);
	assert_int_equal(ev->per_rank[0].device, 2);
	assert_int_equal(ev->per_rank[0].free, MiB(10));
	assert_int_equal(ev->per_rank[1].rank, 0);
	assert_int_equal(ev->per_rank[1].line, 2);
	assert_int_equal(ev->per_rank[1].requested, MiB(4));
	assert_int_equal(ev->per_rank[1].free, MiB(12));
	assert_int_equal(ev->per_rank[2].rank, 3);
	assert_int_equal(ev->per_rank[2].line, 4);
	assert_int_equal(ev->per_rank[2].requested, MiB(2));
	assert_int_equal(ev->per_rank[3].rank, 1);
	assert_int_equal(ev->per_rank[3].line, 5);
	assert_int_equal(ev->per_rank[3].requested, MiB(8));
	assert_int_equal(ev->per_rank[3].device, 1);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->rank, 4);
	assert_int_equal(ev->line, 2006);
	assert_int_equal(ev->nper_rank, 0);
	assert_false(ev->first_failure);
	assert_null(ev->secondary);
	ev = od_events_get(set, 2);
	assert_int_equal(ev->kind, OD_KIND_HOST_OOM_KILLER);
	assert_non_null(ev->secondary);
	assert_false(ev->first_failure);
	od_events_free(set);
}

/*
 * 40 ranks, 300 lines apart, each with its own request: one event with
 * OD_RANK_ROWS_MAX rows and the other 8 counted; the window of
 * EV_PEER_LINES runs from the last rank that joined, not the last row
 * (rank 39 is 2400 lines after row 32's rank 31).
 */
static void
test_per_rank_many(void **state)
{
	size_t cap = 1 << 20, n = 0;
	char *text = malloc(cap);
	od_events *set;
	od_event *ev;
	int r, k;

	(void)state;
	assert_non_null(text);
	for (r = 0; r < 40; r++) {
		for (k = 0; k < 300; k++)
			n += (size_t)snprintf(text + n, cap - n, "step %d\n", k);
		n += (size_t)snprintf(text + n, cap - n, "[rank%d]: RuntimeError: "
		    "CUDA out of memory. Tried to allocate %d.00 MiB (GPU 0; "
		    "4.00 GiB total capacity; 1.00 GiB already allocated; 0 "
		    "bytes free; 1.00 GiB reserved in total by PyTorch)\n", r,
		    r + 1);
	}
	set = scan(text, NULL);
	free(text);
	assert_int_equal(od_events_count(set), 1);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->nranks, 40);
	assert_int_equal(ev->nper_rank, OD_RANK_ROWS_MAX);
	assert_int_equal(ev->per_rank_dropped, 40 - OD_RANK_ROWS_MAX);
	assert_int_equal(ev->per_rank[31].rank, 31);
	assert_int_equal(ev->per_rank[31].requested, MiB(32));
	assert_int_equal(ev->occurrences, 40);
	od_events_free(set);
}

/*
 * A log per rank: rank 1's report in the second input, at its line 1,
 * joins rank 0's of the first input (line 3) whatever the lines; a
 * second report of rank 1 with other figures is a failure of its own.
 */
static void
test_per_rank_inputs(void **state)
{
	static const char a[] = "x\ny\n[rank0]: RuntimeError: CUDA out of "
	    "memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total "
	    "capacity; 1.00 GiB already allocated; 10.00 MiB free; 1.00 GiB "
	    "reserved in total by PyTorch)\n";
	static const char b[] = "[rank1]: RuntimeError: CUDA out of memory. "
	    "Tried to allocate 6.00 MiB (GPU 1; 4.00 GiB total capacity; "
	    "1.00 GiB already allocated; 3.00 MiB free; 1.00 GiB reserved in "
	    "total by PyTorch)\n[rank1]: RuntimeError: CUDA out of memory. "
	    "Tried to allocate 8.00 MiB (GPU 1; 4.00 GiB total capacity; "
	    "1.00 GiB already allocated; 3.00 MiB free; 1.00 GiB reserved in "
	    "total by PyTorch)\n";
	od_events *set = od_events_new();
	od_input info;
	od_event *ev;

	(void)state;
	od_scan_buffer(sc, a, strlen(a), 0, &info, set);
	od_scan_buffer(sc, b, strlen(b), 1, &info, set);
	assert_int_equal(od_events_count(set), 2);
	ev = od_events_get(set, 0);
	assert_int_equal(ev->nper_rank, 2);
	assert_int_equal(ev->per_rank[0].input, 0);
	assert_int_equal(ev->per_rank[0].line, 3);
	assert_int_equal(ev->per_rank[1].rank, 1);
	assert_int_equal(ev->per_rank[1].input, 1);
	assert_int_equal(ev->per_rank[1].line, 1);
	assert_int_equal(ev->per_rank[1].requested, MiB(6));
	assert_int_equal(ev->per_rank[1].free, MiB(3));
	assert_true(ev->first_failure);
	ev = od_events_get(set, 1);
	assert_int_equal(ev->input, 1);
	assert_int_equal(ev->line, 2);
	assert_int_equal(ev->mem.requested, MiB(8));
	assert_int_equal(ev->nper_rank, 0);
	od_events_free(set);
}

/* Several messages on one line (a log collapsed onto one line), with NUL
 * bytes and invalid UTF-8 around them. */
static void
test_one_line_log(void **state)
{
	static const char text[] = "step 1\0\xff\xfe loss 2 RuntimeError: CUDA "
	    "out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total "
	    "capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB "
	    "reserved in total by PyTorch) step 2 RuntimeError: CUDA out of "
	    "memory. Tried to allocate 8.00 MiB (GPU 1; 4.00 GiB total "
	    "capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB "
	    "reserved in total by PyTorch)";
	od_events *set = od_events_new();
	od_input info;

	(void)state;
	od_scan_buffer(sc, text, sizeof text - 1, 0, &info, set);
	assert_int_equal(od_events_count(set), 2);
	assert_int_equal(od_events_get(set, 1)->device, 1);
	assert_int_equal(od_events_get(set, 1)->line, 1);
	od_events_free(set);
}

/* vLLM's worker and logger prefixes on every line of a wrapped message. */
static void
test_vllm_prefixes(void **state)
{
	od_events *set = scan("(VllmWorkerProcess pid=1234) ERROR 04-27 09:07:04 "
	    "[worker.py:12] torch.OutOfMemoryError: CUDA out of memory. Tried to "
	    "allocate 1.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
	    "300.00 MiB is free.\n(VllmWorkerProcess pid=1234) ERROR 04-27 "
	    "09:07:04 [worker.py:12] Including non-PyTorch memory, this process "
	    "has 78.80 GiB memory in use. Of the allocated memory 77.00 GiB is "
	    "allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but "
	    "unallocated.\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->end_line, 2);
	assert_int_equal(ev->mem.allocated, 82678120448LL);
	assert_int_equal(ev->mem.process_in_use, 84610855731LL);
	od_events_free(set);
}

/* A console's hard wrap at 80 columns cuts words and numbers in two. */
static void
test_console_wrap(void **state)
{
	od_events *set = scan("RuntimeError: CUDA out of memory. Tried to allocat"
	    "e 20.00 MiB (GPU 0; 4.00 GiB t\n"
	    "otal capacity; 3.21 GiB already allocated; 1.63 MiB free; 3.30 GiB "
	    "reserved in t\n"
	    "otal by PyTorch)\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(ev->mem.total, 4294967296LL);
	assert_int_equal(ev->mem.free, 1709179);
	assert_int_equal(ev->mem.reserved, 3543348019LL);
	assert_int_equal(ev->end_line, 3);
	od_events_free(set);
}

/* An OOM the program caught and recovered from is no failure. */
static void
test_recovered(void **state)
{
	od_events *set = scan("| WARNING: ran out of memory with exception: CUDA "
	    "out of memory. Tried to allocate 1.53 GiB (GPU 0; 10.92 GiB total "
	    "capacity; 8.17 GiB already allocated; 1.23 GiB free; 561.63 MiB "
	    "cached)\n| WARNING: attempting to recover from OOM in "
	    "forward/backward pass\n", NULL);
	od_event *ev = od_events_get(set, 0);

	(void)state;
	assert_non_null(ev);
	assert_false(ev->fatal);
	od_events_free(set);
}

/* An rx_name_fn: appends "name=text;" to the names seen. */
static void
names_seen(void *arg, const char *name, const char *p, size_t n)
{
	char *out = arg;
	size_t len = strlen(out);

	snprintf(out + len, 64 - len, "%s=%.*s;", name, (int)n, p);
}

/* The group readers: absent groups, bounds, names in name order. */
static void
test_regex_readers(void **state)
{
	static const char text[] = "pid=1234 name=python digits=1234567890123456789";
	od_error err;
	rx_code *re = rx_compile("pid=(?<pid>\\d+) (?:x=(?<x>\\d+))?name=(?<name>"
	    "\\w+) digits=(\\d+)", 0, true, "test", 1, &err);
	rx_match *m = rx_match_new(&err);
	char buf[4], seen[64] = "";
	size_t s, n;

	(void)state;
	assert_non_null(re);
	assert_non_null(m);
	assert_true(rx_find(m, re, text, strlen(text), 0));
	assert_int_equal(rx_start(m), 0);
	assert_int_equal(rx_end(m), strlen(text));
	assert_int_equal(rx_int(m, text, 1, -1), 1234);
	/* Absent, out of range, too many digits: the default. */
	assert_false(rx_group(m, 2, &s, &n));
	assert_int_equal(rx_int(m, text, 2, -7), -7);
	assert_int_equal(rx_int(m, text, 40, -7), -7);
	assert_int_equal(rx_int(m, text, 4, -7), -7);
	/* A bounded copy is cut to fit; an absent group leaves dst alone. */
	assert_true(rx_copy(m, text, 3, buf, sizeof buf));
	assert_string_equal(buf, "pyt");
	assert_false(rx_copy(m, text, 2, buf, sizeof buf));
	assert_string_equal(buf, "pyt");
	rx_copy_text(buf, sizeof buf, "ab", 2);
	assert_string_equal(buf, "ab");
	/* Only the named groups that took part, sorted by name. */
	rx_names(m, re, text, names_seen, seen);
	assert_string_equal(seen, "name=python;pid=1234;");
	/* Anchored: no match from an offset where the pattern does not
	 * start; found from there when searched. */
	assert_false(rx_at(m, re, text, strlen(text), 1));
	rx_code_free(re);
	rx_match_free(m);
}

/*
 * An anchored match is anchored whichever code runs it: the interpreter's
 * for the first matches, the anchored machine code that regex.c makes
 * after some hundred (RX_ANCHORED_AFTER); 1000 rounds go past that.
 */
static void
test_regex_anchored(void **state)
{
	static const char text[] = "..needle";
	od_error err;
	rx_code *re = rx_compile("ne+dle", 0, true, "test", 1, &err);
	rx_match *m = rx_match_new(&err);
	int i;

	(void)state;
	assert_non_null(re);
	assert_non_null(m);
	for (i = 0; i < 1000; i++) {
		assert_false(rx_at(m, re, text, strlen(text), 0));
		assert_false(rx_at(m, re, text, strlen(text), 1));
		assert_true(rx_at(m, re, text, strlen(text), 2));
		assert_int_equal(rx_start(m), 2);
		assert_int_equal(rx_end(m), 8);
		/* A start past the end is no match, as pcre2_match has it. */
		assert_false(rx_at(m, re, text, strlen(text), 9));
	}
	rx_code_free(re);
	rx_match_free(m);
}

/* A search with an offset limit stops at it, whatever follows. */
static void
test_regex_offset_limit(void **state)
{
	static const char text[] = "......................needle";
	od_error err;
	rx_code *re = rx_compile("needle", RX_OFFSET_LIMIT, true, "test", 1,
	    &err);
	rx_code *plain = rx_compile("needle", 0, true, "test", 2, &err);
	rx_match *m = rx_match_new(&err);

	(void)state;
	assert_non_null(re);
	assert_non_null(plain);
	assert_non_null(m);
	assert_false(rx_find_upto(m, re, text, strlen(text), 0, 10));
	assert_true(rx_find_upto(m, re, text, strlen(text), 0, 22));
	assert_int_equal(rx_start(m), 22);
	/* Without RX_OFFSET_LIMIT a limited search is refused. */
	assert_false(rx_find_upto(m, plain, text, strlen(text), 0, 22));
	assert_true(rx_find(m, plain, text, strlen(text), 0));
	rx_code_free(re);
	rx_code_free(plain);
	rx_match_free(m);
}

/* rg_cover_memo of the hit at 0 in t, numbered gen, checked against
 * rg_cover's answer. */
static bool
ut_cover_prefix(rx_match *m, rx_code *re, rg_memo *c, rg_memo *pre,
    rg_prefix *px, uint64_t gen, const char *t, size_t *at)
{
	rg_text tx = { .gen = gen, .longer = true };
	size_t want = SIZE_MAX;
	bool limited, got, plain;

	got = rg_cover_memo(m, re, &tx, c, pre, px, t, strlen(t), 0, NULL, at,
	    &limited);
	plain = rg_cover(m, re, t, strlen(t), 0, NULL, &want);
	assert_int_equal(got, plain);
	if (got)
		assert_int_equal(*at, want);
	return got;
}

/*
 * A pattern's answers kept across texts by their first bytes
 * (rg_prefix): a text that begins with the same bytes takes the kept
 * answer; one whose bytes differ there, or whose match needs bytes past
 * them, gets its own, the answer rg_cover gives it.
 */
static void
test_cover_prefix(void **state)
{
	char a[200], b[200], d[200];
	od_error err;
	rx_code *re = rx_compile("ab(?:c|d{80}x)", RX_OFFSET_LIMIT, true,
	    "test", 1, &err);
	rx_match *m = rx_match_new(&err);
	rg_memo c, pre = { 0 };
	rg_prefix px;
	uint64_t gen = 0;
	size_t at, i;
	int kept;

	(void)state;
	assert_non_null(re);
	assert_non_null(m);
	rg_prefix_init(&px);
	/* A match that runs past the first bytes (a b, 80 d, x), and a text
	 * with the same first bytes whose d's end in no x. */
	memset(a, '.', sizeof a);
	memcpy(a, "ab", 2);
	memset(a + 2, 'd', 80);
	a[82] = 'x';
	a[sizeof a - 1] = '\0';
	memcpy(b, a, sizeof b);
	b[82] = 'y';
	/* The partial mode is made at the pattern's 4096th search. */
	for (i = 0; i < 4200; i++) {
		memset(&c, 0, sizeof c);
		assert_true(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, a,
		    &at));
		assert_int_equal(at, 0);
	}
	/* Afresh: those searches missed in a row (RG_PREFIX_MISSES). */
	rg_prefix_init(&px);
	memset(&c, 0, sizeof c);
	assert_true(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, a, &at));
	memset(&c, 0, sizeof c);
	assert_false(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, b, &at));
	/* A match within the first bytes is kept, and taken by a text that
	 * differs only after them, not by one that differs in them. */
	memcpy(d, b, sizeof d);
	d[2] = 'c';
	memset(&c, 0, sizeof c);
	assert_true(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, d, &at));
	for (i = 0, kept = 0; i < RG_PREFIX_WAYS; i++)
		kept += px.e[i].r == 1;
	assert_int_equal(kept, 1);
	d[150] = 'z';
	memset(&c, 0, sizeof c);
	assert_true(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, d, &at));
	d[2] = 'e';
	memset(&c, 0, sizeof c);
	assert_false(ut_cover_prefix(m, re, &c, &pre, &px, ++gen, d, &at));
	rx_code_free(re);
	rx_match_free(m);
}

/*
 * The match limit: the first branch backtracks through every split of
 * the a's before it fails, so that the second one, which matches, is
 * reached only when there are few of them.  With a limit of 10^8 steps
 * the long subject would match too.
 */
static void
test_regex_limits(void **state)
{
	char text[32];          /* 30 a's and a b */
	od_error err;
	rx_match *m = rx_match_new(&err);
	int jit;

	(void)state;
	assert_non_null(m);
	memset(text, 'a', sizeof text - 2);
	text[sizeof text - 2] = 'b';
	text[sizeof text - 1] = '\0';
	for (jit = 0; jit <= 1; jit++) {
		rx_code *re = rx_compile("^(?:a|aa)+c|^a+b", 0, jit != 0, "test",
		    1, &err);

		assert_non_null(re);
		assert_true(rx_find(m, re, text + sizeof text - 12, 11, 0));
		assert_false(rx_find(m, re, text, strlen(text), 0));
		rx_code_free(re);
	}
	rx_match_free(m);
}

/* A pattern that does not compile, or has more groups than a match
 * holds, is an error naming its table and row. */
static void
test_regex_errors(void **state)
{
	char many[RX_PAIRS * 3 + 1];
	od_error err;
	int i;

	(void)state;
	memset(&err, 0, sizeof err);
	assert_null(rx_compile("(unclosed", 0, false, "table.c", 7, &err));
	assert_string_equal(err.file, "table.c");
	assert_int_equal(err.line, 7);
	assert_non_null(strstr(err.msg, "internal pattern"));
	for (i = 0; i < RX_PAIRS; i++)
		memcpy(many + 3 * i, "(a)", 3);
	many[3 * RX_PAIRS] = '\0';
	memset(&err, 0, sizeof err);
	assert_null(rx_compile(many, 0, false, "table.c", 8, &err));
	assert_int_equal(err.line, 8);
	assert_non_null(strstr(err.msg, "groups"));
}

/* Both recognisers through the interface: anchors, find, fill, skip. */
static void
test_recognisers(void **state)
{
	static const char pt_text[] = "torch.OutOfMemoryError: CUDA out of "
	    "memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of "
	    "4.00 GiB of which 0 bytes is free.";
	static const char sk_text[] = "RuntimeError: CUDA error: out of memory";
	const ex_recogniser *const recs[] = { &pt_recogniser, &sk_recogniser };
	const char *const texts[] = { pt_text, sk_text };
	const char *const hits[] = { "Tried to allocate", "CUDA error" };
	size_t r;

	(void)state;
	for (r = 0; r < 2; r++) {
		const ex_recogniser *rec = recs[r];
		const char *t = texts[r];
		size_t tlen = strlen(t), ht = (size_t)(strstr(t, hits[r]) - t);
		size_t n = 0, ms, me = 0, ms2;
		od_error err;
		od_event ev;
		void *self = rec->create(true, ut_recognisers(), &err);
		rg_skip skip;
		int c, c2;

		assert_non_null(self);
		assert_non_null(rec->anchors(self, &n));
		assert_true(n > 0);
		c = rec->find(self, t, tlen, ht, NULL, &ms);
		assert_true(c >= 0 && c < RG_CANDIDATES_MAX);
		assert_true(ms <= ht);
		od_event_init(&ev);
		assert_true(rec->fill(self, c, t, tlen, ms, &me, &ev));
		assert_true(me > ht && me <= tlen);
		if (r == 0) {
			assert_int_equal(ev.kind, OD_KIND_CUDA_CACHING_ALLOCATOR);
			assert_int_equal(ev.mem.requested, MiB(2));
			assert_int_equal(ev.mem.total, GiB(4));
			assert_int_equal(ev.layout, OD_LAYOUT_CAPACITY);
		} else {
			assert_int_equal(ev.kind, OD_KIND_CUDA_RAW);
			assert_int_equal(ev.layout, OD_LAYOUT_OTHER_STACK);
		}
		od_event_clear(&ev);
		/* Without that candidate: another one, or none. */
		memset(&skip, 0, sizeof skip);
		skip.w[c / 64] |= UINT64_C(1) << (c % 64);
		c2 = rec->find(self, t, tlen, ht, &skip, &ms2);
		assert_int_not_equal(c2, c);
		/* A text without the message: nothing covers the hit. */
		assert_int_equal(rec->find(self, "nothing to see here", 19, 5, NULL,
		    &ms2), -1);
		rec->destroy(self);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_era_cached),
		cmocka_unit_test(test_era_reserved_total),
		cmocka_unit_test(test_era_capacty_with_processes),
		cmocka_unit_test(test_era_new_allowed_pools),
		cmocka_unit_test(test_hip_and_xpu),
		cmocka_unit_test(test_npu),
		cmocka_unit_test(test_async_block),
		cmocka_unit_test(test_warning_and_nvml),
		cmocka_unit_test(test_prefixes_and_ranks),
		cmocka_unit_test(test_wrapped_lines),
		cmocka_unit_test(test_glued_repr_headless_truncated),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_fallback_vendor_hint),
		cmocka_unit_test(test_fallback_gives_way),
		cmocka_unit_test(test_mentions),
		cmocka_unit_test(test_unescaped),
		cmocka_unit_test(test_line_numbers),
		cmocka_unit_test(test_grouping),
		cmocka_unit_test(test_per_rank),
		cmocka_unit_test(test_per_rank_inputs),
		cmocka_unit_test(test_per_rank_many),
		cmocka_unit_test(test_one_line_log),
		cmocka_unit_test(test_console_wrap),
		cmocka_unit_test(test_vllm_prefixes),
		cmocka_unit_test(test_recovered),
		cmocka_unit_test(test_regex_readers),
		cmocka_unit_test(test_regex_offset_limit),
		cmocka_unit_test(test_regex_anchored),
		cmocka_unit_test(test_regex_limits),
		cmocka_unit_test(test_cover_prefix),
		cmocka_unit_test(test_regex_errors),
		cmocka_unit_test(test_recognisers),
		cmocka_unit_test(test_mention_memo),
		cmocka_unit_test(test_repeat_same),
	};

	return cmocka_run_group_tests_name("extract", tests, setup, teardown);
}
