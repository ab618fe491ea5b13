package engineclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"agenthub/backend"
)

// Status is what `agenthub engine status` and `doctor` report.
type Status struct {
	Pid       int    `json:"pid"`
	Version   string `json:"version"`
	Home      string `json:"home"` // shown with ~
	StartedAt string `json:"startedAt"`
	// Surface is who serves the socket: "engine" (agenthub engine) or
	// "window" (a desktop window that owns the runs).
	Surface string `json:"surface"`
	// ActiveRuns counts the runs the engine holds in memory now.
	ActiveRuns int `json:"activeRuns"`
}

// Client talks to one data directory's engine.
type Client struct {
	sock string
	// HTTP sends API requests over the socket; URLs are http://engine/….
	HTTP *http.Client
}

// SocketPath is where the engine of the data directory home listens.
func SocketPath(home string) string { return filepath.Join(home, SocketName) }

// ErrNoEngine reports that no engine answers on the data directory's socket.
var ErrNoEngine = errors.New("no AgentHub engine is running for this data directory")

// Dial connects to the engine of home, or fails with ErrNoEngine when
// nothing listens. It only proves the socket accepts a connection: the API
// calls themselves say more.
func Dial(home string) (*Client, error) {
	sock := SocketPath(home)
	conn, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoEngine, err)
	}
	conn.Close()
	c := &Client{sock: sock}
	c.HTTP = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		DisableCompression: true,
	}}
	return c, nil
}

// Socket is the socket path this client dials.
func (c *Client) Socket() string { return c.sock }

// URL is the address of an API path on the socket.
func URL(path string) string { return "http://engine" + path }

// Status asks the engine who it is.
func (c *Client) Status(ctx context.Context) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL(PathStatus), nil)
	if err != nil {
		return Status{}, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Status{}, fmt.Errorf("ask the engine for its status: %w", err)
	}
	defer resp.Body.Close()
	var s Status
	if resp.StatusCode != http.StatusOK {
		return Status{}, fmt.Errorf("engine status: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return Status{}, fmt.Errorf("read the engine status: %w", err)
	}
	return s, nil
}

// Stop asks the engine to stop; it answers before it goes, so wait for the
// data directory's engine lock to be free to know it has gone.
func (c *Client) Stop(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, URL(PathStop), nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("ask the engine to stop: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("engine stop: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// Exec runs one command in the engine: stdin is forwarded as it arrives,
// stdout and stderr are written as the engine sends them, each signal
// received on signals is forwarded, and the command's exit code is
// returned. A connection lost before the exit code is an error of code
// engine_unavailable; it also matches ErrNoEngine when the engine never
// took the command (it was exiting), so the caller may start another.
func (c *Client) Exec(ctx context.Context, r ExecRequest, stdin io.Reader, stdout, stderr io.Writer, signals <-chan string) (int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.sock)
	if err != nil {
		return 0, lost(fmt.Errorf("%w: %v", ErrNoEngine, err))
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: engine\r\nConnection: Upgrade\r\nUpgrade: %s\r\nContent-Length: 0\r\n\r\n",
		PathExec, UpgradeProto)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil { // an engine that was exiting: nothing of the command ran
		return 0, lost(fmt.Errorf("%w: %v", ErrNoEngine, err))
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return 0, &backend.Error{Code: backend.CodeEngineUnavailable,
			Message: fmt.Sprintf("the engine refused the command: HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(body))),
			Next:    "Check `agenthub engine status`; restart it with agenthub engine stop, then run the command again."}
	}
	fw := NewFrameWriter(conn)
	raw, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	if err := fw.Write(FrameRequest, raw); err != nil {
		return 0, lost(err)
	}
	done := make(chan struct{})
	defer close(done)
	go forwardSignals(fw, signals, done)
	if stdin != nil {
		go forwardStdin(fw, stdin, done)
	} else {
		_ = fw.Write(FrameStdinEOF, nil)
	}
	for {
		kind, p, err := ReadFrame(br)
		if err != nil {
			return 0, lost(err)
		}
		switch kind {
		case FrameStdout:
			_, _ = stdout.Write(p)
		case FrameStderr:
			_, _ = stderr.Write(p)
		case FrameExit:
			code, err := strconv.Atoi(string(p))
			if err != nil {
				return 0, fmt.Errorf("the engine sent a bad exit code %q", p)
			}
			return code, nil
		}
	}
}

func forwardSignals(fw *FrameWriter, signals <-chan string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case s, ok := <-signals:
			if !ok {
				return
			}
			if fw.Write(FrameSignal, []byte(s)) != nil {
				return
			}
		}
	}
}

// forwardStdin copies stdin to the engine until it ends. A read blocked on a
// terminal when the command ends is left behind: the process exits then.
func forwardStdin(fw *FrameWriter, stdin io.Reader, done <-chan struct{}) {
	buf := make([]byte, 32*1024)
	for {
		n, err := stdin.Read(buf)
		select {
		case <-done:
			return
		default:
		}
		if n > 0 && fw.Write(FrameStdin, buf[:n]) != nil {
			return
		}
		if err != nil {
			_ = fw.Write(FrameStdinEOF, nil)
			return
		}
	}
}

func lost(err error) error {
	return &backend.Error{Code: backend.CodeEngineUnavailable, Err: err,
		Message: "the connection to the AgentHub engine was lost",
		Next:    "Runs go on in the engine if it still runs: check with agenthub engine status, then agenthub runs follow RUN."}
}
