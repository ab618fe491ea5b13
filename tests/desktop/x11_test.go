//go:build smoke

package desktop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// display is a private Xvfb server and D-Bus session for one test.
type display struct {
	name string
	env  []string
}

// startDisplay runs Xvfb on a free display number and a D-Bus session bus,
// both stopped when the test ends.
func startDisplay(t *testing.T) *display {
	t.Helper()
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	xvfb.ExtraFiles = []*os.File{w}
	if err := xvfb.Start(); err != nil {
		t.Fatalf("start Xvfb (make test installs it): %v", err)
	}
	w.Close()
	t.Cleanup(func() { _ = xvfb.Process.Kill(); _ = xvfb.Wait() })
	num, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("read the display number from Xvfb: %v", err)
	}
	d := &display{name: ":" + strings.TrimSpace(num)}
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	bus.Env = append(os.Environ(), "DISPLAY="+d.name)
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = bus.Process.Kill(); _ = bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the D-Bus address: %v", err)
	}
	d.env = append(os.Environ(), "DISPLAY="+d.name, "DBUS_SESSION_BUS_ADDRESS="+strings.TrimSpace(addr),
		"WAYLAND_DISPLAY=", "GDK_BACKEND=x11")
	return d
}

func (d *display) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = d.env
	return cmd
}

// windows lists the ids of visible windows whose name starts with title.
func (d *display) windows(t *testing.T, title string) []string {
	t.Helper()
	out, err := d.command(t.Context(), "xdotool", "search", "--onlyvisible", "--name", "^"+title).Output()
	if err != nil { // xdotool exits 1 when nothing matches
		return nil
	}
	return strings.Fields(string(out))
}

// waitWindow polls for a visible window titled title until the deadline or
// until the process exits (a binary without the desktop tags exits at once).
func (d *display) waitWindow(t *testing.T, title string, exited <-chan error, limit time.Duration) (string, error) {
	t.Helper()
	deadline := time.After(limit)
	for {
		if ids := d.windows(t, title); len(ids) > 0 {
			return ids[0], nil
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("the app exited before showing a window (exit: %v)", err)
		case <-deadline:
			return "", fmt.Errorf("no window titled %q within %s", title, limit)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// screenshot captures a window as PNG into path and decodes it.
func (d *display) screenshot(t *testing.T, id, path string) image.Image {
	t.Helper()
	if out, err := d.command(t.Context(), "import", "-window", id, path).CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// variance is the mean per-channel luminance variance of img; a blank
// window (only the background colour) is close to zero.
func variance(img image.Image) float64 {
	var sum, sq, n float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
		}
	}
	mean := sum / n
	return sq/n - mean*mean
}

func artifacts(t *testing.T) string {
	dir := os.Getenv("SMOKE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func binary(t *testing.T) string {
	bin := os.Getenv("AGENTHUB_BIN")
	if bin == "" {
		t.Fatal("AGENTHUB_BIN must name the agenthub binary built with the desktop tags (make test-desktop sets it)")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
