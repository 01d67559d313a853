package check

import (
	"errors"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// The index of a rebuilt htree directory (e2fsck's calculate_tree with
// set_root_node and set_int_node, the layout half of rehash.c): the
// leaves are laid out by the caller, the index blocks written here.

var (
	// errNoSpace is ENOSPC, calculate_tree's error for more leaves than
	// one index level holds.
	errNoSpace ext2fs.Errcode = "No space left on device"
	// errHtreeTooDeep is a tree that needs a second level of interior
	// nodes, which e2fsck builds and gofsck does not.
	errHtreeTooDeep = errors.New("directory rebuild not implemented")
)

// calculateTree writes the root into out[0] (whose leaves are out[1:],
// hashes[i] the first hash of leaf i) and appends the interior nodes when
// the leaves do not fit in the root. dir and parent are the inodes of '.'
// and '..', ft their file type byte; csum leaves room for the dx tail.
func calculateTree(out [][]byte, hashes []uint32, dir, parent uint32, ft, hashVersion uint8, csum bool) ([][]byte, error) {
	root := out[0]
	bs := len(root)
	clear(root)
	dxTail := 0
	if csum {
		dxTail = ondisk.DxTailSize
	}
	ext2fs.PutDirent(root, 0, dir, 12, 1, ft, bs)
	root[8] = '.'
	ext2fs.PutDirent(root, 12, parent, bs-12, 2, ft, bs)
	root[20], root[21] = '.', '.'
	const limitOff = ondisk.DxRootInfoOff + ondisk.DxRootInfoSize
	rootLimit := (bs - (limitOff + dxTail)) / ondisk.DxEntrySize
	nodeLimit := (bs - (ondisk.DxNodeCountOff + dxTail)) / ondisk.DxEntrySize
	nblks := len(out)
	switch {
	case nblks-1 <= rootLimit:
		ondisk.SetDxRootInfo(root, hashVersion, 0)
		for i := 1; i < nblks; i++ {
			ondisk.SetDxEntry(root, limitOff, i-1, hashes[i], uint32(i))
		}
		ondisk.SetDxCountLimit(root, limitOff, rootLimit, nblks-1)
	case nblks-1 <= rootLimit*nodeLimit:
		ondisk.SetDxRootInfo(root, hashVersion, 1)
		// Interior nodes are appended after the leaves; each takes
		// nodeLimit leaves.
		nodes, cnt := 0, 0
		var node []byte
		for i := 1; i < nblks; i++ {
			if node == nil || cnt == nodeLimit {
				if node != nil {
					ondisk.SetDxCountLimit(node, ondisk.DxNodeCountOff, nodeLimit, cnt)
				}
				if nodes == rootLimit {
					return nil, errNoSpace
				}
				node = make([]byte, bs)
				ext2fs.SetRecLen(node, 0, bs, bs)
				out = append(out, node)
				ondisk.SetDxEntry(root, limitOff, nodes, hashes[i], uint32(len(out)-1))
				nodes++
				cnt = 0
			}
			ondisk.SetDxEntry(node, ondisk.DxNodeCountOff, cnt, hashes[i], uint32(i))
			cnt++
		}
		ondisk.SetDxCountLimit(node, ondisk.DxNodeCountOff, nodeLimit, cnt)
		ondisk.SetDxCountLimit(root, limitOff, rootLimit, nodes)
	default:
		return nil, errHtreeTooDeep
	}
	return out, nil
}
