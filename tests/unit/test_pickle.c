/*
 * test_pickle.c: the restricted pickle reader (src/lib/pickle.c).  The
 * accepted inputs are what CPython's pickle.dumps(VALUE, protocol=P)
 * writes for P = 2 to 5 (Python 3.11; VALUE below), compared with the JSON
 * the reader should build; the refused ones are hand-made, one opcode at a
 * time, and the error must name the offset and the opcode.  (A literal
 * is split where a hex escape would run into a hex digit.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "pickle.h"

/*
 * VALUE = {"ints": [0, 1, 255, 256, 65535, 65536, -1, -129, 2**31-1,
 *   -2**31, 2**40, -2**40, 2**63-1, -2**63], "big": 2**70, "f": 1.5,
 *   "t": True, "n": None, "s": "h\u00e9\u4e2d", "tup": (1, (2, 3)),
 *   "shared": [frames, frames]}
 * with frames = [{"filename": "a.py", "line": 1, "name": "f"}], one list
 * pickled once and fetched from the memo the second time.  No bytes:
 * protocol 2 writes them as a call of _codecs.encode (GLOBAL, REDUCE),
 * which is refused; a snapshot holds none (test_bytes reads protocol 3's).
 */
static const char *const expected = "{\"ints\": [0, 1, 255, 256, 65535, 65536, -1, -129, 2147483647, -2147483648, 1099511627776, -1099511627776, 9223372036854775807, -9223372036854775808], \"big\": 1.1805916207174113e+21, \"f\": 1.5, \"t\": true, \"n\": null, \"s\": \"h\\u00e9\\u4e2d\", \"tup\": [1, [2, 3]], \"shared\": [[{\"filename\": \"a.py\", \"line\": 1, \"name\": \"f\"}], [{\"filename\": \"a.py\", \"line\": 1, \"name\": \"f\"}]]}";

