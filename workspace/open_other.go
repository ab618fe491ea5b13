//go:build !unix

package workspace

// nonBlocking is zero where opening a file cannot block on its type.
const nonBlocking = 0
