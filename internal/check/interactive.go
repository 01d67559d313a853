package check

// answeredAll reports whether the sink's last question was answered 'a'
// (yes to all) interactively. e2fsck's fix_problem then returns 2, and
// pass 5 rewrites a bitmap only when its latch's question returned 1: the
// differences stay, as e2fsck 1.47.0 leaves them.
func answeredAll(s Sink) bool { return s.AnsweredAll() }
