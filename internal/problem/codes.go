package problem

// The problem codes, one per entry of e2fsck's problem table, with the
// same names and numbers as e2fsck. The comment after each code is its
// message with the abbreviations expanded.

// Pre-pass: superblock, group descriptors, journal, orphans, resize inode, quota, MMP.
const (
	PR_0_BB_NOT_GROUP                   Code = 0x000001 // Block bitmap for group %g is not in group.  (block %b)
	PR_0_IB_NOT_GROUP                   Code = 0x000002 // Inode bitmap for group %g is not in group.  (block %b)
	PR_0_ITABLE_NOT_GROUP               Code = 0x000003 // Inode table for group %g is not in group.  (block %b)
	PR_0_SB_CORRUPT                     Code = 0x000004 // The superblock could not be read or does not describe a valid ext2/ext3/ext4
	PR_0_FS_SIZE_WRONG                  Code = 0x000005 // The filesystem size (according to the superblock) is %b blocks
	PR_0_NO_FRAGMENTS                   Code = 0x000006 // Superblock block_size = %b, fragsize = %c.
	PR_0_BLOCKS_PER_GROUP               Code = 0x000007 // Superblock blocks_per_group = %b, should have been %c
	PR_0_FIRST_DATA_BLOCK               Code = 0x000008 // Superblock first_data_block = %b, should have been %c
	PR_0_ADD_UUID                       Code = 0x000009 // Filesystem did not have a UUID; generating one.
	PR_0_RELOCATE_HINT                  Code = 0x00000a // Note: if several inode or block bitmap blocks or part
	PR_0_MISC_CORRUPT_SUPER             Code = 0x00000b // Corruption found in superblock.  (%s = %N).
	PR_0_GETSIZE_ERROR                  Code = 0x00000c // Error determining size of the physical device: %m
	PR_0_INODE_COUNT_WRONG              Code = 0x00000d // Inode count in superblock is %i, should be %j.
	PR_0_HURD_CLEAR_FILETYPE            Code = 0x00000e // The Hurd does not support the filetype feature.
	PR_0_JOURNAL_BAD_INODE              Code = 0x00000f // Superblock has an invalid journal (inode %i).
	PR_0_JOURNAL_UNSUPP_MULTIFS         Code = 0x000010 // External journal has multiple filesystem users (unsupported).
	PR_0_CANT_FIND_JOURNAL              Code = 0x000011 // Can't find external journal
	PR_0_EXT_JOURNAL_BAD_SUPER          Code = 0x000012 // External journal has bad superblock
	PR_0_JOURNAL_BAD_UUID               Code = 0x000013 // External journal does not support this filesystem
	PR_0_JOURNAL_UNSUPP_SUPER           Code = 0x000014 // Filesystem journal superblock is unknown type %N (unsupported).
	PR_0_JOURNAL_BAD_SUPER              Code = 0x000015 // Journal superblock is corrupt.
	PR_0_JOURNAL_HAS_JOURNAL            Code = 0x000016 // Superblock has_journal flag is clear, but a journal is present.
	PR_0_JOURNAL_RECOVER_SET            Code = 0x000017 // Superblock needs_recovery flag is set, but no journal is present.
	PR_0_JOURNAL_RECOVERY_CLEAR         Code = 0x000018 // Superblock needs_recovery flag is clear, but journal has data.
	PR_0_JOURNAL_RESET_JOURNAL          Code = 0x000019 // Clear journal
	PR_0_FS_REV_LEVEL                   Code = 0x00001a // Filesystem has feature flag(s) set, but is a revision 0 filesystem.
	PR_0_ORPHAN_CLEAR_INODE             Code = 0x000020 // %s orphaned inode %i (uid=%Iu, gid=%Ig, mode=%Im, size=%Is)
	PR_0_ORPHAN_ILLEGAL_BLOCK_NUM       Code = 0x000021 // Illegal %B (%b) found in orphaned inode %i.
	PR_0_ORPHAN_ALREADY_CLEARED_BLOCK   Code = 0x000022 // Already cleared %B (%b) found in orphaned inode %i.
	PR_0_ORPHAN_ILLEGAL_HEAD_INODE      Code = 0x000023 // Illegal orphaned inode %i in superblock.
	PR_0_ORPHAN_ILLEGAL_INODE           Code = 0x000024 // Illegal inode %i in orphaned inode list.
	PR_0_JOURNAL_UNSUPP_ROCOMPAT        Code = 0x000025 // Journal superblock has an unknown read-only feature flag set.
	PR_0_JOURNAL_UNSUPP_INCOMPAT        Code = 0x000026 // Journal superblock has an unknown incompatible feature flag set.
	PR_0_JOURNAL_UNSUPP_VERSION         Code = 0x000027 // Journal version not supported by this e2fsck.
	PR_0_MOVE_JOURNAL                   Code = 0x000028 // Moving journal from /%s to hidden inode.
	PR_0_ERR_MOVE_JOURNAL               Code = 0x000029 // Error moving journal: %m
	PR_0_CLEAR_V2_JOURNAL               Code = 0x00002a // Found invalid V2 journal superblock fields (from V1 journal).
	PR_0_JOURNAL_RUN                    Code = 0x00002b // Run journal anyway
	PR_0_JOURNAL_RUN_DEFAULT            Code = 0x00002c // Recovery flag not set in backup superblock, so running journal anyway.
	PR_0_BACKUP_JNL                     Code = 0x00002d // Backing up journal inode block information.
	PR_0_NONZERO_RESERVED_GDT_BLOCKS    Code = 0x00002e // Filesystem does not have resize_inode enabled, but s_reserved_gdt_blocks
	PR_0_CLEAR_RESIZE_INODE             Code = 0x00002f // Resize_inode not enabled, but the resize inode is non-zero.
	PR_0_RESIZE_INODE_INVALID           Code = 0x000030 // Resize inode not valid.
	PR_0_FUTURE_SB_LAST_MOUNT           Code = 0x000031 // Superblock last mount time (%t,
	PR_0_FUTURE_SB_LAST_WRITE           Code = 0x000032 // Superblock last write time (%t,
	PR_0_EXTERNAL_JOURNAL_HINT          Code = 0x000033 // Superblock hint for external superblock should be %X.
	PR_0_DIRHASH_HINT                   Code = 0x000034 // Adding dirhash hint to filesystem.
	PR_0_GDT_CSUM                       Code = 0x000035 // Group descriptor %g checksum is %04x, should be %04y.
	PR_0_GDT_UNINIT                     Code = 0x000036 // Group descriptor %g marked uninitialized without feature set.
	PR_0_GDT_ITABLE_UNUSED              Code = 0x000038 // Group descriptor %g has invalid unused inodes count %b.
	PR_0_BB_UNINIT_LAST                 Code = 0x000039 // Last group block bitmap uninitialized.
	PR_0_JNL_TXN_CORRUPT                Code = 0x00003a // Journal transaction %i was corrupt, replay was aborted.
	PR_0_CLEAR_TESTFS_FLAG              Code = 0x00003b // The test_fs flag is set (and ext4 is available).
	PR_0_FUTURE_SB_LAST_MOUNT_FUDGED    Code = 0x00003c // Superblock last mount time is in the future.
	PR_0_FUTURE_SB_LAST_WRITE_FUDGED    Code = 0x00003d // Superblock last write time is in the future.
	PR_0_GDT_CSUM_LATCH                 Code = 0x00003e // One or more block group descriptor checksums are invalid.
	PR_0_FREE_INODE_COUNT               Code = 0x00003f // Setting free inodes count to %j (was %i)
	PR_0_FREE_BLOCK_COUNT               Code = 0x000040 // Setting free blocks count to %c (was %b)
	PR_0_HIDE_QUOTA                     Code = 0x000041 // Hiding %U quota inode %i (%Q).
	PR_0_MMP_INVALID_BLK                Code = 0x000042 // Superblock has invalid MMP block.
	PR_0_MMP_INVALID_MAGIC              Code = 0x000043 // Superblock has invalid MMP magic.
	PR_0_OPEN_FAILED                    Code = 0x000044 // ext2fs_open2: %m
	PR_0_CHECK_DESC_FAILED              Code = 0x000045 // ext2fs_check_desc: %m
	PR_0_META_AND_GDT_CSUM_SET          Code = 0x000046 // Superblock metadata_csum supersedes uninit_bg; both feature bits cannot be set simultan...
	PR_0_MMP_CSUM_INVALID               Code = 0x000047 // Superblock MMP block checksum does not match.
	PR_0_64BIT_WITHOUT_EXTENTS          Code = 0x000048 // Superblock 64bit filesystem needs extents to access the whole disk.
	PR_0_FIRST_META_BG_TOO_BIG          Code = 0x000049 // First_meta_bg is too big.  (%N, max value %g).
	PR_0_EXT_JOURNAL_SUPER_CSUM_INVALID Code = 0x00004a // External journal superblock checksum does not match superblock.
	PR_0_CSUM_SEED_WITHOUT_META_CSUM    Code = 0x00004b // Superblock metadata_csum_seed is not necessary without metadata_csum.
	PR_0_QUOTA_INIT_CTX                 Code = 0x00004c // Error initializing quota context in support library: %m
	PR_0_BAD_MIN_EXTRA_ISIZE            Code = 0x00004d // Bad required extra isize in superblock (%N).
	PR_0_BAD_WANT_EXTRA_ISIZE           Code = 0x00004e // Bad desired extra isize in superblock (%N).
	PR_0_INVALID_QUOTA_INO              Code = 0x00004f // Invalid %U quota inode %i.
	PR_0_INODE_COUNT_BIG                Code = 0x000050 // Superblock would have too many inodes (%N).
	PR_0_DISABLE_RESIZE_INODE           Code = 0x000051 // Resize_inode and meta_bg features are enabled. Those features are
	PR_0_ORPHAN_FILE_HOLE               Code = 0x000052 // Orphan file (inode %i) contains hole at block %b. Terminating orphan file recovery.
	PR_0_ORPHAN_FILE_BAD_MAGIC          Code = 0x000053 // Orphan file (inode %i) block %b contains wrong magic. Terminating orphan file recovery.
	PR_0_ORPHAN_FILE_BAD_CHECKSUM       Code = 0x000054 // Orphan file (inode %i) block %b contains wrong checksum. Terminating orphan file recovery.
	PR_0_ORPHAN_FILE_WRONG_SIZE         Code = 0x000055 // Orphan file (inode %i) size is not multiple of block size. Terminating orphan file reco...
)