static const struct {
	int proto;
	const char *data;
	size_t len;
} accepted[] = {
	{ 2,
	    "\x80\x02\x7d\x71\x00\x28\x58\x04\x00\x00\x00\x69\x6e\x74\x73\x71"
	    "\x01\x5d\x71\x02\x28\x4b\x00\x4b\x01\x4b\xff\x4d\x00\x01\x4d\xff"
	    "\xff\x4a\x00\x00\x01\x00\x4a\xff\xff\xff\xff\x4a\x7f\xff\xff\xff"
	    "\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x06\x00\x00\x00\x00"
	    "\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff\xff\xff\xff"
	    "\xff\xff\xff\x7f\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x65\x58"
	    "\x03\x00\x00\x00\x62\x69\x67\x71\x03\x8a\x09\x00\x00\x00\x00\x00"
	    "\x00\x00\x00\x40\x58\x01\x00\x00\x00\x66\x71\x04\x47\x3f\xf8\x00"
	    "\x00\x00\x00\x00\x00\x58\x01\x00\x00\x00\x74\x71\x05\x88\x58\x01"
	    "\x00\x00\x00\x6e\x71\x06\x4e\x58\x01\x00\x00\x00\x73\x71\x07\x58"
	    "\x06\x00\x00\x00\x68\xc3\xa9\xe4\xb8\xad\x71\x08\x58\x03\x00\x00"
	    "\x00\x74\x75\x70\x71\x09\x4b\x01\x4b\x02\x4b\x03\x86\x71\x0a\x86"
	    "\x71\x0b\x58\x06\x00\x00\x00\x73\x68\x61\x72\x65\x64\x71\x0c\x5d"
	    "\x71\x0d\x28\x5d\x71\x0e\x7d\x71\x0f\x28\x58\x08\x00\x00\x00\x66"
	    "\x69\x6c\x65\x6e\x61\x6d\x65\x71\x10\x58\x04\x00\x00\x00\x61\x2e"
	    "\x70\x79\x71\x11\x58\x04\x00\x00\x00\x6c\x69\x6e\x65\x71\x12\x4b"
	    "\x01\x58\x04\x00\x00\x00\x6e\x61\x6d\x65\x71\x13\x68\x04\x75\x61"
	    "\x68\x0e\x65\x75\x2e",
	  277 },
	{ 3,
	    "\x80\x03\x7d\x71\x00\x28\x58\x04\x00\x00\x00\x69\x6e\x74\x73\x71"
	    "\x01\x5d\x71\x02\x28\x4b\x00\x4b\x01\x4b\xff\x4d\x00\x01\x4d\xff"
	    "\xff\x4a\x00\x00\x01\x00\x4a\xff\xff\xff\xff\x4a\x7f\xff\xff\xff"
	    "\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x06\x00\x00\x00\x00"
	    "\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff\xff\xff\xff"
	    "\xff\xff\xff\x7f\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x65\x58"
	    "\x03\x00\x00\x00\x62\x69\x67\x71\x03\x8a\x09\x00\x00\x00\x00\x00"
	    "\x00\x00\x00\x40\x58\x01\x00\x00\x00\x66\x71\x04\x47\x3f\xf8\x00"
	    "\x00\x00\x00\x00\x00\x58\x01\x00\x00\x00\x74\x71\x05\x88\x58\x01"
	    "\x00\x00\x00\x6e\x71\x06\x4e\x58\x01\x00\x00\x00\x73\x71\x07\x58"
	    "\x06\x00\x00\x00\x68\xc3\xa9\xe4\xb8\xad\x71\x08\x58\x03\x00\x00"
	    "\x00\x74\x75\x70\x71\x09\x4b\x01\x4b\x02\x4b\x03\x86\x71\x0a\x86"
	    "\x71\x0b\x58\x06\x00\x00\x00\x73\x68\x61\x72\x65\x64\x71\x0c\x5d"
	    "\x71\x0d\x28\x5d\x71\x0e\x7d\x71\x0f\x28\x58\x08\x00\x00\x00\x66"
	    "\x69\x6c\x65\x6e\x61\x6d\x65\x71\x10\x58\x04\x00\x00\x00\x61\x2e"
	    "\x70\x79\x71\x11\x58\x04\x00\x00\x00\x6c\x69\x6e\x65\x71\x12\x4b"
	    "\x01\x58\x04\x00\x00\x00\x6e\x61\x6d\x65\x71\x13\x68\x04\x75\x61"
	    "\x68\x0e\x65\x75\x2e",
	  277 },
	{ 4,
	    "\x80\x04\x95\xd8\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x04"
	    "\x69\x6e\x74\x73\x94\x5d\x94\x28\x4b\x00\x4b\x01\x4b\xff\x4d\x00"
	    "\x01\x4d\xff\xff\x4a\x00\x00\x01\x00\x4a\xff\xff\xff\xff\x4a\x7f"
	    "\xff\xff\xff\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x06\x00"
	    "\x00\x00\x00\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff"
	    "\xff\xff\xff\xff\xff\xff\x7f\x8a\x08\x00\x00\x00\x00\x00\x00\x00"
	    "\x80\x65\x8c\x03\x62\x69\x67\x94\x8a\x09\x00\x00\x00\x00\x00\x00"
	    "\x00\x00\x40\x8c\x01\x66\x94\x47\x3f\xf8\x00\x00\x00\x00\x00\x00"
	    "\x8c\x01\x74\x94\x88\x8c\x01\x6e\x94\x4e\x8c\x01\x73\x94\x8c\x06"
	    "\x68\xc3\xa9\xe4\xb8\xad\x94\x8c\x03\x74\x75\x70\x94\x4b\x01\x4b"
	    "\x02\x4b\x03\x86\x94\x86\x94\x8c\x06\x73\x68\x61\x72\x65\x64\x94"
	    "\x5d\x94\x28\x5d\x94\x7d\x94\x28\x8c\x08\x66\x69\x6c\x65\x6e\x61"
	    "\x6d\x65\x94\x8c\x04\x61\x2e\x70\x79\x94\x8c\x04\x6c\x69\x6e\x65"
	    "\x94\x4b\x01\x8c\x04\x6e\x61\x6d\x65\x94\x68\x04\x75\x61\x68\x0e"
	    "\x65\x75\x2e",
	  227 },
	{ 5,
	    "\x80\x05\x95\xd8\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x04"
	    "\x69\x6e\x74\x73\x94\x5d\x94\x28\x4b\x00\x4b\x01\x4b\xff\x4d\x00"
	    "\x01\x4d\xff\xff\x4a\x00\x00\x01\x00\x4a\xff\xff\xff\xff\x4a\x7f"
	    "\xff\xff\xff\x4a\xff\xff\xff\x7f\x4a\x00\x00\x00\x80\x8a\x06\x00"
	    "\x00\x00\x00\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff"
	    "\xff\xff\xff\xff\xff\xff\x7f\x8a\x08\x00\x00\x00\x00\x00\x00\x00"
	    "\x80\x65\x8c\x03\x62\x69\x67\x94\x8a\x09\x00\x00\x00\x00\x00\x00"
	    "\x00\x00\x40\x8c\x01\x66\x94\x47\x3f\xf8\x00\x00\x00\x00\x00\x00"
	    "\x8c\x01\x74\x94\x88\x8c\x01\x6e\x94\x4e\x8c\x01\x73\x94\x8c\x06"
	    "\x68\xc3\xa9\xe4\xb8\xad\x94\x8c\x03\x74\x75\x70\x94\x4b\x01\x4b"
	    "\x02\x4b\x03\x86\x94\x86\x94\x8c\x06\x73\x68\x61\x72\x65\x64\x94"
	    "\x5d\x94\x28\x5d\x94\x7d\x94\x28\x8c\x08\x66\x69\x6c\x65\x6e\x61"
	    "\x6d\x65\x94\x8c\x04\x61\x2e\x70\x79\x94\x8c\x04\x6c\x69\x6e\x65"
	    "\x94\x4b\x01\x8c\x04\x6e\x61\x6d\x65\x94\x68\x04\x75\x61\x68\x0e"
	    "\x65\x75\x2e",
	  227 }
};

