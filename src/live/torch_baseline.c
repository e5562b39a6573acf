/*
 * torch_baseline.c: an empty PyTorch process as a baseline
 * (torch_baseline.h).
 *
 * The child is started with posix_spawnp in a process group of its own,
 * with CUDA_VISIBLE_DEVICES set to the probed GPU's UUID so that its
 * cuda:0 is that GPU (a MIG instance's UUID included: NVIDIA MIG User
 * Guide, "Running CUDA Applications on Bare-Metal").  Its standard output
 * is read with poll() against a deadline; its standard input is a pipe
 * whose end tells it to exit, so that it also exits when oomdoc dies.
 * Its standard error goes to /dev/null: what matters is in the line.
 */
#define _GNU_SOURCE             /* environ */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "torch_baseline.h"

extern char **environ;

#define TB_TAG "oomdoc-torch-baseline 1 "
#define TB_LINE_MAX 512

/*
 * What the child runs.  It works on every PyTorch from 1.13 on (no
 * torch.OutOfMemoryError, no API newer than torch.cuda.mem_get_info, in
 * 1.10): torch.cuda.init() initialises CUDA, and mem_get_info() makes the
 * device's primary context, as the job's first CUDA call did.
 */
static char tb_script[] =
    "import os, sys\n"
    "def say(s):\n"
    "    sys.stdout.write('" TB_TAG "' + s + '\\n')\n"
    "    sys.stdout.flush()\n"
    "loading = os.environ.get('CUDA_MODULE_LOADING') or 'unset'\n"
    "try:\n"
    "    import torch\n"
    "except Exception:\n"
    "    say('error=no-torch')\n"
    "    sys.exit(3)\n"
    "try:\n"
    "    torch.cuda.init()\n"
    "    free, total = torch.cuda.mem_get_info()\n"
    "except Exception:\n"
    "    say('error=no-cuda')\n"
    "    sys.exit(4)\n"
    "say('pid=%d torch=%s cuda=%s free=%d total=%d loading=%s' % ("
    "os.getpid(), torch.__version__.split('+')[0], torch.version.cuda, "
    "free, total, loading))\n"
    "sys.stdin.read()\n";

/* A word of the line: [A-Za-z0-9._-], at most len - 1 of them. */
static bool
tb_word(const char *v, size_t n, char *out, size_t len)
{
	size_t i;

	if (n == 0 || n >= len)
		return false;
	for (i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' &&
		    v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9') ||
		    v[i] == '.' || v[i] == '_' || v[i] == '-'))
			return false;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}

/* A count of the line: decimal digits, no sign, below 2^62. */
static bool
tb_count(const char *v, size_t n, int64_t *out)
{
	int64_t x = 0;
	size_t i;

	if (n == 0 || n > 18)
		return false;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (v[i] - '0');
	}
	*out = x;
	return true;
}

bool
tb_parse(const char *line, tb_reading *out)
{
	const char *p;
	bool pid = false, fr = false, tot = false;
	char error[32];

	memset(out, 0, sizeof *out);
	error[0] = '\0';
	if (strncmp(line, TB_TAG, strlen(TB_TAG)) != 0) {
		snprintf(out->note, sizeof out->note, "the interpreter did not "
		    "print oomdoc's line");
		return false;
	}
	for (p = line + strlen(TB_TAG); *p != '\0';) {
		size_t n = strcspn(p, " \n"), k;
		const char *eq = memchr(p, '=', n);
		bool ok = eq != NULL;

		if (ok) {
			k = (size_t)(eq - p);
			eq++;
			n -= k + 1;
			if (k == 3 && strncmp(p, "pid", 3) == 0)
				ok = pid = tb_count(eq, n, &out->pid);
			else if (k == 4 && strncmp(p, "free", 4) == 0)
				ok = fr = tb_count(eq, n, &out->free_b);
			else if (k == 5 && strncmp(p, "total", 5) == 0)
				ok = tot = tb_count(eq, n, &out->total);
			else if (k == 5 && strncmp(p, "torch", 5) == 0)
				ok = tb_word(eq, n, out->torch, sizeof out->torch);
			else if (k == 4 && strncmp(p, "cuda", 4) == 0)
				ok = tb_word(eq, n, out->cuda, sizeof out->cuda);
			else if (k == 7 && strncmp(p, "loading", 7) == 0)
				ok = tb_word(eq, n, out->loading,
				    sizeof out->loading);
			else if (k == 5 && strncmp(p, "error", 5) == 0)
				ok = tb_word(eq, n, error, sizeof error);
			/* Other keys: a later version's; ignored. */
			p = eq + n;
		}
		if (!ok) {
			snprintf(out->note, sizeof out->note, "the interpreter's "
			    "line is not oomdoc's protocol");
			return false;
		}
		p += strspn(p, " \n");
	}
	if (strcmp(error, "no-torch") == 0) {
		snprintf(out->note, sizeof out->note, "the interpreter has no "
		    "PyTorch (import torch failed)");
		return false;
	}
	if (error[0] != '\0') {
		snprintf(out->note, sizeof out->note, "PyTorch could not start "
		    "CUDA on this GPU (%s)", error);
		return false;
	}
	if (!pid || !fr || !tot || out->pid <= 0 || out->total <= 0 ||
	    out->free_b > out->total) {
		snprintf(out->note, sizeof out->note, "the interpreter's line "
		    "lacks the pid, free or total figure, or they read as "
		    "nonsense");
		return false;
	}
	out->ok = true;
	return true;
}

