//go:build linux && cgo

// Package jscprobe starts a JavaScriptCore VM in this process and reads the
// SIGSEGV handler, so a test can see what the engine did to it. Only tests
// import it.
package jscprobe

/*
#cgo pkg-config: javascriptcoregtk-4.1
#include <jsc/jsc.h>
#include <signal.h>
#include <stdint.h>

static uintptr_t segv_handler(int *onstack) {
	struct sigaction sa;
	if (sigaction(SIGSEGV, NULL, &sa) != 0) {
		return 0;
	}
	*onstack = (sa.sa_flags & SA_ONSTACK) != 0;
	return (uintptr_t)sa.sa_sigaction;
}

static void run_script(void) {
	JSCContext *ctx = jsc_context_new();
	JSCValue *v = jsc_context_evaluate(ctx, "let s = 0; for (let i = 0; i < 100000; i++) s += i; s", -1);
	g_object_unref(v);
	g_object_unref(ctx);
}
*/
import "C"

// Handler is the process's SIGSEGV handler address and whether it runs on
// the alternate signal stack, as the Go runtime requires.
type Handler struct {
	Addr    uintptr
	OnStack bool
}

// SegvHandler reads the current SIGSEGV handler.
func SegvHandler() Handler {
	var onStack C.int
	addr := C.segv_handler(&onStack)
	return Handler{Addr: uintptr(addr), OnStack: onStack != 0}
}

// RunScript starts a JavaScriptCore VM and runs a loop in it, long enough
// for the engine to set itself up as the window's page does.
func RunScript() { C.run_script() }