// Pass 1: inodes, blocks and sizes.
const (
	PR_1_PASS_HEADER                    Code = 0x010000 // Pass 1: Checking inodes, blocks, and sizes
	PR_1_ROOT_NO_DIR                    Code = 0x010001 // Root inode is not a directory.
	PR_1_ROOT_DTIME                     Code = 0x010002 // Root inode has dtime set (probably due to old mke2fs).
	PR_1_RESERVED_BAD_MODE              Code = 0x010003 // Reserved inode %i (%Q) has invalid mode.
	PR_1_ZERO_DTIME                     Code = 0x010004 // Deleted inode %i has zero dtime.
	PR_1_SET_DTIME                      Code = 0x010005 // Inode %i is in use, but has dtime set.
	PR_1_ZERO_LENGTH_DIR                Code = 0x010006 // Inode %i is a zero-length directory.
	PR_1_BB_CONFLICT                    Code = 0x010007 // Group %g's block bitmap at %b conflicts with some other fs block.
	PR_1_IB_CONFLICT                    Code = 0x010008 // Group %g's inode bitmap at %b conflicts with some other fs block.
	PR_1_ITABLE_CONFLICT                Code = 0x010009 // Group %g's inode table at %b conflicts with some other fs block.
	PR_1_BB_BAD_BLOCK                   Code = 0x01000a // Group %g's block bitmap (%b) is bad.
	PR_1_IB_BAD_BLOCK                   Code = 0x01000b // Group %g's inode bitmap (%b) is bad.
	PR_1_BAD_I_SIZE                     Code = 0x01000c // Inode %i, i_size is %Is, should be %N.
	PR_1_BAD_I_BLOCKS                   Code = 0x01000d // Inode %i, i_blocks is %Ib, should be %N.
	PR_1_ILLEGAL_BLOCK_NUM              Code = 0x01000e // Illegal %B (%b) in inode %i.
	PR_1_BLOCK_OVERLAPS_METADATA        Code = 0x01000f // %B (%b) overlaps filesystem metadata in inode %i.
	PR_1_INODE_BLOCK_LATCH              Code = 0x010010 // Inode %i has illegal block(s).
	PR_1_TOO_MANY_BAD_BLOCKS            Code = 0x010011 // Too many illegal blocks in inode %i.
	PR_1_BB_ILLEGAL_BLOCK_NUM           Code = 0x010012 // Illegal %B (%b) in bad block inode.
	PR_1_INODE_BBLOCK_LATCH             Code = 0x010013 // Bad block inode has illegal block(s).
	PR_1_DUP_BLOCKS_PREENSTOP           Code = 0x010014 // Duplicate or bad block in use!
	PR_1_BBINODE_BAD_METABLOCK          Code = 0x010015 // Bad block %b used as bad block inode indirect block.
	PR_1_BBINODE_BAD_METABLOCK_PROMPT   Code = 0x010016 // The bad block inode has probably been corrupted.  You probably
	PR_1_BAD_PRIMARY_BLOCK              Code = 0x010017 // If the block is really bad, the filesystem can not be fixed.
	PR_1_BAD_PRIMARY_BLOCK_PROMPT       Code = 0x010018 // You can remove this block from the bad block list and hope
	PR_1_BAD_PRIMARY_SUPERBLOCK         Code = 0x010019 // The primary superblock (%b) is on the bad block list.
	PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR   Code = 0x01001a // Block %b in the primary group descriptors is on the bad block list
	PR_1_BAD_SUPERBLOCK                 Code = 0x01001b // Warning: Group %g's superblock (%b) is bad.
	PR_1_BAD_GROUP_DESCRIPTORS          Code = 0x01001c // Warning: Group %g's copy of the group descriptors has a bad block (%b).
	PR_1_PROGERR_CLAIMED_BLOCK          Code = 0x01001d // Programming error?  block #%b claimed for no reason in process_bad_block.
	PR_1_RELOC_BLOCK_ALLOCATE           Code = 0x01001e // Error allocating %N contiguous block(s) in block group %g for %s: %m
	PR_1_RELOC_MEMORY_ALLOCATE          Code = 0x01001f // Error allocating block buffer for relocating %s
	PR_1_RELOC_FROM_TO                  Code = 0x010020 // Relocating group %g's %s from %b to %c...
	PR_1_RELOC_TO                       Code = 0x010021 // Relocating group %g's %s to %c...
	PR_1_RELOC_READ_ERR                 Code = 0x010022 // Warning: could not read block %b of %s: %m
	PR_1_RELOC_WRITE_ERR                Code = 0x010023 // Warning: could not write block %b for %s: %m
	PR_1_ALLOCATE_IBITMAP_ERROR         Code = 0x010024 // Error allocating inode bitmap (%N): %m
	PR_1_ALLOCATE_BBITMAP_ERROR         Code = 0x010025 // Error allocating block bitmap (%N): %m
	PR_1_ALLOCATE_ICOUNT                Code = 0x010026 // Error allocating icount link information: %m
	PR_1_ALLOCATE_DBCOUNT               Code = 0x010027 // Error allocating directory block array: %m
	PR_1_ISCAN_ERROR                    Code = 0x010028 // Error while scanning inodes (%i): %m
	PR_1_BLOCK_ITERATE                  Code = 0x010029 // Error while iterating over blocks in inode %i: %m
	PR_1_ICOUNT_STORE                   Code = 0x01002a // Error storing inode count information (inode=%i, count=%N): %m
	PR_1_ADD_DBLOCK                     Code = 0x01002b // Error storing directory block information (inode=%i, block=%b, num=%N): %m
	PR_1_READ_INODE                     Code = 0x01002c // Error reading inode %i: %m
	PR_1_SUPPRESS_MESSAGES              Code = 0x01002d // After 12 illegal blocks in one inode, user declined to clear it.
	PR_1_SET_IMAGIC                     Code = 0x01002f // Inode %i has imagic flag set.
	PR_1_SET_IMMUTABLE                  Code = 0x010030 // Special (device/socket/fifo/symlink) file (inode %i) has immutable
	PR_1_SET_NONZSIZE                   Code = 0x010032 // Special (device/socket/fifo) inode %i has non-zero size.
	PR_1_FS_REV_LEVEL                   Code = 0x010033 // Filesystem has feature flag(s) set, but is a revision 0 filesystem.
	PR_1_JOURNAL_INODE_NOT_CLEAR        Code = 0x010034 // Journal inode is not in use, but contains data.
	PR_1_JOURNAL_BAD_MODE               Code = 0x010035 // Journal is not regular file.
	PR_1_LOW_DTIME                      Code = 0x010036 // Inode %i was part of the orphaned inode list.
	PR_1_ORPHAN_LIST_REFUGEES           Code = 0x010037 // Inodes that were part of a corrupted orphan linked list found.
	PR_1_ALLOCATE_REFCOUNT              Code = 0x010038 // Error allocating refcount structure (%N): %m
	PR_1_READ_EA_BLOCK                  Code = 0x010039 // Error reading extended attribute block %b for inode %i.
	PR_1_BAD_EA_BLOCK                   Code = 0x01003a // Inode %i has a bad extended attribute block %b.
	PR_1_EXTATTR_READ_ABORT             Code = 0x01003b // Error reading extended attribute block %b (%m).
	PR_1_EXTATTR_REFCOUNT               Code = 0x01003c // Extended attribute block %b has reference count %r, should be %N.
	PR_1_EXTATTR_WRITE_ABORT            Code = 0x01003d // Error writing extended attribute block %b (%m).
	PR_1_EA_MULTI_BLOCK                 Code = 0x01003e // Extended attribute block %b has h_blocks > 1.
	PR_1_EA_ALLOC_REGION_ABORT          Code = 0x01003f // Error allocating extended attribute region allocation structure.
	PR_1_EA_ALLOC_COLLISION             Code = 0x010040 // Extended attribute block %b is corrupt (allocation collision).
	PR_1_EA_BAD_NAME                    Code = 0x010041 // Extended attribute block %b is corrupt (invalid name).
	PR_1_EA_BAD_VALUE                   Code = 0x010042 // Extended attribute block %b is corrupt (invalid value).
	PR_1_INODE_TOOBIG                   Code = 0x010043 // Inode %i is too big.
	PR_1_TOOBIG_DIR                     Code = 0x010044 // %B (%b) causes directory to be too big.
	PR_1_TOOBIG_REG                     Code = 0x010045 // %B (%b) causes file to be too big.
	PR_1_TOOBIG_SYMLINK                 Code = 0x010046 // %B (%b) causes symlink to be too big.
	PR_1_HTREE_SET                      Code = 0x010047 // Inode %i has INDEX_FL flag set on filesystem without htree support.
	PR_1_HTREE_NODIR                    Code = 0x010048 // Inode %i has INDEX_FL flag set but is not a directory.
	PR_1_HTREE_BADROOT                  Code = 0x010049 // HTREE directory inode %i has an invalid root node.
	PR_1_HTREE_HASHV                    Code = 0x01004a // HTREE directory inode %i has an unsupported hash version (%N)
	PR_1_HTREE_INCOMPAT                 Code = 0x01004b // HTREE directory inode %i uses an incompatible htree root node flag.
	PR_1_HTREE_DEPTH                    Code = 0x01004c // HTREE directory inode %i has a tree depth (%N) which is too big
	PR_1_BB_FS_BLOCK                    Code = 0x01004d // Bad block inode has an indirect block (%b) that conflicts with
	PR_1_RESIZE_INODE_CREATE            Code = 0x01004e // Resize inode (re)creation failed: %m.
	PR_1_EXTRA_ISIZE                    Code = 0x01004f // Inode %i has a extra size (%IS) which is invalid
	PR_1_ATTR_NAME_LEN                  Code = 0x010050 // Extended attribute in inode %i has a namelen (%N) which is invalid
	PR_1_ATTR_VALUE_OFFSET              Code = 0x010051 // Extended attribute in inode %i has a value offset (%N) which is invalid
	PR_1_ATTR_VALUE_BLOCK               Code = 0x010052 // Extended attribute in inode %i has a value block (%N) which is invalid (must be 0)
	PR_1_ATTR_VALUE_SIZE                Code = 0x010053 // Extended attribute in inode %i has a value size (%N) which is invalid
	PR_1_ATTR_HASH                      Code = 0x010054 // Extended attribute in inode %i has a hash (%N) which is invalid
	PR_1_TREAT_AS_DIRECTORY             Code = 0x010055 // Inode %i is a %It but it looks like it is really a directory.
	PR_1_READ_EXTENT                    Code = 0x010056 // Error while reading over extent tree in inode %i: %m
	PR_1_EXTENT_ITERATE_FAILURE         Code = 0x010057 // Failed to iterate extents in inode %i
	PR_1_EXTENT_BAD_START_BLK           Code = 0x010058 // Inode %i has an invalid extent
	PR_1_EXTENT_ENDS_BEYOND             Code = 0x010059 // Inode %i has an invalid extent
	PR_1_EXTENTS_SET                    Code = 0x01005a // Inode %i has EXTENTS_FL flag set on filesystem without extents support.
	PR_1_EXTENT_FEATURE                 Code = 0x01005b // Inode %i is in extent format, but superblock is missing EXTENTS feature
	PR_1_UNSET_EXTENT_FL                Code = 0x01005c // Inode %i missing EXTENT_FL, but is in extents format
	PR_1_FAST_SYMLINK_EXTENT_FL         Code = 0x01005d // Fast symlink %i has EXTENT_FL set.
	PR_1_OUT_OF_ORDER_EXTENTS           Code = 0x01005e // Inode %i has out of order extents
	PR_1_EXTENT_HEADER_INVALID          Code = 0x01005f // Inode %i has an invalid extent node (blk %b, lblk %c)
	PR_1_CONVERT_SUBCLUSTER             Code = 0x010061 // Error converting subcluster block bitmap: %m
	PR_1_QUOTA_BAD_MODE                 Code = 0x010062 // Quota inode is not a regular file.
	PR_1_QUOTA_INODE_NOT_CLEAR          Code = 0x010063 // Quota inode is not in use, but contains data.
	PR_1_QUOTA_INODE_NOT_HIDDEN         Code = 0x010064 // Quota inode is visible to the user.
	PR_1_INVALID_BAD_INODE              Code = 0x010065 // The bad block inode looks invalid.
	PR_1_EXTENT_LENGTH_ZERO             Code = 0x010066 // Inode %i has zero length extent
	PR_1_INODE_IS_GARBAGE               Code = 0x010067 // Inode %i seems to contain garbage.
	PR_1_INODE_ONLY_CSUM_INVALID        Code = 0x010068 // Inode %i passes checks, but checksum does not match inode.
	PR_1_INODE_EA_ALLOC_COLLISION       Code = 0x010069 // Inode %i extended attribute is corrupt (allocation collision).
	PR_1_EXTENT_ONLY_CSUM_INVALID       Code = 0x01006a // Inode %i extent block passes checks, but checksum does not match extent
	PR_1_EA_BLOCK_ONLY_CSUM_INVALID     Code = 0x01006c // Inode %i extended attribute block %b passes checks, but checksum does not match block.
	PR_1_EXTENT_INDEX_START_INVALID     Code = 0x01006d // Interior extent node level %N of inode %i:
	PR_1_EXTENT_END_OUT_OF_BOUNDS       Code = 0x01006e // Inode %i, end of extent exceeds allowed value
	PR_1_INLINE_DATA_FEATURE            Code = 0x01006f // Inode %i has inline data, but superblock is missing INLINE_DATA feature
	PR_1_INLINE_DATA_SET                Code = 0x010070 // Inode %i has INLINE_DATA_FL flag on filesystem without inline data support.
	PR_1_CRITICAL_METADATA_COLLISION    Code = 0x010071 // Inode %i block %b conflicts with critical metadata, skipping block checks.
	PR_1_COLLAPSE_DBLOCK                Code = 0x010072 // Directory inode %i block %b should be at block %c.
	PR_1_UNINIT_DBLOCK                  Code = 0x010073 // Directory inode %i has extent marked uninitialized at block %c.
	PR_1_MISALIGNED_CLUSTER             Code = 0x010074 // Inode %i logical block %b (physical block %c) violates cluster allocation rules.
	PR_1_INLINE_DATA_NO_ATTR            Code = 0x010075 // Inode %i has INLINE_DATA_FL flag but extended attribute not found.
	PR_1_SPECIAL_EXTENTS_IDATA          Code = 0x010076 // Special (device/socket/fifo) file (inode %i) has extents
	PR_1_CLEAR_INLINE_DATA_FOR_EXTENT   Code = 0x010077 // Inode %i has extent header but inline data flag is set.
	PR_1_CLEAR_EXTENT_FOR_INLINE_DATA   Code = 0x010078 // Inode %i seems to have inline data but extent flag is set.
	PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS Code = 0x010079 // Inode %i seems to have block map but inline data and extent flags set.
	PR_1_CLEAR_EXTENT_INLINE_DATA_INODE Code = 0x01007a // Inode %i has inline data and extent flags set but i_block contains junk.
	PR_1_BADBLOCKS_IN_BADBLOCKS         Code = 0x01007b // Bad block list says the bad block list inode is bad.
	PR_1_EXTENT_ALLOC_REGION_ABORT      Code = 0x01007c // Error allocating extent region allocation structure.
	PR_1_EXTENT_COLLISION               Code = 0x01007d // Inode %i has a duplicate extent mapping
	PR_1_ALLOCATE_ENCRYPTED_INODE_LIST  Code = 0x01007e // Error allocating %N bytes of memory for encrypted inode list
	PR_1_EXTENT_BAD_MAX_DEPTH           Code = 0x01007f // Inode %i extent tree could be more shallow (%b; could be <= %c)
	PR_1_NO_BIGALLOC_BLOCKMAP_FILES     Code = 0x010080 // Inode %i on bigalloc filesystem cannot be block mapped.
	PR_1_MISSING_EXTENT_HEADER          Code = 0x010081 // Inode %i has corrupt extent header.
	PR_1_EA_TIME_OUT_OF_RANGE           Code = 0x010082 // Timestamp(s) on inode %i beyond 2310-04-04 are likely pre-1970.
	PR_1_ATTR_VALUE_EA_INODE            Code = 0x010083 // Inode %i has illegal extended attribute value inode %N.
	PR_1_ATTR_NO_EA_INODE_FL            Code = 0x010085 // Inode %i has invalid extended attribute. EA inode %N missing EA_INODE flag.
	PR_1_ATTR_SET_EA_INODE_FL           Code = 0x010086 // EA inode %N for parent inode %i missing EA_INODE flag.
	PR_1_CLEAR_UNINIT_EXTENT            Code = 0x010087 // Inode %i has extent marked uninitialized at block %c (len %N).
	PR_1_CASEFOLD_NONDIR                Code = 0x010088 // Inode %i has the casefold flag set but is not a directory.
	PR_1_CASEFOLD_FEATURE               Code = 0x010089 // Directory %p has the casefold flag, but the
	PR_1_MISSING_ENCRYPTION_XATTR       Code = 0x01008a // Inode %i has encrypt flag but no encryption extended attribute.
	PR_1_CORRUPT_ENCRYPTION_XATTR       Code = 0x01008b // Encrypted inode %i has corrupt encryption extended attribute.
	PR_1_HTREE_NEEDS_SIPHASH            Code = 0x01008d // HTREE directory inode %i uses hash version (%N), but should use SipHash (6)
	PR_1_HTREE_CANNOT_SIPHASH           Code = 0x01008e // HTREE directory inode %i uses SipHash, but should not.
	PR_1_ORPHAN_FILE_BAD_MODE           Code = 0x01008f // Orphan file inode %i is not regular file.
	PR_1_ORPHAN_FILE_NOT_CLEAR          Code = 0x010090 // Orphan file inode %i is not in use, but contains data.
	PR_1_EA_INODE_NONREG                Code = 0x010091 // Inode %i has the ea_inode flag set but is not a regular file.
	PR_1_EA_INODE_FEATURE               Code = 0x010092 // Inode %i references EA inode but superblock is missing EA_INODE feature
	PR_1B_PASS_HEADER                   Code = 0x011000 // Running additional passes to resolve blocks claimed by more than one inode...
	PR_1B_DUP_BLOCK_HEADER              Code = 0x011001 // Multiply-claimed block(s) in inode %i:
	PR_1B_DUP_BLOCK                     Code = 0x011002 // %b
	PR_1B_DUP_BLOCK_END                 Code = 0x011003 // Latch end: newline after an inode's list.
	PR_1B_ISCAN_ERROR                   Code = 0x011004 // Error while scanning inodes (%i): %m
	PR_1B_ALLOCATE_IBITMAP_ERROR        Code = 0x011005 // Error allocating inode bitmap (inode_dup_map): %m
	PR_1B_BLOCK_ITERATE                 Code = 0x011006 // Error while iterating over blocks in inode %i (%s): %m
	PR_1B_ADJ_EA_REFCOUNT               Code = 0x011007 // Error adjusting refcount for extended attribute block %b (inode %i): %m
	PR_1B_DUP_RANGE                     Code = 0x011008 // %b--%c
	PR_1C_PASS_HEADER                   Code = 0x012000 // Pass 1C: Scanning directories for inodes with multiply-claimed blocks
	PR_1D_PASS_HEADER                   Code = 0x013000 // Pass 1D: Reconciling multiply-claimed blocks
	PR_1D_DUP_FILE                      Code = 0x013001 // File %Q (inode #%i, mod time %IM)
	PR_1D_DUP_FILE_LIST                 Code = 0x013002 // %Q (inode #%i, mod time %IM)
	PR_1D_SHARE_METADATA                Code = 0x013003 // <filesystem metadata>
	PR_1D_NUM_DUP_INODES                Code = 0x013004 // (There are %N inodes containing multiply-claimed blocks.)
	PR_1D_DUP_BLOCKS_DEALT              Code = 0x013005 // Multiply-claimed blocks already reassigned or cloned.
	PR_1D_CLONE_QUESTION                Code = 0x013006 // File still shares blocks.
	PR_1D_DELETE_QUESTION               Code = 0x013007 // Clone declined or failed.
	PR_1D_CLONE_ERROR                   Code = 0x013008 // Couldn't clone file: %m
	PR_1E_PASS_HEADER                   Code = 0x014000 // Pass 1E: Optimizing extent trees
	PR_1E_OPTIMIZE_EXT_ERR              Code = 0x014001 // Failed to optimize extent tree %p (%i): %m
	PR_1E_OPTIMIZE_EXT_HEADER           Code = 0x014002 // Optimizing extent trees:
	PR_1E_OPTIMIZE_EXT                  Code = 0x014003 // %i
	PR_1E_OPTIMIZE_EXT_END              Code = 0x014004 // Latch end.
	PR_1E_MAX_EXTENT_TREE_DEPTH         Code = 0x014005 // Internal error: max extent tree depth too large (%b; expected=%c).
	PR_1E_CAN_COLLAPSE_EXTENT_TREE      Code = 0x014006 // Inode %i extent tree (at level %b) could be shorter.
	PR_1E_CAN_NARROW_EXTENT_TREE        Code = 0x014007 // Inode %i extent tree (at level %b) could be narrower.

	// PR_1_ALLOCATE_CASEFOLDED_DIRLIST is defined and raised by e2fsck but
	// has no table entry, so e2fsck prints "Unhandled error code (0x1008c)!"
	// for it; so do we.
	PR_1_ALLOCATE_CASEFOLDED_DIRLIST Code = 0x01008c
)

