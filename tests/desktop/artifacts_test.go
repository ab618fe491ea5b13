//go:build smoke

package desktop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWindowShowsArtifacts: a playbook run takes a screenshot of a
// workspace page (pending its privacy review); the real window, opened on
// the run's artifacts (`window --artifacts RUN`), shows it with the review
// focused; the reviewer presses Enter; the review is recorded from the
// window and the screenshot can then be exported.
func TestWindowShowsArtifacts(t *testing.T) {
	bin := binary(t)
	home, ws := t.TempDir(), gitWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "page.html"), []byte(`<h1 style="color:#c00">Desktop page</h1>`), 0o644); err != nil {
		t.Fatal(err)
	}
	playbook := filepath.Join(t.TempDir(), "shot.toml")
	if err := os.WriteFile(playbook, []byte(`version = 1
name = "shot"
[[step]]
say = "Taking a screenshot."
[[step.call]]
tool = "screenshot"
args = { path = "page.html", viewport = "640x400", title = "Desktop page" }
[[step]]
expect = ["as artifact art_"]
say = "Done."
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cli(t, bin, home, 0, "workspace", "add", ws)
	out := cli(t, bin, home, 0, "run", "--workspace", ws, "--playbook", playbook, "screenshot the page")
	runID := regexp.MustCompile(`\brun_[0-9a-f]{32}\b`).FindString(string(out))
	var list []struct {
		ID   string `json:"artifactId"`
		Kind string `json:"kind"`
		Meta struct {
			Privacy string `json:"privacy"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(cli(t, bin, home, 0, "artifacts", "list", "--json"), &list); err != nil || len(list) != 1 ||
		list[0].Kind != "screenshot" || list[0].Meta.Privacy != "pending" || runID == "" {
		t.Fatalf("want one screenshot pending review of run %q, got %+v (%v)\n%s", runID, list, err, out)
	}
	art := list[0].ID
	export := filepath.Join(t.TempDir(), "shot.png")
	cli(t, bin, home, 1, "artifacts", "export", art, "-o", export) // refused: not reviewed

	d := startDisplay(t)
	a := startAppArgs(t, d, bin, "window", "--home", home, "--artifacts", runID)
	id, err := d.waitWindow(t, "AgentHub", a.exited, 60*time.Second)
	if err != nil {
		t.Fatal(err, a.crash())
	}
	shot := filepath.Join(artifacts(t), "artifacts-window.png")
	reviewed := func() bool { return reviewedBy(t, bin, home, art) != "" }
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && variance(d.screenshot(t, id, shot)) <= 50 {
		time.Sleep(500 * time.Millisecond)
	}
	for time.Now().Before(deadline) && !reviewed() {
		time.Sleep(2 * time.Second) // the page lists the artifacts and opens the first after it mounts
		d.screenshot(t, id, shot)
		for _, args := range [][]string{{"windowfocus", "--sync", id}, {"key", "--window", id, "Return"}} {
			if out, err := d.command(t.Context(), "xdotool", args...).CombinedOutput(); err != nil {
				t.Fatalf("xdotool %v: %v\n%s", args, err, out)
			}
		}
		for wait := time.Now().Add(8 * time.Second); time.Now().Before(wait) && !reviewed(); time.Sleep(300 * time.Millisecond) {
		}
	}
	if by := reviewedBy(t, bin, home, art); by != "window" {
		t.Fatalf("the screenshot's review was recorded from %q, want window (screenshot %s)", by, shot)
	}
	d.screenshot(t, id, filepath.Join(filepath.Dir(shot), "artifacts-reviewed.png"))
	if err := d.closeWindow(id); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.exited:
		if err != nil {
			t.Fatalf("the app did not exit cleanly: %v%s", err, a.crash())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the app did not exit within 15 s of closing its window")
	}
	cli(t, bin, home, 0, "artifacts", "export", art, "-o", export)
	if b, err := os.ReadFile(export); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("the exported screenshot: %v", err)
	}
}

// reviewedBy is the surface of the screenshot's artifact.reviewed entry, ""
// while it has none.
func reviewedBy(t *testing.T, bin, home, id string) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(cli(t, bin, home, 0, "audit", "export")))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Kind    string `json:"kind"`
			Surface string `json:"surface"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Kind == "artifact.reviewed" && strings.Contains(sc.Text(), id) {
			return e.Surface
		}
	}
	return ""
}
