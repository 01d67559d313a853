package test

import "fmt"

// journalRestartCase drops the journal (inode 8 cleared with no backup of
// its blocks in the superblock) and makes pass 1 restart (a file with
// twelve illegal block numbers, block-mapped also on extent filesystems,
// is cleared part way through its blocks): e2fsck re-creates the journal
// before the restart, from pass 1's found map (journal_restart.go).
func journalRestartCase() dcase {
	cmds := []string{"clri <8>", "ssv jnl_backup_type 0", "sif /dir/file flags 0"}
	for i := range 12 {
		cmds = append(cmds, fmt.Sprintf("sif /dir/file block[%d] 9999999", i))
	}
	return dbgCase("journal-dropped-restart", cmds...)
}
