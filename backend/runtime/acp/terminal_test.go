package acp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend/tools"
)

func TestTerminalKeepsTheLatestOutput(t *testing.T) {
	term := &terminal{limit: 4}
	_, _ = term.Write([]byte("ab"))
	if string(term.out) != "ab" || term.truncated {
		t.Fatalf("%q %v", term.out, term.truncated)
	}
	_, _ = term.Write([]byte("ééx")) // 5 bytes: the cut falls inside the first é
	if string(term.out) != "éx" || !term.truncated {
		t.Fatalf("%q %v", term.out, term.truncated)
	}
}

func TestCommandLine(t *testing.T) {
	if got := commandLine("ls -la | wc -l", nil); got != "ls -la | wc -l" {
		t.Errorf("a command without arguments is a shell line: %q", got)
	}
	if got, want := commandLine("printf", []string{"%s|", "a b", "it's", "--x=1"}), `printf '%s|' 'a b' 'it'\''s' --x=1`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTerminalRequestsRefused: a directory outside the workspace (also
// through a symlink) or a variable off the shell tool's allow-list is
// refused before anything is asked or run.
func TestTerminalRequestsRefused(t *testing.T) {
	s := testSession(t, map[string]string{"sub/a.txt": "a"})
	c := client{s}
	outside, escape := t.TempDir(), filepath.Join(s.Root, "escape")
	for _, tt := range []struct {
		req  sdk.CreateTerminalRequest
		want string
	}{
		{sdk.CreateTerminalRequest{Command: "ls", Cwd: &outside}, "outside the workspace"},
		{sdk.CreateTerminalRequest{Command: "ls", Cwd: &escape}, "outside the workspace"},
		{sdk.CreateTerminalRequest{Command: "ls", Env: []sdk.EnvVariable{{Name: "OPENAI_API_KEY", Value: "x"}}},
			"the environment variable OPENAI_API_KEY is not allowed"},
		{sdk.CreateTerminalRequest{Command: "  "}, "the command is empty"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second) // a request let through waits for the gate
		_, err := c.CreateTerminal(ctx, tt.req)
		cancel()
		if !strings.Contains(reqErr(err), tt.want) {
			t.Errorf("%+v: %q, want %q", tt.req, reqErr(err), tt.want)
		}
	}
	if len(s.Queue) != 0 || len(s.terms) != 0 {
		t.Fatalf("a refused request was queued: %d %d", len(s.Queue), len(s.terms))
	}
}

// TestReleaseKillsARunningTerminal: release stops the command's process
// group and forgets the terminal.
func TestReleaseKillsARunningTerminal(t *testing.T) {
	s := testSession(t, nil)
	c := client{s}
	term := &terminal{id: "t1", limit: 100, done: make(chan struct{})}
	p, err := tools.Shell{Command: "echo up; sleep 300"}.Start(context.Background(), s.Root, term)
	if err != nil {
		t.Fatal(err)
	}
	term.p = p
	go term.watch()
	if !s.addTerminal(term) {
		t.Fatal("not added")
	}
	out, err := c.TerminalOutput(t.Context(), sdk.TerminalOutputRequest{TerminalId: "t1"})
	if err != nil || out.ExitStatus != nil {
		t.Fatalf("output of a running command: %+v %v", out, err)
	}
	if _, err := c.ReleaseTerminal(t.Context(), sdk.ReleaseTerminalRequest{TerminalId: "t1"}); err != nil {
		t.Fatal(err)
	}
	// The group's last members may linger for a moment as zombies until
	// their reaper (init, or whoever the container runs) collects them: a
	// loaded machine makes that moment long. What release must guarantee is
	// that nothing in the group still runs, so wait for that with a
	// deadline instead of probing once.
	if live := waitGroupDead(p.Pid(), 30*time.Second); len(live) > 0 {
		t.Fatalf("the process group survived the release: %v still running", live)
	}
	if _, err := c.TerminalOutput(t.Context(), sdk.TerminalOutputRequest{TerminalId: "t1"}); !strings.Contains(reqErr(err), "not found") {
		t.Fatalf("a released terminal is still there: %v", err)
	}
}

// waitGroupDead polls until no process of group pgid is alive (zombies
// count as dead: they run nothing) or the deadline passes, and returns the
// pids still running then.
func waitGroupDead(pgid int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		live := runningInGroup(pgid)
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runningInGroup lists the non-zombie processes whose process group is
// pgid, read from /proc; without /proc it falls back to kill(-pgid, 0),
// which cannot tell a zombie from a live process.
func runningInGroup(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		if syscall.Kill(-pgid, 0) == nil {
			return []int{pgid}
		}
		return nil
	}
	var live []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited while we looked
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so split after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" || f[0] == "X" {
			continue
		}
		live = append(live, pid)
	}
	return live
}
