package check

import "gofsck/internal/ondisk"

// chargeQuota records an inode's usage for the quota comparison at the end
// of the run (e2fsck's quota_data_add and quota_data_inodes): space in
// bytes and the number of inodes. Not implemented yet.
func (c *Checker) chargeQuota(ino uint32, n ondisk.Inode, space uint64, inodes uint64) {}

// checkQuotas compares the usage gathered in pass 1 with each quota file
// (PR_6_UPDATE_QUOTAS). Not implemented yet.
func (c *Checker) checkQuotas() {}
