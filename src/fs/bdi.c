/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bdi.c - raise the readahead window of our own FUSE mount (see bdi.h).
 */
#include "bdi.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Undo mountinfo's octal escapes (\040 for a space, ...) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* see bdi.h */
int bdi_find(const char *mountpoint, char *devname, unsigned size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err;

	if (!f)
		return -errno;
	err = bdi_find_in(f, mountpoint, devname, size);
	fclose(f);
	return err;
}

/* see bdi.h */
int bdi_find_in(FILE *f, const char *mountpoint, char *devname,
		unsigned size)
{
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	/*
	 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SRC SOPTS";
	 * later lines are mounted later, so the last match is the top one.
	 */
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *dev, *mnt, *tok;
		int field = 0;

		dev = mnt = NULL;
		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			field++;
			if (field == 3)
				dev = tok;
			else if (field == 5)
				mnt = tok;
			else if (field > 6 && !strcmp(tok, "-"))
				break;
		}
		tok = strtok_r(NULL, " \n", &save); /* the type, after "-" */
		if (!dev || !mnt || !tok || strncmp(tok, "fuse", 4))
			continue;
		unescape(mnt);
		if (strcmp(mnt, mountpoint))
			continue;
		if (strlen(dev) >= size) {
			err = -ENAMETOOLONG;
			continue;
		}
		strcpy(devname, dev);
		err = 0;
	}
	free(line);
	return err;
}

static int read_number(const char *path, const char *key, uint64_t *out);

static int write_sysfs(const char *path, unsigned value)
{
	char buf[16];
	int fd, n, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%u\n", value);
	if (write(fd, buf, (size_t)n) != n)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

/* see bdi.h */
int bdi_tune_once(struct bdi_tune *t)
{
	char dev[32], path[96];
	int expected = 0, err;

	if (atomic_load_explicit(&t->state, memory_order_acquire) == 2)
		return 0;
	if (!atomic_compare_exchange_strong(&t->state, &expected, 1)) {
		/* another thread is at it: its dirty limit must hold first */
		while (atomic_load_explicit(&t->state,
					    memory_order_acquire) != 2)
			sched_yield();
		return 0;
	}
	if (!t->mountpoint || (!t->read_ahead_kb && !t->dirty_ppm)) {
		t->dirty_err = -ENOENT;
		atomic_store_explicit(&t->state, 2, memory_order_release);
		return 0;
	}
	err = bdi_find(t->mountpoint, dev, sizeof(dev));
	t->dirty_err = err;
	if (!err && t->dirty_ppm) {
		uint64_t strict = 0, ppm = 0;

		/* as root; else FUSE's own limit stays, read below */
		snprintf(path, sizeof(path), "/sys/class/bdi/%s/strict_limit",
			 dev);
		(void)write_sysfs(path, 1);
		t->dirty_err = read_number(path, NULL, &strict);
		snprintf(path, sizeof(path),
			 "/sys/class/bdi/%s/max_ratio_fine", dev);
		(void)write_sysfs(path, t->dirty_ppm);
		if (!t->dirty_err)
			t->dirty_err = read_number(path, NULL, &ppm);
		if (!t->dirty_err && (!strict || !ppm || ppm > 1000000))
			t->dirty_err = -EPERM;
		t->dirty_ppm_now = (unsigned)ppm;
	}
	if (!err && t->read_ahead_kb) {
		snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb",
			 dev);
		err = write_sysfs(path, t->read_ahead_kb);
	} else if (!t->read_ahead_kb) {
		err = 0;
	}
	atomic_store_explicit(&t->state, 2, memory_order_release);
	return err;
}

/* see bdi.h */
uint64_t bdi_limit_from(uint64_t dirty_bytes, unsigned dirty_ratio,
			uint64_t mem_total)
{
	if (dirty_bytes)
		return dirty_bytes;
	return mem_total / 100 * dirty_ratio;
}

/* The first number in file @path (after @key), or -errno. */
static int read_number(const char *path, const char *key, uint64_t *out)
{
	FILE *f = fopen(path, "re");
	char line[256];
	int err = -ENODATA;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char *p = line;

		if (key) {
			if (strncmp(line, key, strlen(key)))
				continue;
			p += strlen(key);
		}
		if (sscanf(p, "%llu", &v) == 1) {
			*out = v;
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

/* see bdi.h */
int bdi_limit_max(uint64_t *bytes)
{
	uint64_t db = 0, ratio = 0, kb = 0;
	int err = read_number("/proc/sys/vm/dirty_bytes", NULL, &db);

	if (!err && !db)
		err = read_number("/proc/sys/vm/dirty_ratio", NULL, &ratio);
	if (!err && !db)
		err = read_number("/proc/meminfo", "MemTotal:", &kb);
	if (err)
		return err;
	*bytes = bdi_limit_from(db, (unsigned)ratio, kb * 1024);
	return *bytes ? 0 : -EINVAL;
}
