/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crc32c.h - CRC-32C (Castagnoli): reflected polynomial 0x82F63B78,
 * initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF; the CRC of iSCSI
 * (RFC 3720 appendix B.4), SCTP, ext4 and btrfs.
 *
 * An error-detecting code for on-disk structures (the volume header):
 * it catches torn writes and bit rot before any key material is looked
 * at. It is not a MAC and proves nothing against an attacker; integrity
 * against tampering is the job of the key wrap check and of CMAC.
 * The data it covers is public, so a plain lookup table is fine here.
 */
#ifndef XTSFS_CRC32C_H
#define XTSFS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * crc32c() - the CRC-32C of @len bytes at @buf.
 * @buf: the data; NULL is allowed when @len is 0.
 * @len: the number of bytes.
 *
 * Return: the CRC, with the final XOR applied: crc32c("123456789", 9) is
 * 0xE3069283 and crc32c(NULL, 0) is 0. Store it little-endian, as iSCSI
 * and ext4 do, if a byte order is needed.
 */
uint32_t crc32c(const void *buf, size_t len);

#endif /* XTSFS_CRC32C_H */
