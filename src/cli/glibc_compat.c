/*
 * glibc_compat.c: the portable release build (OOMDOC_STATIC) starts on
 * glibc 2.28 (RHEL 8, Ubuntu 20.04 has 2.31) although it is linked on a
 * newer one.
 *
 * A program linked against glibc 2.36 asks for the newest version of
 * each symbol it uses: __libc_start_main@GLIBC_2.34 (from crt1.o), the
 * dl* functions @GLIBC_2.34 (libdl merged into libc), stat@GLIBC_2.33,
 * pow@GLIBC_2.29; the static libstdc++ and libgcc add arc4random
 * (GLIBC_2.36, std::random_device), _dl_find_object (GLIBC_2.35, the
 * unwinder), __libc_single_threaded (GLIBC_2.32) and pthread_once
 * @GLIBC_2.34; the reader thread (input.c) and the watchdog (live mode)
 * add pthread_create, pthread_join (GLIBC_2.34) and pthread_sigmask
 * (GLIBC_2.32).  The link wraps each of them (-Wl,--wrap=NAME, see
 * CMakeLists.txt) and the wrappers below call the version glibc 2.28
 * already had, bound with .symver; every glibc since keeps those old
 * versions for old binaries.  GLIBC_2.2.5 is x86-64's first symbol
 * version (other architectures start elsewhere), so this file is for
 * x86-64 only; tests/glibc_versions.sh checks the binary's needs with
 * objdump -T, and test_glibc_compat runs the wrappers.
 *
 * The old dl* and pthread functions lived in libdl.so.2 and
 * libpthread.so.0 before glibc 2.34, so the link names both (they are
 * stubs on newer glibc): the dynamic linker looks a versioned symbol up
 * in every loaded object, whichever file the binary recorded it from.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>             /* for __GLIBC__ */
#if defined(__x86_64__) && defined(__GLIBC__)
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>

#define OD_OLD(fn, sym) __asm__(".symver " #fn "," sym "@GLIBC_2.2.5")

/*
 * crt1.o's call.  From glibc 2.34 on, crt1 passes no init function: the
 * new __libc_start_main runs the executable's constructors itself, and
 * the old one (2.28's, and the compatibility version every later glibc
 * keeps) leaves them to init, which 2.28's crt1 gave as __libc_csu_init.
 * od_init does what that did: _init, then the preinit and init arrays.
 * Destructors need nothing: since glibc 2.23 the dynamic linker's
 * _dl_fini runs the executable's as any object's (__libc_csu_fini was
 * empty), so fini is passed on as crt1 gave it.
 */
extern void _init(void);
extern void (*__preinit_array_start[])(int, char **, char **);
extern void (*__preinit_array_end[])(int, char **, char **);
extern void (*__init_array_start[])(int, char **, char **);
extern void (*__init_array_end[])(int, char **, char **);

static void
od_init(int argc, char **argv, char **envp)
{
	size_t i;

	_init();
	for (i = 0; i < (size_t)(__preinit_array_end - __preinit_array_start);
	    i++)
		__preinit_array_start[i](argc, argv, envp);
	for (i = 0; i < (size_t)(__init_array_end - __init_array_start); i++)
		__init_array_start[i](argc, argv, envp);
}

typedef int (*od_main_fn)(int, char **, char **);
int od_old_start_main(od_main_fn, int, char **, void (*)(int, char **,
    char **), void (*)(void), void (*)(void), void *);
OD_OLD(od_old_start_main, "__libc_start_main");

int __wrap___libc_start_main(od_main_fn, int, char **, void (*)(int, char **,
    char **), void (*)(void), void (*)(void), void *);

int
__wrap___libc_start_main(od_main_fn main_fn, int argc, char **argv,
    void (*init)(int, char **, char **), void (*fini)(void),
    void (*rtld_fini)(void), void *stack_end)
{
	/* A crt1.o older than 2.34 passes its own init: then it is used. */
	return od_old_start_main(main_fn, argc, argv, init != NULL ? init :
	    od_init, fini, rtld_fini, stack_end);
}

/* The dl* functions, from libdl.so.2 before 2.34. */
void *od_old_dlopen(const char *, int);
void *od_old_dlsym(void *, const char *);
int od_old_dlclose(void *);
char *od_old_dlerror(void);
OD_OLD(od_old_dlopen, "dlopen");
OD_OLD(od_old_dlsym, "dlsym");
OD_OLD(od_old_dlclose, "dlclose");
OD_OLD(od_old_dlerror, "dlerror");
void *__wrap_dlopen(const char *, int);
void *__wrap_dlsym(void *, const char *);
int __wrap_dlclose(void *);
char *__wrap_dlerror(void);

void *__wrap_dlopen(const char *f, int m) { return od_old_dlopen(f, m); }
void *__wrap_dlsym(void *h, const char *s) { return od_old_dlsym(h, s); }
int __wrap_dlclose(void *h) { return od_old_dlclose(h); }
char *__wrap_dlerror(void) { return od_old_dlerror(); }

