/*
 * fusethreads.c: an LD_PRELOAD shim that sets libfuse's worker-thread cap
 * for nbdfuse, so that bench/slowdev.sh's device serves exactly N reads at
 * once.
 *
 * nbdfuse (libnbd 1.14) enters libfuse's multi-threaded loop through the
 * old fuse_loop_mt_32 entry point, which keeps libfuse's default of at
 * most 10 worker threads, and a FUSE worker thread is held for the whole
 * of each read. So however many NBD connections there are, at most 10
 * reads reach nbdkit at a time, and nbdfuse has no option to change it.
 * This shim replaces fuse_loop_mt_32 with a call to the 3.12 entry point
 * with max_threads (and max_idle_threads) set to $FUSE_MAX_THREADS, and
 * says so on stderr so that the script can check it was loaded.
 *
 * Build: cc -O2 -shared -fPIC -o fusethreads.so fusethreads.c -ldl
 * Use:   LD_PRELOAD=./fusethreads.so FUSE_MAX_THREADS=32 nbdfuse ...
 *
 * No libfuse headers are needed: the config is an opaque pointer handled
 * through libfuse's own setters, and fuse_loop_config_v1 is the two-field
 * struct of fuse_common.h (libfuse >= 3.12).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

struct fuse;
struct fuse_loop_config;

struct fuse_loop_config_v1 {
	int clone_fd;
	unsigned int max_idle_threads;
};

int fuse_loop_mt_32(struct fuse *f, struct fuse_loop_config_v1 *v1)
{
	struct fuse_loop_config *(*create)(void) =
		(struct fuse_loop_config * (*)(void)) dlsym(RTLD_DEFAULT, "fuse_loop_cfg_create");
	void (*set_clone_fd)(struct fuse_loop_config *, unsigned int) =
		(void (*)(struct fuse_loop_config *, unsigned int))dlsym(RTLD_DEFAULT, "fuse_loop_cfg_set_clone_fd");
	void (*set_idle)(struct fuse_loop_config *, unsigned int) =
		(void (*)(struct fuse_loop_config *, unsigned int))dlsym(RTLD_DEFAULT, "fuse_loop_cfg_set_idle_threads");
	void (*set_max)(struct fuse_loop_config *, unsigned int) =
		(void (*)(struct fuse_loop_config *, unsigned int))dlsym(RTLD_DEFAULT, "fuse_loop_cfg_set_max_threads");
	int (*loop)(struct fuse *, struct fuse_loop_config *) =
		(int (*)(struct fuse *, struct fuse_loop_config *))dlvsym(RTLD_NEXT, "fuse_loop_mt", "FUSE_3.12");
	const char *s = getenv("FUSE_MAX_THREADS");
	unsigned int n = s != NULL ? (unsigned int)strtoul(s, NULL, 10) : 0;
	struct fuse_loop_config *cfg;

	if (create == NULL || set_clone_fd == NULL || set_idle == NULL || set_max == NULL || loop == NULL) {
		fprintf(stderr, "fusethreads: libfuse has no fuse_loop_cfg_* API (needs libfuse >= 3.12)\n");
		return -1;
	}
	if (n == 0)
		n = 10;
	cfg = create();
	if (cfg == NULL)
		return -1;
	set_clone_fd(cfg, (unsigned int)v1->clone_fd);
	set_idle(cfg, n);
	set_max(cfg, n);
	fprintf(stderr, "fusethreads: max_threads=%u\n", n);
	return loop(f, cfg);
}
