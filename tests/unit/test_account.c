/*
 * test_account.c: the memory account of an event (src/lib/account.c) for
 * each era of PyTorch's message, read from the message as the scanner
 * reads it: which parts are printed, derived or unknown, that the known
 * parts add up to the capacity, that this process's own "Process N" line
 * is never another's, that a "0 bytes in use" figure is set aside, and
 * the shortfall.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "account.h"
#include "ut_recognisers.h"

#define MiB (INT64_C(1) << 20)
#define GiB (INT64_C(1) << 30)

/* The account of the one event of text. */
static void
account(const char *text, od_account *a)
{
	od_error err;
	od_scanner *sc = od_scanner_new(true, ut_recognisers(), &err);
	od_events *set = od_events_new();
	od_input in = { 0 };

	od_scan_buffer(sc, text, strlen(text), 0, &in, set);
	assert_int_equal(od_events_count(set), 1);
	od_account_of(od_events_get(set, 0), a);
	od_events_free(set);
	od_scanner_free(sc);
}

/* The known parts add up to the capacity. */
static void
adds_up(const od_account *a)
{
	int64_t sum = 0;
	int k;

	assert_true(a->part[OD_PART_UNACCOUNTED].known);
	for (k = 0; k < OD_PART_COUNT; k++)
		if (a->part[k].known)
			sum += a->part[k].bytes;
	assert_int_equal(sum, a->total);
}

/* 1.0-1.3: "cached" is reserved - allocated; no process lines. */
static void
test_cached(void **state)
{
	od_account a;

	(void)state;
	account("RuntimeError: CUDA out of memory. Tried to allocate 16.00 GiB "
	    "(GPU 0; 11.93 GiB total capacity; 4.00 GiB already allocated; "
	    "7.33 GiB free; 179.00 KiB cached)\n", &a);
	assert_true(a.valid);
	assert_int_equal(a.part[OD_PART_ALLOCATED].bytes, 4 * GiB);
	assert_false(a.part[OD_PART_ALLOCATED].derived);
	assert_int_equal(a.part[OD_PART_RESERVED_UNALLOCATED].bytes,
	    179 * 1024);
	assert_false(a.part[OD_PART_RESERVED_UNALLOCATED].derived);
	assert_false(a.part[OD_PART_OTHER_PROCESSES].known);
	assert_false(a.part[OD_PART_NON_FRAMEWORK].known);
	adds_up(&a);
	/* 16 GiB asked with 7.33 GiB free. */
	assert_int_equal(a.shortfall, 16 * GiB - (int64_t)(7.33 * GiB + 0.5));
}

/* 1.4-2.0: reserved in total; the unallocated part is derived; a request
 * smaller than the free figure lacked all of itself. */
static void
test_reserved_total(void **state)
{
	od_account a;

	(void)state;
	account("RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB "
	    "(GPU 0; 3.79 GiB total capacity; 655.00 MiB already allocated; "
	    "6.00 MiB free; 666.00 MiB reserved in total by PyTorch)\n", &a);
	assert_int_equal(a.part[OD_PART_RESERVED_UNALLOCATED].bytes, 11 * MiB);
	assert_true(a.part[OD_PART_RESERVED_UNALLOCATED].derived);
	assert_false(a.part[OD_PART_OTHER_PROCESSES].known);
	adds_up(&a);
	assert_int_equal(a.shortfall, 2 * MiB);
	assert_true(a.nnotes >= 1);
}

/* 2.x with a "this process" clause and another process. */
static void
test_this_process(void **state)
{
	od_account a;

	(void)state;
	account("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 "
	    "GiB is free. Process 48213 has 59.20 GiB memory in use. Including "
	    "non-PyTorch memory, this process has 18.40 GiB memory in use. Of "
	    "the allocated memory 17.50 GiB is allocated by PyTorch, and 120.00 "
	    "MiB is reserved by PyTorch but unallocated.\n", &a);
	assert_int_equal(a.self, -1);
	assert_int_equal(a.others, 1);
	assert_int_equal(a.part[OD_PART_OTHER_PROCESSES].bytes,
	    (int64_t)(59.20 * GiB + 0.5));
	assert_false(a.part[OD_PART_OTHER_PROCESSES].derived);
	assert_true(a.part[OD_PART_NON_FRAMEWORK].derived);
	assert_int_equal(a.part[OD_PART_NON_FRAMEWORK].bytes,
	    (int64_t)(18.40 * GiB + 0.5) - (int64_t)(17.50 * GiB + 0.5) -
	    120 * MiB);
	adds_up(&a);
}

