package ext2fs

// Errcode is one of the library's com_err codes (lib/ext2fs/ext2_err.et),
// or an errno the library returns, held as the message e2fsck prints for
// it (error_message(code)). Two codes compare equal when their messages
// do, so a code can be returned, compared with == or errors.Is, and
// printed as it is.
type Errcode string

// Error is the code's message, byte for byte the library's.
func (e Errcode) Error() string { return string(e) }

// The codes the checker meets, named after their EXT2_ET_* identifiers.
const (
	// ErrGdescBadInodeTable is EXT2_ET_GDESC_BAD_INODE_TABLE.
	ErrGdescBadInodeTable Errcode = "Corrupt group descriptor: bad block for inode table"
	// ErrDirCorrupted is EXT2_ET_DIR_CORRUPTED.
	ErrDirCorrupted Errcode = "EXT2 directory corrupted"
	// ErrShortRead is EXT2_ET_SHORT_READ.
	ErrShortRead Errcode = "Attempt to read block from filesystem resulted in short read"
	// ErrDirNoSpace is EXT2_ET_DIR_NO_SPACE.
	ErrDirNoSpace Errcode = "No free space in the directory"
	// ErrBadInodeNum is EXT2_ET_BAD_INODE_NUM.
	ErrBadInodeNum Errcode = "Illegal inode number"
	// ErrBadBlockMark is EXT2_ET_BAD_BLOCK_MARK.
	ErrBadBlockMark Errcode = "Illegal block number passed to ext2fs_mark_block_bitmap"
	// ErrBadBlockUnmark is EXT2_ET_BAD_BLOCK_UNMARK.
	ErrBadBlockUnmark Errcode = "Illegal block number passed to ext2fs_unmark_block_bitmap"
	// ErrBadBlockTest is EXT2_ET_BAD_BLOCK_TEST.
	ErrBadBlockTest Errcode = "Illegal block number passed to ext2fs_test_block_bitmap"
	// ErrBadIndBlock is EXT2_ET_BAD_IND_BLOCK.
	ErrBadIndBlock Errcode = "Illegal indirect block found"
	// ErrBadDindBlock is EXT2_ET_BAD_DIND_BLOCK.
	ErrBadDindBlock Errcode = "Illegal doubly indirect block found"
	// ErrBadTindBlock is EXT2_ET_BAD_TIND_BLOCK.
	ErrBadTindBlock Errcode = "Illegal triply indirect block found"
	// ErrMissingInodeTable is EXT2_ET_MISSING_INODE_TABLE.
	ErrMissingInodeTable Errcode = "A block group is missing an inode table"
	// ErrUnsuppFeature is EXT2_ET_UNSUPP_FEATURE.
	ErrUnsuppFeature Errcode = "Filesystem has unsupported feature(s)"
	// ErrBlockAllocFail is EXT2_ET_BLOCK_ALLOC_FAIL.
	ErrBlockAllocFail Errcode = "Could not allocate block in ext2 filesystem"
	// ErrNoDirectory is EXT2_ET_NO_DIRECTORY.
	ErrNoDirectory Errcode = "Ext2 inode is not a directory"
	// ErrDBNotFound is EXT2_ET_DB_NOT_FOUND.
	ErrDBNotFound Errcode = "Ext2 directory block not found"
	// ErrLoadExtJournal is EXT2_ET_LOAD_EXT_JOURNAL.
	ErrLoadExtJournal Errcode = "Error loading external journal"
	// ErrDirhashUnsupp is EXT2_ET_DIRHASH_UNSUPP.
	ErrDirhashUnsupp Errcode = "Directory hash unsupported"
	// ErrResizeInodeCorrupt is EXT2_ET_RESIZE_INODE_CORRUPT.
	ErrResizeInodeCorrupt Errcode = "Resize inode is corrupt"
	// ErrSetBmapNoInd is EXT2_ET_SET_BMAP_NO_IND.
	ErrSetBmapNoInd Errcode = "Tried to set block bmap with missing indirect block"
	// ErrExtentHeaderBad is EXT2_ET_EXTENT_HEADER_BAD.
	ErrExtentHeaderBad Errcode = "Corrupt extent header"
	// ErrExtentLeafBad is EXT2_ET_EXTENT_LEAF_BAD.
	ErrExtentLeafBad Errcode = "Corrupt extent"
	// ErrInodeNotExtent is EXT2_ET_INODE_NOT_EXTENT.
	ErrInodeNotExtent Errcode = "Inode does not use extents"
	// ErrExtentNoNext is EXT2_ET_EXTENT_NO_NEXT.
	ErrExtentNoNext Errcode = "No 'next' extent"
	// ErrExtentNoPrev is EXT2_ET_EXTENT_NO_PREV.
	ErrExtentNoPrev Errcode = "No 'previous' extent"
	// ErrExtentNoUp is EXT2_ET_EXTENT_NO_UP.
	ErrExtentNoUp Errcode = "No 'up' extent"
	// ErrExtentNoDown is EXT2_ET_EXTENT_NO_DOWN.
	ErrExtentNoDown Errcode = "No 'down' extent"
	// ErrNoCurrentNode is EXT2_ET_NO_CURRENT_NODE.
	ErrNoCurrentNode Errcode = "No current node"
	// ErrOpNotSupported is EXT2_ET_OP_NOT_SUPPORTED.
	ErrOpNotSupported Errcode = "Ext2fs operation not supported"
	// ErrCantInsertExtent is EXT2_ET_CANT_INSERT_EXTENT.
	ErrCantInsertExtent Errcode = "No room to insert extent in node"
	// ErrCantSplitExtent is EXT2_ET_CANT_SPLIT_EXTENT.
	ErrCantSplitExtent Errcode = "Splitting would result in empty node"
	// ErrExtentNotFound is EXT2_ET_EXTENT_NOT_FOUND.
	ErrExtentNotFound Errcode = "Extent not found"
	// ErrExtentInvalidLength is EXT2_ET_EXTENT_INVALID_LENGTH.
	ErrExtentInvalidLength Errcode = "Extent length is invalid"
	// ErrInodeCsumInvalid is EXT2_ET_INODE_CSUM_INVALID.
	ErrInodeCsumInvalid Errcode = "Inode checksum does not match inode"
	// ErrExtentCsumInvalid is EXT2_ET_EXTENT_CSUM_INVALID.
	ErrExtentCsumInvalid Errcode = "Extent block checksum does not match extent block"
	// ErrDirNoSpaceForCsum is EXT2_ET_DIR_NO_SPACE_FOR_CSUM.
	ErrDirNoSpaceForCsum Errcode = "Directory block does not have space for checksum"
	// ErrFilesystemCorrupted is EXT2_ET_FILESYSTEM_CORRUPTED (EFSCORRUPTED
	// in e2fsck's journal code).
	ErrFilesystemCorrupted Errcode = "File system is corrupted"
	// ErrCorruptJournalSB is EXT2_ET_CORRUPT_JOURNAL_SB.
	ErrCorruptJournalSB Errcode = "The journal superblock is corrupt"
	// ErrRoFilsys is EXT2_ET_RO_FILSYS.
	ErrRoFilsys Errcode = "Attempt to write to filesystem opened read-only"
	// ErrNextInodeRead is EXT2_ET_NEXT_INODE_READ.
	ErrNextInodeRead Errcode = "Can't read next inode"
	// ErrNoMemory is EXT2_ET_NO_MEMORY.
	ErrNoMemory Errcode = "Memory allocation failed"
	// ErrJournalUnsuppVersion is EXT2_ET_JOURNAL_UNSUPP_VERSION.
	ErrJournalUnsuppVersion Errcode = "Unsupported journal version"
	// ErrDirCsumInvalid is EXT2_ET_DIR_CSUM_INVALID.
	ErrDirCsumInvalid Errcode = "Directory block checksum does not match directory block"
	// ErrExtAttrCsumInvalid is EXT2_ET_EXT_ATTR_CSUM_INVALID.
	ErrExtAttrCsumInvalid Errcode = "Extended attribute block checksum does not match block"
	// ErrROBlockIterate is EXT2_ET_RO_BLOCK_ITERATE.
	ErrROBlockIterate Errcode = "Attempt to modify a block mapping via a read-only block iterator"
	// ErrFileTooBig is EXT2_ET_FILE_TOO_BIG.
	ErrFileTooBig Errcode = "Ext2 file too big"
	// ErrInlineDataCantIterate is EXT2_ET_INLINE_DATA_CANT_ITERATE.
	ErrInlineDataCantIterate Errcode = "Cannot iterate data blocks of an inode containing inline data"
	// ErrBadEAHeader is EXT2_ET_BAD_EA_HEADER.
	ErrBadEAHeader Errcode = "Extended attribute block has a bad header"
	// ErrExtentCycle is EXT2_ET_EXTENT_CYCLE: an index entry leads back
	// to a node on the handle's path.
	ErrExtentCycle Errcode = "Found cyclic loop in extent tree"
	// ErrOverflow is EOVERFLOW, which the library returns when i_blocks
	// would overflow.
	ErrOverflow Errcode = "Value too large for defined data type"
)

// BadMapBlock is the iterator's error for an indirect (level 1), doubly
// (2) or triply (3) indirect block outside the filesystem
// (EXT2_ET_BAD_IND_BLOCK + level - 1); "" for any other level.
func BadMapBlock(level int) Errcode {
	switch level {
	case 1:
		return ErrBadIndBlock
	case 2:
		return ErrBadDindBlock
	case 3:
		return ErrBadTindBlock
	}
	return ""
}
