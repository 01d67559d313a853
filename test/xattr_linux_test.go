package test

import "syscall"

// setxattr sets a user xattr through the kernel (the mounted filesystem).
func setxattr(path, name, value string) error {
	return syscall.Setxattr(path, name, []byte(value), 0)
}
