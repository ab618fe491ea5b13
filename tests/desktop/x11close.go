//go:build smoke

package desktop

/*
#cgo pkg-config: x11
#include <stdlib.h>
#include <X11/Xlib.h>

// closeWindow sends WM_DELETE_WINDOW, which is what a window manager does
// when the user clicks the close button. Xvfb runs no window manager, and
// `xdotool windowclose` destroys the window instead, which no app survives
// cleanly.
static int closeWindow(const char *display, unsigned long window) {
	Display *d = XOpenDisplay(display);
	if (d == NULL) return 1;
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = window;
	ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = XInternAtom(d, "WM_DELETE_WINDOW", False);
	ev.xclient.data.l[1] = CurrentTime;
	Status ok = XSendEvent(d, window, False, NoEventMask, &ev);
	XFlush(d);
	XCloseDisplay(d);
	return ok ? 0 : 2;
}
*/
import "C"

import (
	"fmt"
	"strconv"
	"unsafe"
)

// closeWindow asks the window to close the way a user's close button does.
func (d *display) closeWindow(id string) error {
	win, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return fmt.Errorf("window id %q: %w", id, err)
	}
	name := C.CString(d.name)
	defer C.free(unsafe.Pointer(name))
	if rc := C.closeWindow(name, C.ulong(win)); rc != 0 {
		return fmt.Errorf("send WM_DELETE_WINDOW to %s: error %d", id, rc)
	}
	return nil
}
