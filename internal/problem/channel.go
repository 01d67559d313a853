package problem

// The I/O channel's questions. When a read fails, e2fsck's read-error
// handler (e2fsck/ehandler.c) prints the block and the error and asks
// "Ignore error?" and then "Force rewrite?" with ask(), outside the
// problem table: they are not problems with a PR_ code, answering them
// changes no exit bit, and a yes does not mark the filesystem changed.
// gofsck gives them codes in a range e2fsck does not use (pass 0xff) so
// that the Reporter prints and answers them like the rest.
const (
	// PR_IO_READ_ERROR: a read failed where no operation was named.
	PR_IO_READ_ERROR Code = 0xff0001 // Error reading block %b (%m).  Ignore error?
	// PR_IO_READ_ERROR_WHILE: a read failed during the operation %s.
	PR_IO_READ_ERROR_WHILE Code = 0xff0002 // Error reading block %b (%m) while %s.  Ignore error?
	// PR_IO_FORCE_REWRITE follows an ignored read error: yes writes the
	// block back (zero-filled where the read failed), so that the device
	// may remap the sector.
	PR_IO_FORCE_REWRITE Code = 0xff0003 // Force rewrite?
)

var channelDefs = [...]Def{
	{Code: PR_IO_READ_ERROR, Name: "PR_IO_READ_ERROR", Prompt: PromptIgnoreError, Flags: FlagNoOK | FlagNotAFix,
		Msg: "Error reading block %b (%m).  "},
	{Code: PR_IO_READ_ERROR_WHILE, Name: "PR_IO_READ_ERROR_WHILE", Prompt: PromptIgnoreError, Flags: FlagNoOK | FlagNotAFix,
		Msg: "Error reading block %b (%m) while %s.  "},
	{Code: PR_IO_FORCE_REWRITE, Name: "PR_IO_FORCE_REWRITE", Prompt: PromptForceRewrite, Flags: FlagNoOK | FlagNotAFix | FlagPreenOK},
}
