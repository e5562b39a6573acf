/*
 * alloc_fail.c: allocation-failure injection for the test build configured
 * with -DOOMDOC_ALLOC_FAIL=ON, as jq's inject_errors and curl's torture
 * mode do.  The program is linked with the linker's --wrap for malloc,
 * calloc, realloc, strdup and strndup (CMakeLists.txt), so that every call
 * of those in oomdoc's own code (the core library, the live layer and the
 * command) comes here, and jansson's allocations come here too
 * (json_set_alloc_funcs, below).  The allocations inside libyaml, PCRE2,
 * Vectorscan, zlib, zstd and glibc (stdio buffers, open_memstream) are not
 * counted: those libraries report their own failures through their
 * return values, which oomdoc checks, but this cannot make them fail.
 *
 * Only the allocations made once main has started are counted: the
 * static CUDA runtime of the live layer allocates in its constructors,
 * before main, where no error can be handled (main is wrapped too, with
 * --wrap=main, to arm the counter).
 *
 * The allocations are numbered from 1 in the order they happen; with
 * OOMDOC_FAIL_AT=N in the environment, the Nth returns NULL (errno
 * ENOMEM) and every other succeeds.  With OOMDOC_ALLOC_COUNT set, the
 * number of allocations made is printed on standard error at exit, as
 * "oomdoc-alloc: N allocations", so that a test knows the range of N to
 * run (tests/alloc_fail.py).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static int af_armed;             /* main has started */
static unsigned long af_count;   /* allocations so far */
static unsigned long af_fail_at; /* the one to fail; 0 for none */
static int af_trace;             /* OOMDOC_FAIL_TRACE: print where */

#if defined(__SANITIZE_ADDRESS__)
#define AF_HAVE_TRACE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AF_HAVE_TRACE 1
#endif
#endif
#ifdef AF_HAVE_TRACE
void __sanitizer_print_stack_trace(void);
#endif

/* True when this allocation is the one to fail.  With OOMDOC_FAIL_TRACE
 * in the environment of an ASan build, the stack of the failed call is
 * printed on standard error, to find the code that mishandled it. */
static int
af_fails(void)
{
	if (!af_armed || ++af_count != af_fail_at || af_fail_at == 0)
		return 0;
#ifdef AF_HAVE_TRACE
	if (af_trace)
		__sanitizer_print_stack_trace();
#endif
	errno = ENOMEM;
	return 1;
}

void *
__wrap_malloc(size_t size)
{
	return af_fails() ? NULL : __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return af_fails() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
	return af_fails() ? NULL : __real_realloc(p, size);
}

char *
__wrap_strdup(const char *s)
{
	return af_fails() ? NULL : __real_strdup(s);
}

char *
__wrap_strndup(const char *s, size_t n)
{
	return af_fails() ? NULL : __real_strndup(s, n);
}

static void
af_free(void *p)
{
	free(p);
}

static void af_start(void) __attribute__((constructor));
static void af_end(void) __attribute__((destructor));

/* Before main: read the environment, and send jansson's allocations
 * through the counter. */
static void
af_start(void)
{
	const char *at = getenv("OOMDOC_FAIL_AT");

	af_fail_at = at != NULL ? strtoul(at, NULL, 10) : 0;
	af_trace = getenv("OOMDOC_FAIL_TRACE") != NULL;
	json_set_alloc_funcs(__wrap_malloc, af_free);
}

/* The program's main, once the counter is armed. */
int
__wrap_main(int argc, char **argv, char **envp)
{
	af_armed = 1;
	return __real_main(argc, argv, envp);
}

static void
af_end(void)
{
	if (getenv("OOMDOC_ALLOC_COUNT") != NULL)
		fprintf(stderr, "oomdoc-alloc: %lu allocations\n", af_count);
}
