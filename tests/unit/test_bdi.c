/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_bdi.c - finding our FUSE mount's device in mountinfo (bdi.c):
 * lines as the kernel writes them, octal escapes in mount points, the
 * topmost of stacked mounts, types that are not FUSE, optional fields,
 * a buffer too small, and no match.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bdi.h"
#include "testutil.h"

static const char mountinfo[] =
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"40 22 0:38 / /mnt/plain rw,nosuid,nodev,relatime shared:20 - "
	"fuse.xtsfs /srv/vault rw,user_id=0,group_id=0\n"
	/* the same mount point, not FUSE: skipped */
	"41 22 0:39 / /mnt/tmp rw - tmpfs tmpfs rw\n"
	/* a space and a backslash in the path, no optional field */
	"42 22 0:40 / /mnt/my\\040vault\\134x rw - fuse.xtsfs /srv/v rw\n"
	/* stacked: a second FUSE mount over /mnt/plain, later in the file */
	"43 40 0:41 / /mnt/plain rw shared:21 master:3 - fuse.xtsfs /srv/w rw\n"
	/* a plain "fuse" type counts too */
	"44 22 0:42 / /mnt/other rw - fuse /dev/fuse rw\n"
	/* "-" as a mount point is a path, not the separator */
	"45 22 0:43 / - rw - fuse.xtsfs /srv/dash rw\n";

static int find(const char *mnt, char *dev, unsigned size)
{
	FILE *f = fmemopen((void *)mountinfo, sizeof(mountinfo) - 1, "r");
	int err;

	if (!f) {
		perror("fmemopen");
		return -EIO;
	}
	err = bdi_find_in(f, mnt, dev, size);
	fclose(f);
	return err;
}

static void expect(const char *mnt, int want_err, const char *want_dev)
{
	char dev[32] = "";
	int err = find(mnt, dev, sizeof(dev));

	CHECK(err == want_err, "%s: error %d, want %d", mnt, err, want_err);
	if (!want_err)
		CHECK(!strcmp(dev, want_dev), "%s: device %s, want %s", mnt,
		      dev, want_dev);
}

int main(void)
{
	char small[4];

	expect("/mnt/plain", 0, "0:41");         /* the top one */
	expect("/mnt/my vault\\x", 0, "0:40");   /* escapes undone */
	expect("/mnt/my\\040vault\\134x", -ENOENT, "");
	expect("/mnt/other", 0, "0:42");
	expect("-", 0, "0:43");
	expect("/mnt/tmp", -ENOENT, "");         /* not FUSE */
	expect("/", -ENOENT, "");                /* ext4 */
	expect("/mnt/plai", -ENOENT, "");        /* no prefix matches */
	expect("/mnt/plain/", -ENOENT, "");
	CHECK(find("/mnt/plain", small, sizeof(small)) == -ENAMETOOLONG,
	      "a device name longer than the buffer");
	if (test_failures) {
		printf("test_bdi: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_bdi: all passed\n");
	return 0;
}
