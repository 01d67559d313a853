//go:build !long

package testfs

// longTier is false: the long tests are left to scripts/test-all.sh.
const longTier = false
