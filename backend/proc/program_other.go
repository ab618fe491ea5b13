//go:build !linux

package proc

// UseSupervisorProgram has nothing to do where commands start without a
// supervisor.
func UseSupervisorProgram(string) error { return nil }
