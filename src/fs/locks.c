/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locks.c - POSIX record locks on the lower file, for -o sharedstorage
 * (mount.h): the kernel's own locks hold only within one mount, so two
 * mounts (two machines on a network filesystem) could both hold a write
 * lock on one range. Each lock owner the kernel names gets its own open
 * file description of the lower file, and the lock is an OFD lock on
 * it: OFD locks of different descriptions conflict even within one
 * process, so the daemon's one process keeps the kernel's owners apart,
 * and the lower filesystem (a network one forwarding locks) keeps other
 * mounts out. One owner's locks merge and split as POSIX locks do.
 */
#include "mount_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* struct xlock_owner - one lock owner's description of the lower file. */
struct xlock_owner {
	uint64_t owner;
	int fd;
	struct xlock_owner *next;
};

/* The description of @owner (made if @make), or NULL / -errno in *@err. */
static struct xlock_owner *owner_fd(struct xmount *m, struct xnode *in,
				    uint64_t owner, bool make, int *err)
{
	struct xlock_owner *o;

	*err = 0;
	for (o = in->lk_owners; o; o = o->next)
		if (o->owner == owner)
			return o;
	if (!make)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	o->fd = reopen(in, m->readonly ? O_RDONLY : O_RDWR);
	if (o->fd < 0) {
		*err = o->fd;
		free(o);
		return NULL;
	}
	o->owner = owner;
	o->next = in->lk_owners;
	in->lk_owners = o;
	return o;
}

/* Close and forget @owner's description (its locks go with it). */
static void owner_drop(struct xnode *in, uint64_t owner)
{
	for (struct xlock_owner **p = &in->lk_owners; *p; p = &(*p)->next)
		if ((*p)->owner == owner) {
			struct xlock_owner *o = *p;

			*p = o->next;
			close(o->fd);
			free(o);
			return;
		}
}

/* see mount.h */
void xm_locks_drop(struct xnode *in, bool idle_only)
{
	pthread_mutex_lock(&in->seen_lock);
	while (in->lk_owners && !(idle_only && in->handles))
		owner_drop(in, in->lk_owners->owner);
	pthread_mutex_unlock(&in->seen_lock);
}

/* see mount.h */
int xm_setlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     const struct flock *fl)
{
	struct xnode *in = h->in;
	struct flock l = *fl;
	struct xlock_owner *o;
	int err;

	l.l_pid = 0; /* OFD locks want 0 */
	pthread_mutex_lock(&in->seen_lock);
	if (l.l_type == F_UNLCK && l.l_whence == SEEK_SET && !l.l_start &&
	    !l.l_len) {
		/* the whole file: as at close(2); its description goes */
		owner_drop(in, owner);
		pthread_mutex_unlock(&in->seen_lock);
		return 0;
	}
	o = owner_fd(m, in, owner, l.l_type != F_UNLCK, &err);
	if (o && fcntl(o->fd, F_OFD_SETLK, &l) != 0)
		err = errno == EACCES ? -EAGAIN : -errno;
	pthread_mutex_unlock(&in->seen_lock);
	return err;
}

/* see mount.h */
int xm_getlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     struct flock *fl)
{
	struct xnode *in = h->in;
	struct xlock_owner *o;
	int err;

	fl->l_pid = 0;
	pthread_mutex_lock(&in->seen_lock);
	o = owner_fd(m, in, owner, true, &err);
	if (o && fcntl(o->fd, F_OFD_GETLK, fl) != 0)
		err = -errno;
	pthread_mutex_unlock(&in->seen_lock);
	/* the holder may be another mount, another machine: no pid */
	if (!err && fl->l_type != F_UNLCK)
		fl->l_pid = 0;
	return err;
}
