/*
 * test_glibc_compat.c: src/cli/glibc_compat.c's wrappers, linked as the
 * portable oomdoc is (the same --wrap list): the executable's constructor
 * runs once before main and its destructor once after, and stat, fstat,
 * dlopen, dlsym, dlerror, dlclose, pow, and pthread_create,
 * pthread_join and pthread_sigmask work through the old symbol versions.  It prints "ok" when all of that held in main, and
 * "destructor" at exit; the test wants both lines.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

static int ctor_runs;

__attribute__((constructor)) static void
constructor(void)
{
	ctor_runs++;
}

__attribute__((destructor)) static void
destructor(void)
{
	printf("destructor\n");
	fflush(stdout);
}

static void *
thread_main(void *arg)
{
	sigset_t now;

	/* The mask the thread started with: main's at pthread_create. */
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	*(int *)arg = sigismember(&now, SIGINT) == 1 ? 42 : -1;
	return arg;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	sigset_t block, old;
	int got = 0;
	void *ret = NULL;
	struct stat st;
	void *h = dlopen("libm.so.6", RTLD_NOW);
	int bad = 0;

	(void)argc;
	if (ctor_runs != 1)
		bad = printf("the constructor ran %d times\n", ctor_runs);
	if (stat(argv[0], &st) != 0 || st.st_size <= 0)
		bad = printf("stat failed\n");
	if (fstat(1, &st) != 0)
		bad = printf("fstat failed\n");
	if (h == NULL || dlsym(h, "cos") == NULL)
		bad = printf("dlopen/dlsym failed: %s\n", dlerror());
	if (h != NULL && dlclose(h) != 0)
		bad = printf("dlclose failed\n");
	if (dlopen("/nonexistent/libnothing.so", RTLD_NOW) != NULL ||
	    dlerror() == NULL)
		bad = printf("dlerror said nothing\n");
	if (pow(2.0, (double)(argc + 9)) != 1024.0)
		bad = printf("pow is wrong\n");
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &block, &old) != 0 ||
	    pthread_create(&t, NULL, thread_main, &got) != 0 ||
	    pthread_join(t, &ret) != 0 || ret != &got || got != 42 ||
	    pthread_sigmask(SIG_SETMASK, &old, NULL) != 0)
		bad = printf("the thread did not run as asked (%d)\n", got);
	if (!bad)
		printf("ok\n");
	return bad ? 1 : 0;
}
