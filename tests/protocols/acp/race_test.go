//go:build race

package acp

// raceBuild: under `go test -race` the binary under test is built with the
// race detector too, so the agent's goroutines (one per open permission
// request) are checked where they run.
const raceBuild = true
