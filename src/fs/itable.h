/* SPDX-License-Identifier: Apache-2.0 */
/*
 * itable.h - the inode table: the objects the kernel holds references
 * to, found by a key of three numbers, with the kernel's lookup count.
 * The forward mount keys lower objects by (0, st_dev, st_ino); reverse
 * mode keys what its view shows by (kind, two numbers of that kind). No
 * FUSE types: the front ends embed a struct itable_node as the first
 * member of their own inode struct and keep everything else there.
 *
 * The table grows (it doubles once it holds two entries a bucket), so a
 * walk over a million files costs what a walk over a thousand does per
 * lookup. One mutex guards the buckets and every count; nodes are freed
 * by the caller, outside it.
 */
#ifndef XTSFS_ITABLE_H
#define XTSFS_ITABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* struct itable_node - the table's part of an inode. */
struct itable_node {
	struct itable_node *next; /* hash chain; the table's lock */
	unsigned kind;            /* the key: what k1 and k2 mean ... */
	uint64_t k1, k2;          /* ... e.g. st_dev and st_ino */
	uint64_t nlookup;         /* kernel references; the table's lock */
};

/* struct itable - the table. Fields are private to itable.c. */
struct itable {
	pthread_mutex_t lock;
	struct itable_node **bucket; /* size entries, a power of two */
	size_t size;
	size_t count;                /* nodes in the table */
	size_t high;                 /* the most since itable_shrunk() said so */
};

/*
 * itable_init() - an empty table of @size buckets (a power of two, the
 * table grows from there).
 * Return: 0 or -ENOMEM.
 */
int itable_init(struct itable *t, size_t size);

/*
 * itable_destroy() - call @free_node on every node still in @t (their
 * references no longer matter: the session is over), then free @t's
 * buckets. @free_node may be NULL.
 */
void itable_destroy(struct itable *t, void (*free_node)(struct itable_node *));

/*
 * itable_ref() - the node of key (@kind, @k1, @k2) with one more
 * reference, or NULL if the table has none.
 */
struct itable_node *itable_ref(struct itable *t, unsigned kind, uint64_t k1,
			       uint64_t k2);

/* itable_hold() - one more reference to @n, which the caller holds. */
void itable_hold(struct itable *t, struct itable_node *n);

/*
 * itable_insert() - @n (its key set, in no table) with one reference,
 * unless the table has a node of that key already: then that one, with
 * one more reference, and @n is left to the caller to free. The caller
 * tells which by comparing the result with @n.
 */
struct itable_node *itable_insert(struct itable *t, struct itable_node *n);

/*
 * itable_forget() - drop @count references to @n (all of them if @count
 * is more: the kernel's FORGET counts are the truth). Return: true if
 * none is left and @n has left the table (the caller frees it), else
 * false.
 */
bool itable_forget(struct itable *t, struct itable_node *n, uint64_t count);

/*
 * itable_snapshot() - up to @max of the nodes in @t into @out, each with
 * one more reference (the caller drops them). Return: how many.
 */
size_t itable_snapshot(struct itable *t, struct itable_node **out,
		       size_t max);

/*
 * itable_shrunk() - whether @t once held at least @min nodes and now holds
 * a quarter of that or less; when it says so, the count starts again
 * from what is left (so it says it once per shrink).
 */
bool itable_shrunk(struct itable *t, size_t min);

/* itable_count() - the number of nodes in @t (a snapshot). */
size_t itable_count(struct itable *t);

#endif /* XTSFS_ITABLE_H */
