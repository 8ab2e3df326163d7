/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_kabi.h - the little of the kernel's FUSE protocol
 * (include/uapi/linux/fuse.h) that our own I/O hooks read and write, in
 * our own names: the message headers, the INIT flags libfuse 3.14
 * (Debian 12) leaves out, and FUSE over io_uring (protocol 7.42, Linux
 * 6.14), which its fuse_kernel.h predates (the system's linux/fuse.h may
 * be older than the running kernel too). Used by fuse_glue.c and
 * fuse_uring.c.
 *
 * FUSE over io_uring: after INIT (whose reply carries FUSE_OVER_IO_URING, bit
 * 41 of the flags, so bit 9 of flags2), the daemon sends, on an io_uring
 * set up with 128-byte SQEs, IORING_OP_URING_CMD commands on the
 * /dev/fuse descriptor, their 80-byte command area holding a
 * struct k_uring_cmd_req:
 *   - REGISTER, with sqe->addr pointing to two iovecs: a request-header
 *     buffer (struct k_uring_req_header) and a payload buffer of at
 *     least the connection's largest request (max(8 KiB, max_write,
 *     max_pages pages)); it completes when a request has been copied
 *     into them;
 *   - COMMIT_AND_FETCH, with the commit_id of the request answered: the
 *     reply is read from the same buffers and the entry waits for the
 *     next request, its completion bringing that one.
 * Every possible CPU needs its own queue (qid = CPU number) with at
 * least one entry before the kernel uses any: until then it holds every
 * new request back (fs/fuse/dev.c, fuse_block_alloc), and afterwards a
 * request goes to the queue of the CPU its caller runs on.
 */
#ifndef XTSFS_FUSE_KABI_H
#define XTSFS_FUSE_KABI_H

#include <stdint.h>

#define K_FUSE_INIT 26

/* INIT flags (the first word) */
#define K_PARALLEL_DIROPS (1u << 18)
#define K_MAX_PAGES (1u << 22)        /* the reply's max_pages is valid */
#define K_HANDLE_KILLPRIV_V2 (1u << 28)
#define K_INIT_EXT (1u << 30)         /* flags2 is valid */

/*
 * Bit 0 of a unique: an INTERRUPT (and its reply), for the request whose
 * unique is the rest.
 */
#define K_INT_REQ_BIT 1ull

/* struct fuse_in_header: every request starts with it */
struct k_in_header {
	uint32_t len;         /* bytes of the whole request */
	uint32_t opcode;
	uint64_t unique;
	uint64_t nodeid;
	uint32_t uid, gid, pid;
	uint16_t total_extlen, padding;
};

/* struct fuse_out_header: every reply starts with it */
struct k_out_header {
	uint32_t len;         /* bytes of the whole reply */
	int32_t error;        /* 0 or -errno */
	uint64_t unique;      /* the request answered; 0 a notification */
};

/*
 * FUSE_NOTIFY_PRUNE (protocol 7.45, Linux 6.18): after the header,
 * struct fuse_notify_prune_out, then count 64-bit node ids the kernel
 * drops from its caches if nothing uses them (unknown to older kernels:
 * the write fails with EINVAL).
 */
#define K_NOTIFY_PRUNE 9
struct k_notify_prune_out {
	uint32_t count, padding;
	uint64_t spare;
};

/*
 * FUSE_NOTIFY_INVAL_ENTRY, with the flags word that was padding before
 * protocol 7.38 (Linux 6.2): FUSE_EXPIRE_ONLY ends the entry's timeout
 * instead of dropping the dentry (older kernels ignore the word and drop
 * it). The name and a NUL follow.
 */
#define K_NOTIFY_INVAL_ENTRY 3
#define K_EXPIRE_ONLY (1u << 0)
struct k_notify_inval_entry_out {
	uint64_t parent;
	uint32_t namelen, flags;
};

/* the start of struct fuse_init_in */
struct k_init_in {
	uint32_t major, minor, max_readahead, flags;
};

/* the start of struct fuse_init_out, up to flags2 */
struct k_init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write;   /* bytes */
	uint32_t time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2;      /* with K_INIT_EXT: flags bits 32-63 */
};

_Static_assert(sizeof(struct k_in_header) == 40, "fuse_in_header");
_Static_assert(sizeof(struct k_out_header) == 16, "fuse_out_header");
_Static_assert(sizeof(struct k_notify_prune_out) == 16, "fuse_notify_prune_out");
_Static_assert(sizeof(struct k_notify_inval_entry_out) == 16,
	       "fuse_notify_inval_entry_out");
_Static_assert(sizeof(struct k_init_out) == 36, "fuse_init_out to flags2");

/* FUSE_OVER_IO_URING, in the INIT flags2 word (1ULL << 41 overall) */
#define K2_OVER_IO_URING (1u << 9)

/* FUSE_DIRECT_IO_ALLOW_MMAP, in flags2 (1ULL << 36 overall) */
#define K2_DIRECT_IO_ALLOW_MMAP (1u << 4)

/* the commands, in sqe->cmd_op (enum fuse_uring_cmd) */
#define K_URING_CMD_REGISTER 1u
#define K_URING_CMD_COMMIT_AND_FETCH 2u

/* sizes of the two areas at the start of the request-header buffer */
#define K_URING_IN_OUT_HEADER_SZ 128
#define K_URING_OP_IN_OUT_SZ 128

/* struct fuse_uring_ent_in_out: the last part of the header buffer */
struct k_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;   /* the request's unique, for the commit */
	uint32_t payload_sz;  /* bytes used in the payload buffer, both ways */
	uint32_t padding;
	uint64_t reserved;
};

/*
 * struct fuse_uring_req_header: iov[0] of a REGISTER. The kernel puts
 * the request's fuse_in_header in in_out, its first argument (the
 * opcode's fixed struct, which may be empty) in op_in and the rest in
 * the payload buffer; the reply's fuse_out_header goes in in_out and
 * all of its arguments in the payload buffer.
 */
struct k_uring_req_header {
	char in_out[K_URING_IN_OUT_HEADER_SZ];
	char op_in[K_URING_OP_IN_OUT_SZ];
	struct k_uring_ent_in_out ring_ent_in_out;
};

/* struct fuse_uring_cmd_req: in the 80-byte command area of the SQE */
struct k_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;   /* COMMIT_AND_FETCH: the request answered */
	uint16_t qid;         /* the queue (CPU) */
	uint8_t padding[6];
};

_Static_assert(sizeof(struct k_uring_ent_in_out) == 32, "ent_in_out");
_Static_assert(sizeof(struct k_uring_req_header) == 288, "req_header");
_Static_assert(sizeof(struct k_uring_cmd_req) == 24, "cmd_req");

#endif /* XTSFS_FUSE_KABI_H */
