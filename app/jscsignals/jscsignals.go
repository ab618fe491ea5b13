// Package jscsignals keeps WebKit's JavaScript engine from replacing the Go
// runtime's SIGSEGV and SIGBUS handlers in the desktop process.
//
// JavaScriptCore installs its own handlers for those signals, without
// SA_ONSTACK, when its first VM starts: lazily, once the window's page has
// run. From then on any fault the Go runtime is handed (a nil dereference
// that would have been recovered, or a crash in C code) ends the process
// with "non-Go code set up signal handler without SA_ONSTACK flag", exit
// status 2. Wails re-adds SA_ONSTACK every 50 ms for the first five seconds
// only, which leaves a window at start-up and nothing after it; the CI run
// on 2026-11-23 lost the desktop approval test to such a crash 1.4 s after
// launch.
//
// Polled rather than signalled VM traps, and WebAssembly bounds checked in
// code rather than by a fault handler, are the JavaScriptCore options under
// which it installs neither handler. They cost the page a check per loop
// iteration; the UI runs no WebAssembly.
package jscsignals

import "os"

// Options are the JavaScriptCore settings Keep applies, by environment
// variable: JavaScriptCore reads JSC_<option> once, when its first VM starts,
// and the web process inherits them.
var Options = map[string]string{
	"JSC_usePollingTraps":           "true",
	"JSC_useWasmFaultSignalHandler": "false",
	"JSC_useWasmFastMemory":         "false",
}

// Keep sets Options for this process and the web processes it starts,
// leaving any a user set alone. Call it before the window is created.
func Keep() {
	for name, value := range Options {
		if _, set := os.LookupEnv(name); !set {
			_ = os.Setenv(name, value)
		}
	}
}
