//go:build long

package testfs

// longTier is true: built with -tags long (scripts/test-all.sh).
const longTier = true
