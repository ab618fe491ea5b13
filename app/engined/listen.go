// Package engined serves a data directory's engine on its Unix socket: the
// same HTTP API and event stream as browser mode (app/httpapi), status and
// stop, and CLI commands forwarded by app/engineclient, which run here
// against the one Core that owns the runs (issue 16).
package engined

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"agenthub/app/engineclient"
)

// Listen binds the socket of the data directory home, mode 0600. A stale
// socket file (no process listens) is replaced; a live one is a conflict,
// which the caller's engine lock normally rules out first.
func Listen(home string) (net.Listener, error) {
	path := engineclient.SocketPath(home)
	if len(path) >= 108 {
		return nil, fmt.Errorf("the socket path %s is %d bytes, over the 107 a Unix socket allows: use a shorter --home", path, len(path))
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("another engine already listens on %s", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the stale engine socket: %w", err)
	}
	// The umask covers the moment between bind and chmod: nobody else may
	// connect even then.
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on the engine socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restrict the engine socket: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	return &peerListener{Listener: ln, uid: os.Getuid()}, nil
}

// peerListener accepts only connections whose peer runs as this user: the
// socket's mode already says so, and SO_PEERCRED checks it on every
// connection (a socket file can be reached through a directory whose
// permissions changed, or passed as a descriptor).
type peerListener struct {
	net.Listener
	uid int
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := PeerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		slog.Warn("engine socket: refused a connection from another user", "peer_uid", uid, "err", err)
		c.Close()
	}
}

// PeerUID is the uid of the process at the other end of a Unix connection.
func PeerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a Unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if credErr != nil {
		return -1, fmt.Errorf("read the peer's credentials: %w", credErr)
	}
	return int(cred.Uid), nil
}
