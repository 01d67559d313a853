package check

import "gofsck/internal/problem"

// repairable holds the prompted problems whose "yes" path gofsck
// implements (CanFix), each group under the file that makes its fixes.
// A problem answered yes that is not here stops the run (the Reporter's
// CanFix guard) rather than be left half fixed. Read-only after init.
var repairable = codeSet(
	// badblocks_pass1.go
	problem.PR_1_INODE_BBLOCK_LATCH,
	problem.PR_1_BB_ILLEGAL_BLOCK_NUM,
	problem.PR_1_BB_FS_BLOCK,
	problem.PR_1_BBINODE_BAD_METABLOCK,
	problem.PR_1_BBINODE_BAD_METABLOCK_PROMPT,
	problem.PR_1_BAD_PRIMARY_SUPERBLOCK,
	problem.PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR,
	problem.PR_1_BAD_PRIMARY_BLOCK,
	problem.PR_1_BAD_PRIMARY_BLOCK_PROMPT,
	problem.PR_1_BADBLOCKS_IN_BADBLOCKS,
	// badblocks_reloc.go
	problem.PR_1_BB_BAD_BLOCK, problem.PR_1_IB_BAD_BLOCK,
	// casefold.go
	problem.PR_2_BAD_ENCODED_NAME,
	// dupclone.go
	problem.PR_1D_CLONE_QUESTION, problem.PR_1D_DELETE_QUESTION,
	// inline_dir_size.go
	problem.PR_2_BAD_INLINE_DIR_SIZE,
	// ioerror.go
	problem.PR_IO_READ_ERROR, problem.PR_IO_READ_ERROR_WHILE, problem.PR_IO_FORCE_REWRITE,
	// journal_create.go
	problem.PR_0_JOURNAL_BAD_INODE, problem.PR_0_JOURNAL_RECOVER_SET, problem.PR_6_RECREATE_JOURNAL,
	// journal_ext.go
	problem.PR_0_EXT_JOURNAL_SUPER_CSUM_INVALID,
	problem.PR_0_EXTERNAL_JOURNAL_HINT,
	// journal_repair.go
	problem.PR_0_JNL_TXN_CORRUPT, problem.PR_0_JOURNAL_RUN, problem.PR_0_JOURNAL_RUN_DEFAULT,
	problem.PR_0_JOURNAL_RESET_JOURNAL,
	problem.PR_0_JOURNAL_HAS_JOURNAL,
	problem.PR_0_JOURNAL_BAD_SUPER,
	problem.PR_0_BACKUP_JNL, problem.PR_0_INVALID_QUOTA_INO,
	problem.PR_0_CLEAR_V2_JOURNAL,
	// misc_repair.go
	// Fixes of assorted problems whose "yes" path is made where the problem
	// is reported:
	//
	//   - PR_6_ORPHAN_PRESENT_NO_FILE (checkOrphanFileEnd): the orphan_present
	//     feature is cleared from the superblock, as e2fsck's main does.
	//   - PR_6_ORPHAN_FILE_WITHOUT_JOURNAL (checkOrphanFileEnd): the orphan
	//     file is truncated and its features cleared (truncateOrphanFile).
	//   - PR_6_ORPHAN_FILE_CORRUPTED (checkOrphanFileEnd): the orphan file
	//     is truncated and created anew (recreateOrphanFile).
	//   - PR_3_LPF_INLINE_DATA, PR_3_LPF_ENCRYPTED (getLostAndFound): the old
	//     /lost+found is unlinked, a new one created, and the check restarts
	//     when pass 3 stops, as e2fsck's E2F_FLAG_RESTART.
	problem.PR_6_ORPHAN_PRESENT_NO_FILE, problem.PR_6_ORPHAN_FILE_WITHOUT_JOURNAL,
	problem.PR_6_ORPHAN_FILE_CORRUPTED, problem.PR_3_LPF_INLINE_DATA, problem.PR_3_LPF_ENCRYPTED,
	// cmd/gofsck/mmp.go: multi-mount protection. The command reads the
	// MMP block before the journal check, as e2fsck_check_mmp does, and
	// reports these through the same reporter: the yes of
	// PR_0_MMP_INVALID_BLK sets s_mmp_block to 0 (written with the
	// primary superblock), that of the other two resets the block
	// (ext2fs_mmp_clear; the library's decisions are in ext2fs/mmp.go).
	// Pass 1 marks the block in use.
	problem.PR_0_MMP_INVALID_BLK, problem.PR_0_MMP_INVALID_MAGIC, problem.PR_0_MMP_CSUM_INVALID,
	// orphan_repair.go
	problem.PR_0_ORPHAN_CLEAR_INODE, problem.PR_0_ORPHAN_ILLEGAL_BLOCK_NUM,
	problem.PR_0_ORPHAN_ALREADY_CLEARED_BLOCK, problem.PR_0_ORPHAN_ILLEGAL_HEAD_INODE,
	problem.PR_0_ORPHAN_ILLEGAL_INODE, problem.PR_6_ORPHAN_BLOCK_DIRTY, problem.PR_6_ORPHAN_PRESENT_CLEAN_FILE,
	// pass1_repair.go
	// Not a fix: a yes silences the inode's further illegal blocks
	// (the reporter's block latch), which are still cleared or not
	// by the latch's answer.
	problem.PR_1_SUPPRESS_MESSAGES,
	problem.PR_1_INODE_IS_GARBAGE,
	problem.PR_1_LOW_DTIME,
	problem.PR_1_ZERO_DTIME,
	problem.PR_1_CASEFOLD_NONDIR,
	problem.PR_1_CASEFOLD_FEATURE,
	problem.PR_1_SPECIAL_EXTENTS_IDATA,
	problem.PR_1_CLEAR_INLINE_DATA_FOR_EXTENT,
	problem.PR_1_CLEAR_EXTENT_FOR_INLINE_DATA,
	problem.PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS,
	problem.PR_1_CLEAR_EXTENT_INLINE_DATA_INODE,
	problem.PR_1_INLINE_DATA_FEATURE,
	problem.PR_1_INLINE_DATA_SET,
	problem.PR_1_INLINE_DATA_NO_ATTR,
	problem.PR_1_EXTENT_FEATURE,
	problem.PR_1_EXTENTS_SET,
	problem.PR_1_UNSET_EXTENT_FL,
	problem.PR_1_INVALID_BAD_INODE,
	problem.PR_1_ROOT_NO_DIR,
	problem.PR_1_ROOT_DTIME,
	problem.PR_1_JOURNAL_BAD_MODE,
	problem.PR_1_JOURNAL_INODE_NOT_CLEAR,
	problem.PR_1_QUOTA_BAD_MODE,
	problem.PR_1_QUOTA_INODE_NOT_CLEAR,
	problem.PR_1_ORPHAN_FILE_BAD_MODE,
	problem.PR_1_ORPHAN_FILE_NOT_CLEAR,
	problem.PR_1_RESERVED_BAD_MODE,
	problem.PR_1_SET_DTIME,
	problem.PR_1_SET_IMAGIC,
	problem.PR_1_FAST_SYMLINK_EXTENT_FL,
	problem.PR_1_SET_IMMUTABLE,
	problem.PR_1_SET_NONZSIZE,
	problem.PR_1_INODE_ONLY_CSUM_INVALID,
	problem.PR_1_EXTRA_ISIZE,
	problem.PR_1_EA_TIME_OUT_OF_RANGE,
	problem.PR_1_INODE_EA_ALLOC_COLLISION,
	problem.PR_1_ATTR_NAME_LEN,
	problem.PR_1_ATTR_VALUE_SIZE,
	problem.PR_1_ATTR_HASH,
	problem.PR_1_BAD_I_SIZE,
	problem.PR_1_BAD_I_BLOCKS,
	problem.PR_1_ZERO_LENGTH_DIR,
	problem.PR_1_HTREE_NODIR,
	problem.PR_1_HTREE_SET,
	problem.PR_1_HTREE_BADROOT,
	problem.PR_1_HTREE_HASHV,
	problem.PR_1_HTREE_NEEDS_SIPHASH,
	problem.PR_1_HTREE_CANNOT_SIPHASH,
	problem.PR_1_HTREE_INCOMPAT,
	problem.PR_1_HTREE_DEPTH,
	problem.PR_1_CORRUPT_ENCRYPTION_XATTR,
	problem.PR_1_MISSING_ENCRYPTION_XATTR,
	// EA blocks (xattrblock.go): the inode loses its EA block, or
	// the block is rewritten.
	problem.PR_1_READ_EA_BLOCK,
	problem.PR_1_BAD_EA_BLOCK,
	problem.PR_1_EA_MULTI_BLOCK,
	problem.PR_1_EA_ALLOC_COLLISION,
	problem.PR_1_EA_BAD_NAME,
	problem.PR_1_EA_BAD_VALUE,
	problem.PR_1_ATTR_VALUE_EA_INODE,
	problem.PR_1_ATTR_NO_EA_INODE_FL,
	problem.PR_1_ATTR_SET_EA_INODE_FL,
	problem.PR_1_EA_BLOCK_ONLY_CSUM_INVALID,
	problem.PR_1_EXTATTR_REFCOUNT,
	// Extent trees (extents.go): the bad entry is deleted.
	problem.PR_1_MISSING_EXTENT_HEADER,
	problem.PR_1_EXTENT_BAD_START_BLK,
	problem.PR_1_OUT_OF_ORDER_EXTENTS,
	problem.PR_1_EXTENT_END_OUT_OF_BOUNDS,
	problem.PR_1_EXTENT_LENGTH_ZERO,
	problem.PR_1_EXTENT_ENDS_BEYOND,
	problem.PR_1_EXTENT_COLLISION,
	problem.PR_1_EXTENT_HEADER_INVALID,
	problem.PR_1_EXTENT_INDEX_START_INVALID,
	problem.PR_1_EXTENT_ONLY_CSUM_INVALID,
	problem.PR_1_UNINIT_DBLOCK,
	problem.PR_1_COLLAPSE_DBLOCK,
	problem.PR_1_TREAT_AS_DIRECTORY,
	problem.PR_1_EXTENT_ITERATE_FAILURE,
	// Block maps (blocks.go): the pointer is cleared where it lives
	// (i_block or the indirect block), which is written back.
	problem.PR_1_INODE_BLOCK_LATCH,
	// The LOW_DTIME latch's question: its "yes" is the members'.
	problem.PR_1_ORPHAN_LIST_REFUGEES,
	problem.PR_1_ILLEGAL_BLOCK_NUM,
	problem.PR_1_INODE_TOOBIG,
	problem.PR_1_TOOBIG_DIR,
	problem.PR_1_TOOBIG_REG,
	problem.PR_1_TOOBIG_SYMLINK,
	problem.PR_1_TOO_MANY_BAD_BLOCKS,
	// pass1e.go
	problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, problem.PR_1E_CAN_NARROW_EXTENT_TREE,
	problem.PR_1_EXTENT_BAD_MAX_DEPTH, problem.PR_1_NO_BIGALLOC_BLOCKMAP_FILES,
	// pass1end.go
	problem.PR_2_FEATURE_LARGE_DIRS, problem.PR_1_FS_REV_LEVEL,
	// pass2_repair.go
	// entries cleared
	problem.PR_2_UNUSED_INODE, problem.PR_2_BAD_INO, problem.PR_2_BB_INODE,
	problem.PR_2_DUP_DOT, problem.PR_2_DUP_DOT_DOT, problem.PR_2_LINK_ROOT,
	problem.PR_2_NULL_NAME, problem.PR_2_LINK_DOT, problem.PR_2_LINK_DIR,
	problem.PR_2_BAD_ENCRYPTED_NAME, problem.PR_2_UNENCRYPTED_FILE,
	problem.PR_2_INCONSISTENT_ENCRYPTION_POLICY,
	// entries rewritten
	problem.PR_2_BAD_FILETYPE, problem.PR_2_SET_FILETYPE, problem.PR_2_CLEAR_FILETYPE,
	problem.PR_2_BAD_NAME, problem.PR_2_DIR_CORRUPTED, problem.PR_2_FINAL_RECLEN,
	problem.PR_2_MISSING_DOT, problem.PR_2_1ST_NOT_DOT, problem.PR_2_DOT_NULL_TERM,
	problem.PR_2_BAD_INODE_DOT, problem.PR_2_SPLIT_DOT,
	problem.PR_2_MISSING_DOT_DOT, problem.PR_2_2ND_NOT_DOT_DOT, problem.PR_2_DOT_DOT_NULL_TERM,
	problem.PR_2_LEAF_NODE_ONLY_CSUM_INVALID,
	// htree cleared (rebuilt in pass 3A)
	problem.PR_2_HTREE_BAD_ROOT, problem.PR_2_UNEXPECTED_HTREE_BLOCK, problem.PR_2_HTREE_CLEAR,
	problem.PR_2_HTREE_ROOT_CSUM_INVALID, problem.PR_2_HTREE_NODE_CSUM_INVALID,
	problem.PR_2_HTREE_BAD_LIMIT, problem.PR_2_HTREE_BAD_COUNT, problem.PR_2_HTREE_BADBLK,
	problem.PR_2_HTREE_HASH_ORDER, problem.PR_2_LEAF_NODE_MISSING_CSUM,
	// bad inodes (process_bad_inode)
	problem.PR_2_BAD_MODE, problem.PR_2_BAD_CHAR_DEV, problem.PR_2_BAD_BLOCK_DEV,
	problem.PR_2_BAD_FIFO, problem.PR_2_BAD_SOCKET, problem.PR_2_INVALID_SYMLINK,
	problem.PR_2_FILE_ACL_ZERO, problem.PR_2_FADDR_ZERO, problem.PR_2_FRAG_ZERO,
	problem.PR_2_FSIZE_ZERO, problem.PR_2_BLOCKS_HI_ZERO, problem.PR_2_I_FILE_ACL_HI_ZERO,
	problem.PR_2_FILE_ACL_BAD, problem.PR_2_DIR_SIZE_HIGH_ZERO,
	// features, holes
	problem.PR_2_FEATURE_LARGE_FILES, problem.PR_2_DIRECTORY_HOLE, problem.PR_2_READ_DIRBLOCK,
	// a restart once pass 2 is over
	problem.PR_2_INOREF_BG_INO_UNINIT, problem.PR_2_INOREF_IN_UNUSED,
	// pass3_repair.go
	problem.PR_3_NO_ROOT_INODE, problem.PR_3_NO_LF_DIR, problem.PR_3_LPF_NO_SPACE, problem.PR_3_UNCONNECTED_DIR,
	problem.PR_3_LOOPED_DIR, problem.PR_3_BAD_DOT_DOT, problem.PR_3_EXPAND_LF_DIR,
	problem.PR_3_LPF_NOTDIR,
	// pass4.go
	problem.PR_4_BAD_REF_COUNT, problem.PR_4_INCONSISTENT_COUNT, problem.PR_4_DIR_OVERFLOW_REF_COUNT,
	problem.PR_4_DIR_NLINK_FEATURE, problem.PR_4_ZERO_LEN_INODE, problem.PR_4_UNATTACHED_INODE,
	problem.PR_4_EA_INODE_REF_COUNT,
	// pass5.go
	problem.PR_5_BLOCK_BITMAP_END, problem.PR_5_INODE_BITMAP_END,
	problem.PR_5_BLOCK_UNINIT, problem.PR_5_INODE_UNINIT,
	problem.PR_5_FREE_BLOCK_COUNT_GROUP, problem.PR_5_FREE_BLOCK_COUNT,
	problem.PR_5_FREE_INODE_COUNT_GROUP, problem.PR_5_FREE_DIR_COUNT_GROUP,
	problem.PR_5_FREE_INODE_COUNT, problem.PR_5_INODE_BMAP_PADDING,
	problem.PR_5_BLOCK_BMAP_PADDING, problem.PR_5_INODE_BITMAP_CSUM_INVALID,
	problem.PR_5_BLOCK_BITMAP_CSUM_INVALID,
	// quota_hide.go
	problem.PR_0_HIDE_QUOTA,
	// quota_repair.go
	problem.PR_6_UPDATE_QUOTAS,
	// rehash.go
	problem.PR_2_DUPLICATE_DIRENT, problem.PR_2_NON_UNIQUE_FILE,
	problem.PR_2_NON_UNIQUE_FILE_NO_RENAME,
	// relocate.go
	problem.PR_0_BB_NOT_GROUP, problem.PR_0_IB_NOT_GROUP, problem.PR_0_ITABLE_NOT_GROUP,
	problem.PR_1_BB_CONFLICT, problem.PR_1_IB_CONFLICT, problem.PR_1_ITABLE_CONFLICT,
	// resize_repair.go
	problem.PR_0_RESIZE_INODE_INVALID, problem.PR_1_RESIZE_INODE_CREATE,
	// super_repair.go
	// Fixes of the superblock and group-descriptor checks (check_super_block)
	// that are made in super.go's check loop itself.
	problem.PR_0_GDT_CSUM, problem.PR_0_GDT_CSUM_LATCH,
	problem.PR_0_GDT_UNINIT,
	problem.PR_0_BB_UNINIT_LAST,
	problem.PR_0_GDT_ITABLE_UNUSED,
	problem.PR_0_FREE_INODE_COUNT, problem.PR_0_FREE_BLOCK_COUNT,
	problem.PR_0_INODE_COUNT_WRONG, problem.PR_0_BAD_MIN_EXTRA_ISIZE, problem.PR_0_BAD_WANT_EXTRA_ISIZE,
	problem.PR_0_64BIT_WITHOUT_EXTENTS, problem.PR_0_FIRST_META_BG_TOO_BIG, problem.PR_0_FUTURE_SB_LAST_MOUNT, problem.PR_0_FUTURE_SB_LAST_MOUNT_FUDGED,
	problem.PR_0_FUTURE_SB_LAST_WRITE, problem.PR_0_FUTURE_SB_LAST_WRITE_FUDGED,
	problem.PR_0_DISABLE_RESIZE_INODE, problem.PR_0_NONZERO_RESERVED_GDT_BLOCKS, problem.PR_0_CLEAR_RESIZE_INODE,
	problem.PR_0_META_AND_GDT_CSUM_SET, problem.PR_0_CSUM_SEED_WITHOUT_META_CSUM,
	problem.PR_0_DIRHASH_HINT,
	problem.PR_0_ADD_UUID, problem.PR_0_CLEAR_TESTFS_FLAG, problem.PR_0_HURD_CLEAR_FILETYPE, problem.PR_0_FS_REV_LEVEL,
)

// codeSet is the set of codes.
func codeSet(codes ...problem.Code) map[problem.Code]bool {
	m := make(map[problem.Code]bool, len(codes))
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// CanFix reports whether gofsck implements the fix of prompted problem c.
func CanFix(c problem.Code) bool { return repairable[c] }
