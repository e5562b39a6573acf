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
 * "oomdoc-alloc: N allocations, M while a thread ran", so that a test
 * knows the range of N to run (tests/alloc_fail.py), and whether the fork
 * mode below covers them all (it does when M is 0).  pthread_create and
 * pthread_join are wrapped too, to know M; with OOMDOC_FAIL_THREADS=0,
 * pthread_create fails (EAGAIN), as in the fork mode, so that a run of
 * one N numbers the allocations as a fork mode's run does.
 *
 * Fork mode: with OOMDOC_FAIL_FORK=DIR, one run covers every N.  At each
 * counted allocation k the process forks; the child makes allocation k
 * fail and runs on to its end, its standard output and standard error
 * going to DIR/k.out and DIR/k.err, and the parent lets allocation k
 * succeed and goes on, so that the start-up before allocation k (the
 * rules, PCRE2's JIT, Vectorscan's compile) is paid once for all k
 * instead of once for each, as AFL's fork server skips a program's
 * start-up (https://lcamtuf.blogspot.com/2014/10/fuzzing-binaries-without-execve.html).
 * A child is what a run with OOMDOC_FAIL_AT=k would be, given four
 * things that af_child_setup sees to:
 *
 *   - its output is complete.  The parent's standard output and standard
 *     error must be regular files (af_fork_check): the child copies what
 *     the parent had written to each when it forked (their sizes then)
 *     into its own file and puts that file in its place (dup2), first
 *     standard error, where it can then say what went wrong with the
 *     rest; what the parent had not yet flushed is still
 *     in the child's copy of the stdio buffers, and goes to the child's
 *     file when the child flushes.
 *   - it shares no file offset with the parent.  A descriptor inherited
 *     across fork shares its open file (and its offset) with the
 *     parent's, so a child reading on in a rule file or an input would
 *     move the parent's place in it.  The child opens each regular file
 *     and directory that oomdoc opened, and standard input, again through
 *     /proc/self/fd (a new open file, the same file), at the same offset,
 *     under the same number; character devices (/dev/null) are left
 *     shared, and so are the descriptors above 2 that were open before
 *     main (oomdoc's code uses none of them); a pipe, a socket or a file
 *     open for writing cannot be made private, and the child then stops
 *     with status AF_UNSOUND and says why.  Standard input must be a
 *     regular file or a character device (af_fork_check).
 *   - it is a copy of a single-threaded process.  fork(2) copies only the
 *     calling thread: a child forked while the reader thread of
 *     src/lib/input.c or the prefilter thread of src/lib/scan.c runs
 *     would have their memory (a ring half filled, a mutex held) without
 *     the threads.  In fork mode pthread_create (wrapped too) fails with
 *     EAGAIN, and both fall back to the caller's thread, which they do
 *     whenever a thread cannot be had (so their error paths with a thread
 *     running are covered by the one-run-per-N mode only: the test
 *     checks that a run with threads makes no allocation while one runs);
 *     before each fork the parent checks that it runs one thread (the
 *     link count of /proc/self/task is two more than the threads), and
 *     forks no more when it does not, which the test sees as allocations
 *     not covered.
 *   - it ends.  A child has OOMDOC_FAIL_FORK_LIMIT seconds (60 when
 *     unset) of wall-clock time, alarm(2) with SIGALRM's default action
 *     (oomdoc handles no SIGALRM), so that a hang is a kill by SIGALRM.
 *
 * A child does not fork again.  At most OOMDOC_FAIL_FORK_JOBS children
 * (2 when unset, at most AF_JOBS_MAX) run at once: before a fork the
 * parent waits for one to end.  The parent waits for each of its own
 * children by pid (never for any child: live mode waits for its own) and
 * records its end in DIR/status, one line each, "k exit S" or
 * "k signal S"; a child that cannot be had is "k error WHY".  At its own
 * end (af_end) the parent waits for the children left and writes
 * "count N", the number of allocations it made (so N lines before).  The
 * parent itself is the run without a failure.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_main(int argc, char **argv, char **envp);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
int __real_pthread_join(pthread_t t, void **ret);
int __wrap_main(int argc, char **argv, char **envp);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
int __wrap_pthread_join(pthread_t t, void **ret);

/* The status of a child whose set-up failed (af_child_setup). */
#define AF_UNSOUND 97
#define AF_JOBS_MAX 16
#define AF_FDS_MAX 256

static int af_armed;             /* main has started */
static unsigned long af_count;   /* allocations so far */
static unsigned long af_fail_at; /* the one to fail; 0 for none */
static int af_trace;             /* OOMDOC_FAIL_TRACE: print where */
static int af_no_threads;        /* pthread_create fails */
static int af_threads;           /* threads started and not joined */
static unsigned long af_in_thread; /* allocations while one ran */

/* Fork mode (OOMDOC_FAIL_FORK): its directory, NULL when off. */
static const char *af_dir;
static int af_forking;           /* the parent still forks */
static int af_child;             /* this is a child: it never forks */
static int af_own_err;           /* its standard error is its own */
static int af_status = -1;       /* DIR/status, the parent's */
static unsigned af_limit = 60;   /* seconds a child may run */
static int af_jobs = 2;          /* children at once */
static struct af_kid {
	pid_t pid;
	unsigned long k;
} af_kids[AF_JOBS_MAX];          /* the running ones, oldest first */
static int af_nkids;
static int af_inherited[AF_FDS_MAX]; /* descriptors above 2 before main */
static int af_ninherited;

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

/* One line of DIR/status, written whole (the parent's only writer). */
static void
af_record(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof line &&
	    write(af_status, line, (size_t)n) != n)
		af_forking = 0; /* the test sees the lines missing */
}

/* Forgets the running child i (its end is recorded). */
static void
af_forget(int i)
{
	memmove(&af_kids[i], &af_kids[i + 1],
	    (size_t)(af_nkids - i - 1) * sizeof af_kids[0]);
	af_nkids--;
}

/* Records the end of the running child i and forgets it. */
static void
af_ended(int i, int st)
{
	if (WIFSIGNALED(st))
		af_record("%lu signal %d\n", af_kids[i].k, WTERMSIG(st));
	else
		af_record("%lu exit %d\n", af_kids[i].k, WEXITSTATUS(st));
	af_forget(i);
}

/* Waits for one child to end: any that has ended, else the oldest. */
static void
af_reap_one(void)
{
	pid_t w;
	int i, st;

	for (i = 0; i < af_nkids; i++)
		if (waitpid(af_kids[i].pid, &st, WNOHANG) == af_kids[i].pid) {
			af_ended(i, st);
			return;
		}
	while ((w = waitpid(af_kids[0].pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w == af_kids[0].pid) {
		af_ended(0, st);
		return;
	}
	af_record("%lu error waitpid: %s\n", af_kids[0].k, strerror(errno));
	af_forget(0);
}

/* In a child whose set-up failed: says why on the child's standard error
 * once it is the child's own (before, it is the parent's) and ends. */
static void
af_unsound(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0 && af_own_err)
		(void)!write(2, line, (size_t)n < sizeof line ? (size_t)n :
		    sizeof line - 1);
	_exit(AF_UNSOUND);
}

/* The descriptors above 2 that are open now, into fds (AF_FDS_MAX of
 * them at most); their number, or -1. */
static int
af_open_fds(int *fds)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		if (n == AF_FDS_MAX) {
			n = -1;
			break;
		}
		fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static int
af_was_inherited(int fd)
{
	int i;

	for (i = 0; i < af_ninherited; i++)
		if (af_inherited[i] == fd)
			return 1;
	return 0;
}

/* Gives the child a private open file for standard input and for each
 * descriptor that oomdoc opened (see the comment at the top). */
static void
af_private_fds(void)
{
	int fds[AF_FDS_MAX + 1], nfds, i;

	if ((nfds = af_open_fds(fds + 1)) < 0)
		af_unsound("oomdoc-alloc: cannot list /proc/self/fd (or more "
		    "than %d descriptors)\n", AF_FDS_MAX);
	fds[0] = 0;
	for (i = 0; i <= nfds; i++) {
		char path[64];
		struct stat st;
		int fl, fdfl, nfd;
		off_t off;

		if (fstat(fds[i], &st) != 0 ||
		    (fl = fcntl(fds[i], F_GETFL)) < 0 ||
		    (fdfl = fcntl(fds[i], F_GETFD)) < 0)
			af_unsound("oomdoc-alloc: descriptor %d: %s\n", fds[i],
			    strerror(errno));
		if (S_ISCHR(st.st_mode) || af_was_inherited(fds[i]))
			continue;
		if ((!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) ||
		    (fl & O_ACCMODE) != O_RDONLY)
			af_unsound("oomdoc-alloc: descriptor %d (mode %o, flags "
			    "%o) cannot be made the child's own\n", fds[i],
			    (unsigned)st.st_mode, (unsigned)fl);
		snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
		if ((off = lseek(fds[i], 0, SEEK_CUR)) < 0 ||
		    (nfd = open(path, O_RDONLY | (fl & O_NONBLOCK))) < 0 ||
		    lseek(nfd, off, SEEK_SET) != off ||
		    dup3(nfd, fds[i], (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0)
			af_unsound("oomdoc-alloc: descriptor %d: reopening: "
			    "%s\n", fds[i], strerror(errno));
		close(nfd);
	}
}

/* Puts DIR/k.NAME in the place of descriptor fd (1 or 2), holding first
 * the size bytes that the parent had written to fd when it forked (it
 * writes on meanwhile).  fd is open for writing only: the file is read
 * through a descriptor of its own. */
static void
af_own_output(int fd, off_t size, unsigned long k, const char *name)
{
	char path[PATH_MAX], buf[65536];
	ssize_t r = 0;
	off_t at = 0;
	int rfd, nfd;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if ((rfd = open(path, O_RDONLY)) < 0)
		af_unsound("oomdoc-alloc: %s: %s\n", path, strerror(errno));
	snprintf(path, sizeof path, "%s/%lu.%s", af_dir, k, name);
	if ((nfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		af_unsound("oomdoc-alloc: %s: %s\n", path, strerror(errno));
	while (at < size) {
		size_t want = (size_t)(size - at) < sizeof buf ?
		    (size_t)(size - at) : sizeof buf;

		if ((r = pread(rfd, buf, want, at)) <= 0 ||
		    write(nfd, buf, (size_t)r) != r) {
			r = -1;
			break;
		}
		at += r;
	}
	if (r < 0 || dup2(nfd, fd) < 0)
		af_unsound("oomdoc-alloc: %s: %s\n", path, strerror(errno));
	close(rfd);
	close(nfd);
}

/* The child's set-up, right after fork (see the comment at the top):
 * out and err are the sizes of the parent's standard output and standard
 * error then. */
static void
af_child_setup(unsigned long k, off_t out, off_t err)
{
	sigset_t alrm;

	af_child = 1;
	af_nkids = 0;
	close(af_status);
	af_status = -1;
	af_own_output(2, err, k, "err");
	af_own_err = 1;
	af_own_output(1, out, k, "out");
	af_private_fds();
	signal(SIGALRM, SIG_DFL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	alarm(af_limit);
}

/* Fork mode, at allocation k: true in the child (the allocation fails
 * there), false in the parent. */
static int
af_fork(unsigned long k)
{
	struct stat st, out, err;
	pid_t pid;

	if (!af_forking)
		return 0;
	if (stat("/proc/self/task", &st) != 0 || st.st_nlink != 3) {
		af_record("%lu error not one thread: no more forks\n", k);
		af_forking = 0;
		return 0;
	}
	while (af_nkids >= af_jobs)
		af_reap_one();
	if (fstat(1, &out) != 0 || fstat(2, &err) != 0) {
		af_record("%lu error fstat: %s\n", k, strerror(errno));
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		af_record("%lu error fork: %s\n", k, strerror(errno));
		return 0;
	}
	if (pid == 0) {
		af_child_setup(k, out.st_size, err.st_size);
		return 1;
	}
	af_kids[af_nkids].pid = pid;
	af_kids[af_nkids].k = k;
	af_nkids++;
	return 0;
}

/* True when this allocation is the one to fail.  With OOMDOC_FAIL_TRACE
 * in the environment of an ASan build, the stack of the failed call is
 * printed on standard error, to find the code that mishandled it. */
static int
af_fails(void)
{
	if (!af_armed)
		return 0;
	++af_count;
	if (af_threads > 0)
		af_in_thread++;
	if (af_dir != NULL && !af_child) {
		if (!af_fork(af_count))
			return 0;
	} else if (af_count != af_fail_at || af_fail_at == 0) {
		return 0;
	}
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

/* No thread in fork mode (see the comment at the top), nor with
 * OOMDOC_FAIL_THREADS=0; else the threads running are counted. */
int
__wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg)
{
	int rc;

	if (af_no_threads)
		return EAGAIN;
	rc = __real_pthread_create(t, a, fn, arg);
	if (rc == 0)
		af_threads++;
	return rc;
}

int
__wrap_pthread_join(pthread_t t, void **ret)
{
	int rc = __real_pthread_join(t, ret);

	if (rc == 0)
		af_threads--;
	return rc;
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
	const char *e;

	af_fail_at = at != NULL ? strtoul(at, NULL, 10) : 0;
	af_trace = getenv("OOMDOC_FAIL_TRACE") != NULL;
	af_dir = getenv("OOMDOC_FAIL_FORK");
	if (af_dir != NULL && *af_dir == '\0')
		af_dir = NULL;
	e = getenv("OOMDOC_FAIL_THREADS");
	af_no_threads = af_dir != NULL || (e != NULL && strcmp(e, "0") == 0);
	if ((e = getenv("OOMDOC_FAIL_FORK_LIMIT")) != NULL)
		af_limit = (unsigned)strtoul(e, NULL, 10);
	if ((e = getenv("OOMDOC_FAIL_FORK_JOBS")) != NULL)
		af_jobs = atoi(e);
	if (af_jobs < 1)
		af_jobs = 1;
	if (af_jobs > AF_JOBS_MAX)
		af_jobs = AF_JOBS_MAX;
	json_set_alloc_funcs(__wrap_malloc, af_free);
}

/* Fork mode's demands on the parent, checked before main: NULL when they
 * are met, else what is wrong. */
static const char *
af_fork_check(void)
{
	char path[PATH_MAX];
	struct stat i, o, e;

	if (fstat(0, &i) != 0 || (!S_ISREG(i.st_mode) && !S_ISCHR(i.st_mode)))
		return "standard input must be a regular file or a device";
	if (fstat(1, &o) != 0 || fstat(2, &e) != 0 || !S_ISREG(o.st_mode) ||
	    !S_ISREG(e.st_mode))
		return "standard output and standard error must be regular "
		    "files";
	if (o.st_dev == e.st_dev && o.st_ino == e.st_ino)
		return "standard output and standard error must be two files";
	if (strlen(af_dir) + 32 > sizeof path)
		return "the directory's name is too long";
	if ((af_ninherited = af_open_fds(af_inherited)) < 0)
		return "cannot list /proc/self/fd (or too many descriptors)";
	snprintf(path, sizeof path, "%s/status", af_dir);
	af_status = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
	    O_CLOEXEC, 0644);
	if (af_status < 0)
		return "cannot create DIR/status";
	return NULL;
}

/* The program's main, once the counter is armed. */
int
__wrap_main(int argc, char **argv, char **envp)
{
	if (af_dir != NULL) {
		const char *why = af_fork_check();

		if (why != NULL) {
			fprintf(stderr, "oomdoc-alloc: OOMDOC_FAIL_FORK: %s\n",
			    why);
			return AF_UNSOUND;
		}
		af_forking = 1;
	}
	af_armed = 1;
	return __real_main(argc, argv, envp);
}

static void
af_end(void)
{
	if (af_child)
		return;
	if (af_status >= 0) {
		af_forking = 0;
		while (af_nkids > 0)
			af_reap_one();
		af_record("count %lu\n", af_count);
		close(af_status);
		af_status = -1;
	}
	if (getenv("OOMDOC_ALLOC_COUNT") != NULL)
		fprintf(stderr, "oomdoc-alloc: %lu allocations, %lu while a "
		    "thread ran\n", af_count, af_in_thread);
}
