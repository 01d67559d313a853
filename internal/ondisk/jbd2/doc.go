// Package jbd2 decodes the on-disk structures of the jbd2 journal used by
// ext3/ext4: the journal superblock, the common block header, descriptor
// blocks and their tags, commit blocks, revoke blocks, and the bounds of the
// fast-commit area. Every multi-byte field is big-endian (unlike ext4
// itself), except inside fast-commit blocks, which are little-endian.
//
// The package does no I/O. Fixed-size structures are named byte arrays
// (Superblock, Header) and variable-size blocks are small views over a
// caller-owned slice (Descriptor, Commit, Revoke); each field has one
// accessor reading at a named offset constant that carries the kernel field
// name. Constructors check lengths, and every accessor or iterator stays
// inside the slice, so no input makes this package panic. Iterating tags or
// revoke records allocates nothing.
//
// Checksums follow the kernel: the journal superblock carries
// crc32c(~0, superblock with s_checksum zeroed); with csum_v2/v3 every other
// checksum starts from the seed crc32c(~0, s_uuid) (Superblock.ChecksumSeed).
// Descriptor and revoke blocks end in a 4-byte tail checksum over the whole
// block with the tail zeroed; commit blocks store crc32c over the block with
// h_chksum[0] zeroed; data blocks are checked against the tag checksum
// crc32c(seed, be32 sequence, data) (32 bits with csum_v3, the low 16 with
// csum_v2). The v1 "compat checksum" is a big-endian crc32 over a whole
// transaction, kept in the commit block (Commit.V1ChecksumMatches).
//
// Superblock.Validate applies, in e2fsck's order, the rules e2fsck uses to
// accept a journal superblock (spec 2.6), and reports the first one that
// fails as a *ValidationError whose Rule names it. The clear-v2 condition
// (a V1 superblock with V2-only fields set, or an internal V2 journal
// claiming several users) is not fatal in e2fsck and is reported separately
// by Superblock.StrayV2Fields.
//
// Implemented: everything needed to scan and replay the normal log (all tag
// formats 8/10/12/14/16 bytes, 32/64-bit revoke records, v1/v2/v3
// checksums), and the geometry of the fast-commit area (Layout). Fast-commit
// blocks themselves (little-endian tag-length-value records HEAD, ADD_RANGE,
// DEL_RANGE, CREAT, LINK, UNLINK, INODE, PAD, TAIL) are only walked at the
// TLV level (FCRecords) with the head/tail fields decoded; replaying them is
// left for later.
//
// Names of feature bits follow dumpe2fs (lib/e2p); the fast-commit incompat
// bit has no name there and prints as FEATURE_I5, like dumpe2fs does.
package jbd2