// Pass 2: directory structure.
const (
	PR_2_PASS_HEADER                    Code = 0x020000 // Pass 2: Checking directory structure
	PR_2_BAD_INODE_DOT                  Code = 0x020001 // Invalid inode number for '.' in directory inode %i.
	PR_2_BAD_INO                        Code = 0x020002 // Entry '%Dn' in %p (%i) has invalid inode #: %Di.
	PR_2_UNUSED_INODE                   Code = 0x020003 // Entry '%Dn' in %p (%i) has deleted/unused inode %Di.
	PR_2_LINK_DOT                       Code = 0x020004 // Entry '%Dn' in %p (%i) is a link to '.'
	PR_2_BB_INODE                       Code = 0x020005 // Entry '%Dn' in %p (%i) points to inode (%Di) located in a bad block.
	PR_2_LINK_DIR                       Code = 0x020006 // Entry '%Dn' in %p (%i) is a link to directory %P (%Di).
	PR_2_LINK_ROOT                      Code = 0x020007 // Entry '%Dn' in %p (%i) is a link to the root inode.
	PR_2_BAD_NAME                       Code = 0x020008 // Entry '%Dn' in %p (%i) has illegal characters in its name.
	PR_2_MISSING_DOT                    Code = 0x020009 // Missing '.' in directory inode %i.
	PR_2_MISSING_DOT_DOT                Code = 0x02000a // Missing '..' in directory inode %i.
	PR_2_1ST_NOT_DOT                    Code = 0x02000b // First entry '%Dn' (inode=%Di) in directory inode %i (%p) should be '.'
	PR_2_2ND_NOT_DOT_DOT                Code = 0x02000c // Second entry '%Dn' (inode=%Di) in directory inode %i should be '..'
	PR_2_FADDR_ZERO                     Code = 0x02000d // i_faddr for inode %i (%Q) is %IF, should be zero.
	PR_2_FILE_ACL_ZERO                  Code = 0x02000e // i_file_acl for inode %i (%Q) is %If, should be zero.
	PR_2_DIR_SIZE_HIGH_ZERO             Code = 0x02000f // i_size_high for inode %i (%Q) is %Id, should be zero.
	PR_2_FRAG_ZERO                      Code = 0x020010 // i_frag for inode %i (%Q) is %N, should be zero.
	PR_2_FSIZE_ZERO                     Code = 0x020011 // i_fsize for inode %i (%Q) is %N, should be zero.
	PR_2_BAD_MODE                       Code = 0x020012 // Inode %i (%Q) has invalid mode (%Im).
	PR_2_DIR_CORRUPTED                  Code = 0x020013 // Directory inode %i, %B, offset %N: directory corrupted
	PR_2_FILENAME_LONG                  Code = 0x020014 // Directory inode %i, %B, offset %N: filename too long
	PR_2_DIRECTORY_HOLE                 Code = 0x020015 // Directory inode %i has an unallocated %B.
	PR_2_DOT_NULL_TERM                  Code = 0x020016 // '.' directory entry in directory inode %i is not NULL terminated
	PR_2_DOT_DOT_NULL_TERM              Code = 0x020017 // '..' directory entry in directory inode %i is not NULL terminated
	PR_2_BAD_CHAR_DEV                   Code = 0x020018 // Inode %i (%Q) is an illegal character device.
	PR_2_BAD_BLOCK_DEV                  Code = 0x020019 // Inode %i (%Q) is an illegal block device.
	PR_2_DUP_DOT                        Code = 0x02001a // Entry '%Dn' in %p (%i) is duplicate '.' entry.
	PR_2_DUP_DOT_DOT                    Code = 0x02001b // Entry '%Dn' in %p (%i) is duplicate '..' entry.
	PR_2_NO_DIRINFO                     Code = 0x02001c // Internal error: couldn't find dir_info for %i.
	PR_2_FINAL_RECLEN                   Code = 0x02001d // Entry '%Dn' in %p (%i) has rec_len of %Dr, should be %N.
	PR_2_ALLOCATE_ICOUNT                Code = 0x02001e // Error allocating icount structure: %m
	PR_2_DBLIST_ITERATE                 Code = 0x02001f // Error iterating over directory blocks: %m
	PR_2_READ_DIRBLOCK                  Code = 0x020020 // Error reading directory block %b (inode %i): %m
	PR_2_WRITE_DIRBLOCK                 Code = 0x020021 // Error writing directory block %b (inode %i): %m
	PR_2_ALLOC_DIRBOCK                  Code = 0x020022 // Error allocating new directory block for inode %i (%s): %m
	PR_2_DEALLOC_INODE                  Code = 0x020023 // Error deallocating inode %i: %m
	PR_2_SPLIT_DOT                      Code = 0x020024 // Directory entry for '.' in %p (%i) is big.
	PR_2_BAD_FIFO                       Code = 0x020025 // Inode %i (%Q) is an illegal FIFO.
	PR_2_BAD_SOCKET                     Code = 0x020026 // Inode %i (%Q) is an illegal socket.
	PR_2_SET_FILETYPE                   Code = 0x020027 // Setting filetype for entry '%Dn' in %p (%i) to %N.
	PR_2_BAD_FILETYPE                   Code = 0x020028 // Entry '%Dn' in %p (%i) has an incorrect filetype (was %Dt, should be %N).
	PR_2_CLEAR_FILETYPE                 Code = 0x020029 // Entry '%Dn' in %p (%i) has filetype set.
	PR_2_NULL_NAME                      Code = 0x020030 // Entry '%Dn' in %p (%i) has a zero-length name.
	PR_2_INVALID_SYMLINK                Code = 0x020031 // Symlink %Q (inode #%i) is invalid.
	PR_2_FILE_ACL_BAD                   Code = 0x020032 // Extended attribute block for inode %i (%Q) is invalid (%If).
	PR_2_FEATURE_LARGE_FILES            Code = 0x020033 // Filesystem contains large files, but lacks LARGE_FILE flag in superblock.
	PR_2_HTREE_NOTREF                   Code = 0x020034 // Problem in HTREE directory inode %d: %B not referenced
	PR_2_HTREE_DUPREF                   Code = 0x020035 // Problem in HTREE directory inode %d: %B referenced twice
	PR_2_HTREE_MIN_HASH                 Code = 0x020036 // Problem in HTREE directory inode %d: %B has bad min hash
	PR_2_HTREE_MAX_HASH                 Code = 0x020037 // Problem in HTREE directory inode %d: %B has bad max hash
	PR_2_HTREE_CLEAR                    Code = 0x020038 // Invalid HTREE directory inode %d (%q).
	PR_2_FEATURE_LARGE_DIRS             Code = 0x020039 // Filesystem has large directories, but lacks LARGE_DIR flag in superblock.
	PR_2_HTREE_BADBLK                   Code = 0x02003a // Problem in HTREE directory inode %d (%q): bad block number %b.
	PR_2_ADJ_EA_REFCOUNT                Code = 0x02003b // Error adjusting refcount for extended attribute block %b (inode %i): %m
	PR_2_HTREE_BAD_ROOT                 Code = 0x02003c // Problem in HTREE directory inode %d: root node is invalid
	PR_2_HTREE_BAD_LIMIT                Code = 0x02003d // Problem in HTREE directory inode %d: %B has invalid limit (%N)
	PR_2_HTREE_BAD_COUNT                Code = 0x02003e // Problem in HTREE directory inode %d: %B has invalid count (%N)
	PR_2_HTREE_HASH_ORDER               Code = 0x02003f // Problem in HTREE directory inode %d: %B has an unordered hash table
	PR_2_HTREE_BAD_DEPTH                Code = 0x020040 // Problem in HTREE directory inode %d: %B has invalid depth (%N)
	PR_2_DUPLICATE_DIRENT               Code = 0x020041 // Duplicate entry '%Dn' in %p (%i) found.
	PR_2_NON_UNIQUE_FILE                Code = 0x020042 // Entry '%Dn' in %p (%i) has a non-unique filename.
	PR_2_REPORT_DUP_DIRENT              Code = 0x020043 // Duplicate entry '%Dn' found.
	PR_2_BLOCKS_HI_ZERO                 Code = 0x020044 // i_blocks_hi for inode %i (%Q) is %N, should be zero.
	PR_2_UNEXPECTED_HTREE_BLOCK         Code = 0x020045 // Unexpected block in HTREE directory inode %d (%q).
	PR_2_INOREF_BG_INO_UNINIT           Code = 0x020046 // Entry '%Dn' in %p (%i) references inode %Di in group %g where _INODE_UNINIT is set.
	PR_2_INOREF_IN_UNUSED               Code = 0x020047 // Entry '%Dn' in %p (%i) references inode %Di found in group %g's unused inodes area.
	PR_2_I_FILE_ACL_HI_ZERO             Code = 0x020048 // i_file_acl_hi for inode %i (%Q) is %N, should be zero.
	PR_2_HTREE_ROOT_CSUM_INVALID        Code = 0x020049 // Problem in HTREE directory inode %d: root node fails checksum.
	PR_2_HTREE_NODE_CSUM_INVALID        Code = 0x02004a // Problem in HTREE directory inode %d: internal node fails checksum.
	PR_2_LEAF_NODE_MISSING_CSUM         Code = 0x02004c // Directory inode %i, %B, offset %N: directory has no checksum.
	PR_2_LEAF_NODE_ONLY_CSUM_INVALID    Code = 0x02004d // Directory inode %i, %B: directory passes checks but fails checksum.
	PR_2_BAD_INLINE_DIR_SIZE            Code = 0x02004e // Inline directory inode %i size (%N) must be a multiple of 4.
	PR_2_FIX_INLINE_DIR_FAILED          Code = 0x02004f // Fixing size of inline directory inode %i failed.
	PR_2_BAD_ENCRYPTED_NAME             Code = 0x020050 // Encrypted entry '%Dn' in %p (%i) is too short.
	PR_2_UNENCRYPTED_FILE               Code = 0x020051 // Encrypted entry '%Dn' in %p (%i) references unencrypted inode %Di.
	PR_2_INCONSISTENT_ENCRYPTION_POLICY Code = 0x020052 // Encrypted entry '%Dn' in %p (%i) references inode %Di, which has a different encryption...
	PR_2_BAD_ENCODED_NAME               Code = 0x020053 // Entry '%Dn' in %p (%i) has illegal UTF-8 characters in its name.
	PR_2_NON_UNIQUE_FILE_NO_RENAME      Code = 0x020054 // Duplicate filename entry '%Dn' in %p (%i) found.
	PR_2_EA_INODE_DIR_LINK              Code = 0x020055 // Entry '%Dn' in %p (%i) references EA inode %Di.
)