/* A container: the only "Process N" line is this process, not another. */
static void
test_own_line(void **state)
{
	od_account a;

	(void)state;
	account("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 220.00 "
	    "MiB is free. Process 3012 has 78.89 GiB memory in use. Of the "
	    "allocated memory 76.20 GiB is allocated by PyTorch, and 1.80 GiB "
	    "is reserved by PyTorch but unallocated.\n", &a);
	assert_int_equal(a.self, 0);
	assert_int_equal(a.others, 0);
	assert_int_equal(a.part[OD_PART_OTHER_PROCESSES].bytes, 0);
	assert_int_equal(a.self_bytes, (int64_t)(78.89 * GiB + 0.5));
	adds_up(&a);
}

/* A line of exactly this process's figure is this process listed again. */
static void
test_listed_twice(void **state)
{
	od_account a;

	(void)state;
	account("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 "
	    "GiB is free. Process 7 has 78.10 GiB memory in use. Including "
	    "non-PyTorch memory, this process has 78.10 GiB memory in use. Of "
	    "the allocated memory 76.88 GiB is allocated by PyTorch, and 210.00 "
	    "MiB is reserved by PyTorch but unallocated.\n", &a);
	assert_int_equal(a.self, 0);
	assert_int_equal(a.part[OD_PART_OTHER_PROCESSES].bytes, 0);
	adds_up(&a);
}

/* "0 bytes in use" while PyTorch holds 48 GiB is not a measurement. */
static void
test_zero_bytes(void **state)
{
	od_account a;

	(void)state;
	account("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "1.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 512.00 "
	    "MiB is free. Including non-PyTorch memory, this process has 0 "
	    "bytes memory in use. Of the allocated memory 48.00 GiB is "
	    "allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but "
	    "unallocated.\n", &a);
	assert_int_equal(a.self_bytes, OD_UNKNOWN);
	assert_false(a.part[OD_PART_NON_FRAMEWORK].known);
	assert_true(a.part[OD_PART_OTHER_PROCESSES].known);
	assert_true(a.nnotes >= 1);
	/* The 28 GiB no figure explains are unaccounted, not this process's. */
	adds_up(&a);
	assert_int_equal(a.shortfall, 512 * MiB);
}

/* Two process lines and no "this process": which is this one is not
 * known when both could be, and then neither is the others' share. */
static void
test_two_candidates(void **state)
{
	od_account a;

	(void)state;
	account("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 "
	    "GiB is free. Process 1 has 39.00 GiB memory in use. Process 2 has "
	    "39.00 GiB memory in use. Of the allocated memory 37.50 GiB is "
	    "allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but "
	    "unallocated.\n", &a);
	assert_int_equal(a.self, -1);
	assert_false(a.part[OD_PART_OTHER_PROCESSES].known);
	assert_false(a.part[OD_PART_NON_FRAMEWORK].known);
	adds_up(&a);
}

/* No capacity, no account. */
static void
test_no_capacity(void **state)
{
	od_account a;

	(void)state;
	account("RuntimeError: CUDA error: out of memory\n", &a);
	assert_false(a.valid);
	assert_int_equal(a.shortfall, OD_UNKNOWN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached),
		cmocka_unit_test(test_reserved_total),
		cmocka_unit_test(test_this_process),
		cmocka_unit_test(test_own_line),
		cmocka_unit_test(test_listed_twice),
		cmocka_unit_test(test_zero_bytes),
		cmocka_unit_test(test_two_candidates),
		cmocka_unit_test(test_no_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