/* stat and fstat were __xstat and __fxstat (version 1 on x86-64) until
 * glibc 2.33 made them functions. */
int od_old_xstat(int, const char *, struct stat *);
int od_old_fxstat(int, int, struct stat *);
OD_OLD(od_old_xstat, "__xstat");
OD_OLD(od_old_fxstat, "__fxstat");
int __wrap_stat(const char *, struct stat *);
int __wrap_fstat(int, struct stat *);

int __wrap_stat(const char *p, struct stat *b) { return od_old_xstat(1, p, b); }
int __wrap_fstat(int fd, struct stat *b) { return od_old_fxstat(1, fd, b); }

/* pow: glibc 2.29's new version only stopped setting errno the SVID
 * way; the results are the same. */
double od_old_pow(double, double);
OD_OLD(od_old_pow, "pow");
double __wrap_pow(double, double);

double __wrap_pow(double x, double y) { return od_old_pow(x, y); }

/* pthread_once and __pthread_key_create, from libpthread.so.0 before
 * 2.34. */
int od_old_pthread_once(int *, void (*)(void));
int od_old_pthread_key_create(unsigned *, void (*)(void *));
OD_OLD(od_old_pthread_once, "pthread_once");
OD_OLD(od_old_pthread_key_create, "__pthread_key_create");
int __wrap_pthread_once(int *, void (*)(void));
int __wrap___pthread_key_create(unsigned *, void (*)(void *));

int
__wrap_pthread_once(int *once, void (*fn)(void))
{
	return od_old_pthread_once(once, fn);
}

int
__wrap___pthread_key_create(unsigned *key, void (*fn)(void *))
{
	return od_old_pthread_key_create(key, fn);
}

/* The threads of input.c's reader and of live mode's watchdog:
 * pthread_create and pthread_join got version 2.34 with the move into
 * libc, pthread_sigmask 2.32; the old ones are the same functions. */
int od_old_pthread_create(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *);
int od_old_pthread_join(pthread_t, void **);
int od_old_pthread_sigmask(int, const sigset_t *, sigset_t *);
OD_OLD(od_old_pthread_create, "pthread_create");
OD_OLD(od_old_pthread_join, "pthread_join");
OD_OLD(od_old_pthread_sigmask, "pthread_sigmask");
int __wrap_pthread_create(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *);
int __wrap_pthread_join(pthread_t, void **);
int __wrap_pthread_sigmask(int, const sigset_t *, sigset_t *);

int
__wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg)
{
	return od_old_pthread_create(t, a, fn, arg);
}

int
__wrap_pthread_join(pthread_t t, void **ret)
{
	return od_old_pthread_join(t, ret);
}

int
__wrap_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return od_old_pthread_sigmask(how, set, old);
}

/*
 * libstdc++ reads __libc_single_threaded to skip atomics in a program
 * with one thread; 0 ("there may be threads") keeps them always, which
 * is right whatever the program does.
 */
char __wrap___libc_single_threaded = 0;

/* std::random_device's source: the kernel's, as arc4random's is. */
uint32_t __wrap_arc4random(void);

uint32_t
__wrap_arc4random(void)
{
	uint32_t v = 0;
	ssize_t n;

	do
		n = getrandom(&v, sizeof v, 0);
	while (n < 0 && errno == EINTR);
	return v;
}

/*
 * The unwinder's way to find the unwind tables of the object that holds
 * pc (glibc 2.35); before it, libgcc walked dl_iterate_phdr, as this
 * does.  Only the fields libgcc reads are filled: the mapping and the
 * PT_GNU_EH_FRAME section.
 */
struct od_find {
	uintptr_t pc;
	struct dl_find_object *out;
	int found;
};

static int
od_find_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct od_find *f = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	void *eh = NULL;
	int i, inside = 0;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (f->pc >= a && f->pc < a + ph->p_memsz)
				inside = 1;
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			eh = (void *)a;
		}
	}
	if (!inside)
		return 0;
	f->out->dlfo_flags = 0;
	f->out->dlfo_map_start = (void *)lo;
	f->out->dlfo_map_end = (void *)hi;
	f->out->dlfo_link_map = NULL;
	f->out->dlfo_eh_frame = eh;
	f->found = 1;
	return 1;
}

int __wrap__dl_find_object(void *, struct dl_find_object *);

int
__wrap__dl_find_object(void *pc, struct dl_find_object *out)
{
	struct od_find f = { .pc = (uintptr_t)pc, .out = out, .found = 0 };

	dl_iterate_phdr(od_find_one, &f);
	return f.found ? 0 : -1;
}
#else
/* ISO C wants a translation unit to hold something. */
typedef int od_glibc_compat_unused;
#endif
