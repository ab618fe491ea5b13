package engined

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"agenthub/app/engineclient"
)

// ExecFunc runs one forwarded command and returns its exit code. stdin
// reports the client's terminal through a Terminal() bool method;
// interrupts delivers each signal the client forwards; ctx ends when the
// client goes away or the engine stops, which ends the command but never
// the runs it started.
type ExecFunc func(ctx context.Context, req engineclient.ExecRequest, stdin io.Reader, stdout, stderr io.Writer,
	interrupts <-chan string) int

// Config is what the socket serves.
type Config struct {
	API    http.Handler               // the HTTP API and event stream, without the token guard
	Exec   ExecFunc                   // forwarded commands; nil refuses them
	Status func() engineclient.Status // GET /engine/status
	Stop   func()                     // POST /engine/stop asks the owner to stop
	Log    *slog.Logger
}

// Serve serves ln until ctx ends; forwarded commands still running then
// are cancelled (their runs go on until the owner closes its core).
func Serve(ctx context.Context, ln net.Listener, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	execCtx, cancelExecs := context.WithCancel(context.Background())
	var execs sync.WaitGroup
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+engineclient.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(cfg.Status())
	})
	mux.HandleFunc("POST "+engineclient.PathStop, func(w http.ResponseWriter, r *http.Request) {
		if cfg.Stop == nil {
			http.Error(w, "this engine is a window: close the window to stop it", http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusOK)
		cfg.Stop()
	})
	mux.HandleFunc("POST "+engineclient.PathExec, func(w http.ResponseWriter, r *http.Request) {
		if cfg.Exec == nil {
			http.Error(w, "this engine does not run forwarded commands", http.StatusNotImplemented)
			return
		}
		if !strings.EqualFold(r.Header.Get("Upgrade"), engineclient.UpgradeProto) {
			http.Error(w, "upgrade to "+engineclient.UpgradeProto+" required", http.StatusUpgradeRequired)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "cannot take over the connection", http.StatusInternalServerError)
			return
		}
		conn, brw, err := hj.Hijack()
		if err != nil {
			cfg.Log.Warn("engine socket: hijack failed", "err", err)
			return
		}
		execs.Add(1)
		go func() {
			defer execs.Done()
			defer conn.Close()
			fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", engineclient.UpgradeProto)
			if err := brw.Flush(); err != nil {
				return
			}
			runExec(execCtx, conn, brw.Reader, cfg)
		}()
	})
	if cfg.API != nil {
		mux.Handle("/", cfg.API)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(shut) // event streams end when their requests' contexts do
		cancel()
	}
	cancelExecs()
	execs.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// runExec reads the request frame, runs the command and sends its exit
// code. Frames from the client after the request feed stdin and signals.
func runExec(parent context.Context, conn net.Conn, r io.Reader, cfg Config) {
	fw := engineclient.NewFrameWriter(conn)
	kind, raw, err := engineclient.ReadFrame(r)
	if err != nil || kind != engineclient.FrameRequest {
		return
	}
	var req engineclient.ExecRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		_ = fw.Write(engineclient.FrameStderr, []byte("agenthub: the engine could not read the command: "+err.Error()+"\n"))
		_ = fw.Write(engineclient.FrameExit, []byte("1"))
		return
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	in := newInbox(req.StdinTTY)
	go func() { <-ctx.Done(); in.close(io.EOF) }() // a prompt never outlives its command
	signals := make(chan string, 8)
	go func() {
		// A lost client ends the command (never its runs).
		defer cancel()
		for {
			kind, p, err := engineclient.ReadFrame(r)
			if err != nil {
				in.close(err)
				return
			}
			switch kind {
			case engineclient.FrameStdin:
				in.put(p)
			case engineclient.FrameStdinEOF:
				in.close(io.EOF)
			case engineclient.FrameSignal:
				select {
				case signals <- string(p):
				default: // a burst of Ctrl-C: the command has enough of them queued
				}
			}
		}
	}()
	code := cfg.Exec(ctx, req, in, engineclient.Stream{F: fw, Kind: engineclient.FrameStdout},
		engineclient.Stream{F: fw, Kind: engineclient.FrameStderr}, signals)
	_ = fw.Write(engineclient.FrameExit, []byte(strconv.Itoa(code)))
}

// inbox is a forwarded command's standard input: the client's bytes are
// queued as they arrive, so a command that never reads its input never
// stalls the frames (signals) behind it.
type inbox struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	err  error
	tty  bool
}

func newInbox(tty bool) *inbox {
	in := &inbox{tty: tty}
	in.cond = sync.NewCond(&in.mu)
	return in
}

// Terminal reports whether the client's standard input is a terminal.
func (in *inbox) Terminal() bool { return in.tty }

func (in *inbox) put(p []byte) {
	in.mu.Lock()
	in.buf = append(in.buf, p...)
	in.mu.Unlock()
	in.cond.Broadcast()
}

func (in *inbox) close(err error) {
	in.mu.Lock()
	if in.err == nil {
		in.err = err
	}
	in.mu.Unlock()
	in.cond.Broadcast()
}

func (in *inbox) Read(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf) == 0 && in.err == nil {
		in.cond.Wait()
	}
	if len(in.buf) > 0 {
		n := copy(p, in.buf)
		in.buf = in.buf[n:]
		return n, nil
	}
	if in.err != io.EOF {
		return 0, io.EOF // a lost client reads as the end of input
	}
	return 0, in.err
}