/* The environment with CUDA_VISIBLE_DEVICES=uuid in place of the one it
 * had; NULL when out of memory.  The strings are environ's and *own's. */
static char **
tb_env(const char *uuid, char **own)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	env = calloc(n + 2, sizeof *env);
	*own = malloc(strlen(uuid) + sizeof "CUDA_VISIBLE_DEVICES=");
	if (env == NULL || *own == NULL) {
		free(env);
		free(*own);
		return NULL;
	}
	sprintf(*own, "CUDA_VISIBLE_DEVICES=%s", uuid);
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) != 0)
			env[k++] = environ[i];
	env[k++] = *own;
	env[k] = NULL;
	return env;
}

/* Reads the child's first line before the deadline; false with the note
 * set on a timeout, a stop, or its end without one. */
static bool
tb_read_line(int fd, char *buf, size_t len, tb_reading *out)
{
	double deadline = dv_seconds() + TB_TIMEOUT;
	size_t used = 0;

	while (used < len - 1) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t got;
		int pr;

		if (dv_stopped()) {
			snprintf(out->note, sizeof out->note, "stopped by a "
			    "signal");
			return false;
		}
		if (dv_seconds() > deadline) {
			snprintf(out->note, sizeof out->note, "the interpreter "
			    "printed no reading in %.0f s", TB_TIMEOUT);
			return false;
		}
		pr = poll(&pfd, 1, 100);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		got = read(fd, buf + used, len - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;
		buf[used] = '\0';
		if (strchr(buf, '\n') != NULL)
			return true;
	}
	buf[used] = '\0';
	if (used > 0 && used == len - 1)
		return true;    /* a long line: tb_parse judges it */
	snprintf(out->note, sizeof out->note, "the interpreter ended without "
	    "a reading");
	return false;
}

/* Ends the child: its input closed, then killed after TB_EXIT_WAIT. */
static int
tb_reap(pid_t pid)
{
	double deadline = dv_seconds() + TB_EXIT_WAIT;
	int status = 0;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			return status;
		if (dv_seconds() > deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return status;
		}
		usleep(20000);
	}
}

bool
tb_run(const char *python, const char *uuid,
    void (*during)(void *arg, const tb_reading *r), void *arg,
    tb_reading *out)
{
	char prog[256], flag[] = "-c";
	char *argv[] = { prog, flag, tb_script, NULL };
	char line[TB_LINE_MAX], *own = NULL, **env;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	pid_t pid = -1;
	bool ok = false;
	int rc;

	memset(out, 0, sizeof *out);
	if (strlen(python) >= sizeof prog) {
		snprintf(out->note, sizeof out->note, "the interpreter's name "
		    "is longer than %zu bytes", sizeof prog - 1);
		return false;
	}
	snprintf(prog, sizeof prog, "%s", python);
	if (uuid == NULL || uuid[0] == '\0') {
		snprintf(out->note, sizeof out->note, "the GPU probed has no "
		    "UUID to give the interpreter's CUDA_VISIBLE_DEVICES");
		return false;
	}
	env = tb_env(uuid, &own);
	if (env == NULL || pipe(in) != 0 || pipe(outp) != 0) {
		snprintf(out->note, sizeof out->note, "cannot start %.100s: "
		    "%s", python, env == NULL ? "out of memory" :
		    strerror(errno));
		goto done;
	}
	(void)fcntl(in[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(outp[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&pid, python, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(in[0]);
	close(outp[1]);
	in[0] = outp[1] = -1;
	if (rc != 0) {
		pid = -1;
		snprintf(out->note, sizeof out->note, "cannot start %.100s: %s",
		    python, strerror(rc));
		goto done;
	}
	if (tb_read_line(outp[0], line, sizeof line, out)) {
		char note[sizeof out->note];

		ok = tb_parse(line, out);
		if (ok) {
			during(arg, out);
		} else {
			snprintf(note, sizeof note, "%s", out->note);
			snprintf(out->note, sizeof out->note, "%.100s: %.120s",
			    python, note);
		}
	}
done:
	if (in[1] >= 0)
		close(in[1]);
	if (pid > 0) {
		int status = tb_reap(pid);

		/* An exec that failed in the child after the spawn returned
		 * shows as its exit status 127. */
		if (!ok && WIFEXITED(status) && WEXITSTATUS(status) == 127)
			snprintf(out->note, sizeof out->note, "cannot run "
			    "%.100s (not found)", python);
	}
	if (outp[0] >= 0)
		close(outp[0]);
	if (in[0] >= 0)
		close(in[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	free(env);
	free(own);
	return ok;
}