// Pass 3: directory connectivity.
const (
	PR_3_PASS_HEADER            Code = 0x030000 // Pass 3: Checking directory connectivity
	PR_3_NO_ROOT_INODE          Code = 0x030001 // Root inode not allocated.
	PR_3_EXPAND_LF_DIR          Code = 0x030002 // No room in lost+found directory.
	PR_3_UNCONNECTED_DIR        Code = 0x030003 // Unconnected directory inode %i (was in %q)
	PR_3_NO_LF_DIR              Code = 0x030004 // /lost+found not found.
	PR_3_BAD_DOT_DOT            Code = 0x030005 // '..' in %Q (%i) is %P (%j), should be %q (%d).
	PR_3_NO_LPF                 Code = 0x030006 // Bad or non-existent /lost+found.  Cannot reconnect.
	PR_3_CANT_EXPAND_LPF        Code = 0x030007 // Could not expand /lost+found: %m
	PR_3_CANT_RECONNECT         Code = 0x030008 // Could not reconnect %i: %m
	PR_3_ERR_FIND_LPF           Code = 0x030009 // Error while trying to find /lost+found: %m
	PR_3_ERR_LPF_NEW_BLOCK      Code = 0x03000a // ext2fs_new_block: %m while trying to create /lost+found directory
	PR_3_ERR_LPF_NEW_INODE      Code = 0x03000b // ext2fs_new_inode: %m while trying to create /lost+found directory
	PR_3_ERR_LPF_NEW_DIR_BLOCK  Code = 0x03000c // ext2fs_new_dir_block: %m while creating new directory block
	PR_3_ERR_LPF_WRITE_BLOCK    Code = 0x03000d // ext2fs_write_dir_block: %m while writing the directory block for /lost+found
	PR_3_ADJUST_INODE           Code = 0x03000e // Error while adjusting inode count on inode %i
	PR_3_FIX_PARENT_ERR         Code = 0x03000f // Couldn't fix parent of inode %i: %m
	PR_3_FIX_PARENT_NOFIND      Code = 0x030010 // Couldn't fix parent of inode %i: Couldn't find parent directory entry
	PR_3_ALLOCATE_IBITMAP_ERROR Code = 0x030011 // Error allocating inode bitmap (%N): %m
	PR_3_CREATE_ROOT_ERROR      Code = 0x030012 // Error creating root directory (%s): %m
	PR_3_CREATE_LPF_ERROR       Code = 0x030013 // Error creating /lost+found directory (%s): %m
	PR_3_ROOT_NOT_DIR_ABORT     Code = 0x030014 // Root inode is not a directory; aborting.
	PR_3_NO_ROOT_INODE_ABORT    Code = 0x030015 // Cannot proceed without a root inode.
	PR_3_NO_DIRINFO             Code = 0x030016 // Internal error: couldn't find dir_info for %i.
	PR_3_LPF_NOTDIR             Code = 0x030017 // /lost+found is not a directory (ino=%i)
	PR_3_LPF_INLINE_DATA        Code = 0x030018 // /lost+found has inline data
	PR_3_LPF_NO_SPACE           Code = 0x030019 // Cannot allocate space for /lost+found.
	PR_3_NO_SPACE_TO_RECOVER    Code = 0x03001a // Insufficient space to recover lost files!
	PR_3_LPF_ENCRYPTED          Code = 0x03001b // /lost+found is encrypted
	PR_3_LOOPED_DIR             Code = 0x03001d // Recursively looped directory inode %i (%p)
	PR_3A_PASS_HEADER           Code = 0x031000 // Pass 3A: Optimizing directories
	PR_3A_OPTIMIZE_ITER         Code = 0x031001 // Failed to create dirs_to_hash iterator: %m
	PR_3A_OPTIMIZE_DIR_ERR      Code = 0x031002 // Failed to optimize directory %q (%d): %m
	PR_3A_OPTIMIZE_DIR_HEADER   Code = 0x031003 // Optimizing directories:
	PR_3A_OPTIMIZE_DIR          Code = 0x031004 // %d
	PR_3A_OPTIMIZE_DIR_END      Code = 0x031005 // Latch end.
)