static void
test_accepted(void **state)
{
	json_error_t je;
	json_t *want = json_loads(expected, 0, &je);
	size_t i;

	(void)state;
	assert_non_null(want);
	for (i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
		od_error err;
		json_t *got;

		memset(&err, 0, sizeof err);
		assert_true(od_pickle_sniff((const unsigned char *)
		    accepted[i].data, accepted[i].len));
		got = od_pickle_read((const unsigned char *)accepted[i].data,
		    accepted[i].len, "t.pickle", &err);
		if (got == NULL)
			fail_msg("protocol %d: %s", accepted[i].proto, err.msg);
		if (!json_equal(got, want)) {
			char *s = json_dumps(got, JSON_SORT_KEYS);

			fail_msg("protocol %d read as %s", accepted[i].proto, s);
		}
		json_decref(got);
	}
	json_decref(want);
}

/* Each refused input, with what its error must say. */
static const struct {
	const char *data;
	size_t len;
	const char *says;
} refused[] = {
	/* GLOBAL 'os system' (protocol 2's import). */
	{ "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00" "id\x85R.", 22,
	  "pickle byte 2, opcode GLOBAL (0x63): would import" },
	{ "\x80\x04\x8c\x02os\x8c\x06system\x93.", 16,
	  "pickle byte 14, opcode STACK_GLOBAL (0x93)" },
	{ "\x80\x02N)R.", 6, "pickle byte 4, opcode REDUCE (0x52)" },
	{ "\x80\x02}}b.", 6, "opcode BUILD" },
	{ "\x80\x02)\x81.", 5, "opcode NEWOBJ" },
	{ "\x80\x02\x82\x01.", 5, "opcode EXT1" },
	{ "\x80\x02K\x01Q.", 6, "opcode BINPERSID" },
	{ "\x80\x02I1\n.", 6, "opcode INT (0x49): is not used" },
	{ "\x80\x02\x8f.", 4, "opcode EMPTY_SET" },
	{ "\x80\x06N.", 4, "protocol 6" },
	{ "\x80\x02\xff.", 4, "is not a pickle opcode" },
	/* Truncated: in an argument, and before STOP. */
	{ "\x80\x02X\x10\x00\x00\x00" "ab.", 10, "truncated" },
	{ "\x80\x02]", 3, "ends before STOP" },
	/* The memo: a slot never stored, one out of sequence, an object
	 * memoized twice, a container added to after it was fetched (the
	 * original, then the fetched one). */
	{ "\x80\x02h\x00.", 5, "memo slot 0 was never stored" },
	{ "\x80\x02Nq\x05.", 6, "out of sequence" },
	{ "\x80\x02]q\x00q\x01.", 7, "memoizes the same object twice" },
	{ "\x80\x02]q\x00h\x00" "a.", 9, "already fetched from the memo" },
	{ "\x80\x02]]q\x00" "ah\x00K\x01" "a.", 12, "already fetched" },
	/* DUP of a container would let it contain itself. */
	{ "\x80\x02]2a.", 6, "duplicates a container" },
	/* Stack shapes: APPENDS with no MARK, STOP with two values. */
	{ "\x80\x02]K\x01" "e.", 7, "no MARK" },
	/* A list below an inner MARK is out of reach of the outer APPENDS. */
	{ "\x80\x02](((K\x01" "e.", 9, "no list below its MARK" },
	{ "\x80\x02NN.", 5, "one value, no mark" },
	{ "\x80\x02}K\x01s.", 7, "needs 3 values" },
	/* A dict key that is a list. */
	{ "\x80\x02}]Ns.", 7, "a dict key that is a container" },
	/* A key with a NUL, which the JSON form cannot hold either. */
	{ "\x80\x02}X\x01\x00\x00\x00\x00Ns.", 12, "a NUL byte" },
};

