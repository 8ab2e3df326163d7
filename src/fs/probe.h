/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe.h - does a cipher directory fit a volume key? When the header
 * is lost, the key text's description (FORMAT.md 2.6) stands in for it;
 * before anything is decrypted with it, the names in the root must not
 * contradict it, so that a key for another volume, or a wrong guess of
 * the plaintext-names flag, is refused instead of mounted as garbage.
 */
#ifndef XTSFS_PROBE_H
#define XTSFS_PROBE_H

#include <stdint.h>

#include "volume.h"

/*
 * vol_probe() - check the root of the cipher directory @dirfd against
 * @keys and @flags (VOL_FLAG_*).
 * Encrypted names: a stored name in the root (or a long name's sidecar)
 * that decrypts under the root dirid proves both the names key and the
 * flag; without such a proof, root entries that look like stored names
 * but do not decrypt, or names that cannot be stored names (but
 * lost+found and xtsfs's own), are evidence against.
 * Plaintext names: an entry that decrypts, an "xtsfs.long.*" entry, or a
 * subdirectory holding "xtsfs.dirid" is evidence against; nothing can
 * prove the key there (its names are not encrypted).
 * @why: on -EKEYREJECTED, a phrase saying what contradicts.
 * Return: 1 proven; 0 nothing either way (an empty root, or plaintext
 * names); -EKEYREJECTED evidence against; -ENOMEM or -errno of reading.
 */
int vol_probe(int dirfd, const struct vol_keys *keys, uint32_t flags,
	      const char **why);

#endif /* XTSFS_PROBE_H */