// Pass 4: reference counts.
const (
	PR_4_PASS_HEADER            Code = 0x040000 // Pass 4: Checking reference counts
	PR_4_ZERO_LEN_INODE         Code = 0x040001 // Unattached zero-length inode %i.
	PR_4_UNATTACHED_INODE       Code = 0x040002 // Unattached inode %i
	PR_4_BAD_REF_COUNT          Code = 0x040003 // Inode %i ref count is %Il, should be %N.
	PR_4_INCONSISTENT_COUNT     Code = 0x040004 // WARNING: PROGRAMMING BUG IN E2FSCK!
	PR_4_EA_INODE_REF_COUNT     Code = 0x040005 // Extended attribute inode %i ref count is %N, should be %n.
	PR_4_DIR_NLINK_FEATURE      Code = 0x040006 // Directory exceeds max links, but no DIR_NLINK feature in superblock.
	PR_4_DIR_OVERFLOW_REF_COUNT Code = 0x040007 // Directory inode %i ref count set to overflow but could be exact value %N.
	PR_4_EA_INODE_SPURIOUS_FLAG Code = 0x040008 // Regular filesystem inode %i has EA_INODE flag set.
)

// Pass 5: group summary information.
const (
	PR_5_PASS_HEADER               Code = 0x050000 // Pass 5: Checking group summary information
	PR_5_INODE_BMAP_PADDING        Code = 0x050001 // Padding at end of inode bitmap is not set.
	PR_5_BLOCK_BMAP_PADDING        Code = 0x050002 // Padding at end of block bitmap is not set.
	PR_5_BLOCK_BITMAP_HEADER       Code = 0x050003 // Block bitmap differences:
	PR_5_BLOCK_UNUSED              Code = 0x050004 // -%b
	PR_5_BLOCK_USED                Code = 0x050005 // +%b
	PR_5_BLOCK_BITMAP_END          Code = 0x050006 // End of block-difference list.
	PR_5_INODE_BITMAP_HEADER       Code = 0x050007 // Inode bitmap differences:
	PR_5_INODE_UNUSED              Code = 0x050008 // -%i
	PR_5_INODE_USED                Code = 0x050009 // +%i
	PR_5_INODE_BITMAP_END          Code = 0x05000a // End of inode-difference list.
	PR_5_FREE_INODE_COUNT_GROUP    Code = 0x05000b // Free inodes count wrong for group #%g (%i, counted=%j).
	PR_5_FREE_DIR_COUNT_GROUP      Code = 0x05000c // Directories count wrong for group #%g (%i, counted=%j).
	PR_5_FREE_INODE_COUNT          Code = 0x05000d // Free inodes count wrong (%i, counted=%j).
	PR_5_FREE_BLOCK_COUNT_GROUP    Code = 0x05000e // Free blocks count wrong for group #%g (%b, counted=%c).
	PR_5_FREE_BLOCK_COUNT          Code = 0x05000f // Free blocks count wrong (%b, counted=%c).
	PR_5_BMAP_ENDPOINTS            Code = 0x050010 // PROGRAMMING ERROR: filesystem (#%N) bitmap endpoints (%b, %c) don't match calculated bi...
	PR_5_FUDGE_BITMAP_ERROR        Code = 0x050011 // Internal error: fudging end of bitmap (%N)
	PR_5_COPY_IBITMAP_ERROR        Code = 0x050012 // Error copying in replacement inode bitmap: %m
	PR_5_COPY_BBITMAP_ERROR        Code = 0x050013 // Error copying in replacement block bitmap: %m
	PR_5_BLOCK_RANGE_UNUSED        Code = 0x050014 // -(%b--%c)
	PR_5_BLOCK_RANGE_USED          Code = 0x050015 // +(%b--%c)
	PR_5_INODE_RANGE_UNUSED        Code = 0x050016 // -(%i--%j)
	PR_5_INODE_RANGE_USED          Code = 0x050017 // +(%i--%j)
	PR_5_BLOCK_UNINIT              Code = 0x050018 // Group %g block(s) in use but group is marked BLOCK_UNINIT
	PR_5_INODE_UNINIT              Code = 0x050019 // Group %g inode(s) in use but group is marked INODE_UNINIT
	PR_5_INODE_BITMAP_CSUM_INVALID Code = 0x05001a // Group %g inode bitmap does not match checksum.
	PR_5_BLOCK_BITMAP_CSUM_INVALID Code = 0x05001b // Group %g block bitmap does not match checksum.
)