static void
test_refused(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		od_error err;
		json_t *got;

		memset(&err, 0, sizeof err);
		got = od_pickle_read((const unsigned char *)refused[i].data,
		    refused[i].len, "bad.pickle", &err);
		if (got != NULL)
			fail_msg("case %zu was read", i);
		if (strcmp(err.file, "bad.pickle") != 0 ||
		    strstr(err.msg, refused[i].says) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
			    err.msg, refused[i].says);
	}
}

/* 64 lists inside one another are read; 65 are refused. */
static void
test_depth(void **state)
{
	unsigned char buf[2 + 2 * 70 + 1];
	od_error err;
	json_t *got;
	size_t n, d;

	(void)state;
	for (d = 64; d <= 65; d++) {
		n = 0;
		buf[n++] = 0x80;
		buf[n++] = 2;
		memset(buf + n, ']', d);
		n += d;
		memset(buf + n, 'a', d - 1);
		n += d - 1;
		buf[n++] = '.';
		memset(&err, 0, sizeof err);
		got = od_pickle_read(buf, n, "deep.pickle", &err);
		if (d == 64)
			assert_non_null(got);
		else {
			assert_null(got);
			assert_non_null(strstr(err.msg, "nested more than 64"));
		}
		json_decref(got);
	}
}

/* Bytes (SHORT_BINBYTES, protocol 3 on): text when UTF-8, else null. */
static void
test_bytes(void **state)
{
	od_error err;
	json_t *got;

	(void)state;
	memset(&err, 0, sizeof err);
	got = od_pickle_read((const unsigned char *)"\x80\x03]q\x00(C\x03raw"
	    "C\x01\xff" "e.", 16, "b.pickle", &err);
	assert_non_null(got);
	assert_string_equal(json_string_value(json_array_get(got, 0)), "raw");
	assert_true(json_is_null(json_array_get(got, 1)));
	json_decref(got);
}

/* Not a pickle of protocol 2 or later: not sniffed as one. */
static void
test_sniff(void **state)
{
	(void)state;
	assert_false(od_pickle_sniff((const unsigned char *)"(dp0\n.", 6));
	assert_false(od_pickle_sniff((const unsigned char *)"\x80\x01", 2));
	assert_false(od_pickle_sniff((const unsigned char *)"\x80", 1));
	assert_true(od_pickle_sniff((const unsigned char *)"\x80\x05", 2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_sniff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
