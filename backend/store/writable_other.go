//go:build !unix

package store

// writable cannot ask the OS cheaply here; SQLite's own read-only error
// still classifies.
func writable(string) bool { return true }