// End of run.
const (
	PR_6_RECREATE_JOURNAL            Code = 0x060001 // Recreate journal
	PR_6_UPDATE_QUOTAS               Code = 0x060002 // Update quota info for quota type %N
	PR_6_SET_BG_CHECKSUM             Code = 0x060003 // Error setting block group checksum info: %m
	PR_6_FLUSH_FILESYSTEM            Code = 0x060004 // Error writing file system info: %m
	PR_6_IO_FLUSH                    Code = 0x060005 // Error flushing writes to storage device: %m
	PR_6_WRITE_QUOTAS                Code = 0x060006 // Error writing quota info for quota type %N: %m
	PR_6_ORPHAN_FILE_WITHOUT_JOURNAL Code = 0x060007 // Superblock has orphan file without journal.
	PR_6_ORPHAN_FILE_TRUNC_FAILED    Code = 0x060008 // Failed to truncate orphan file.
	PR_6_ORPHAN_FILE_CORRUPTED       Code = 0x060009 // Failed to initialize orphan file.
	PR_6_ORPHAN_FILE_BITMAP_INVALID  Code = 0x06000a // Cannot fix corrupted orphan file with invalid bitmaps.
	PR_6_ORPHAN_FILE_CREATE_FAILED   Code = 0x06000b // Failed to truncate orphan file (inode %i).
	PR_6_ORPHAN_BLOCK_DIRTY          Code = 0x06000c // Orphan file (inode %i) block %b is not clean.
	PR_6_ORPHAN_PRESENT_CLEAN_FILE   Code = 0x06000d // Feature orphan_present is set but orphan file is clean.
	PR_6_ORPHAN_PRESENT_NO_FILE      Code = 0x06000e // Feature orphan_present is set but feature orphan_file is not.
	PR_6_ORPHAN_FILE_WRONG_SIZE      Code = 0x06000f // Orphan file (inode %i) size is not multiple of block size.
	PR_6_ORPHAN_FILE_HOLE            Code = 0x060010 // Orphan file (inode %i) contains hole at block %b.
)
