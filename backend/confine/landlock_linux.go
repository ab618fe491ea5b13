package confine

import (
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls are made here, over golang.org/x/sys/unix,
// rather than through go-landlock's Restrict: below ABI 8 that enforces on
// every thread of the process through libcap's psx, which in a cgo binary
// (SQLite, the window) wraps pthread_create for the whole app. proc needs
// only the one thread that forks the command confined, so [Rules.Apply]
// restricts the calling thread alone.

// Access rights, as the kernel numbers them.
const (
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	deviceRights = readRights | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	tcpRights   = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeRights = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// handledFS is every file-system right an ABI knows, up to ABI 8: ABI 9's
// RESOLVE_UNIX would need grants for every socket a tool talks to.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	default:
		return 1<<13 - 1
	}
}

// rulesetAttr is struct landlock_ruleset_attr as of ABI 6.
type rulesetAttr struct {
	fs, net, scoped uint64
}

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	allowed, port uint64
}

func probe() Support {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return Support{Reason: "the kernel lacks Landlock (Linux 5.13 or later, built with it)"}
	case errno == unix.EOPNOTSUPP:
		return Support{Reason: "Landlock is not enabled at boot (add landlock to the lsm= kernel parameter)"}
	case errno != 0:
		return Support{Reason: "Landlock: " + errno.Error()}
	}
	return Support{ABI: int(v)}
}

// Apply confines the calling thread, and every process it starts from now
// on, to r on a kernel with ABI abi (from [Probe]); with abi 0 it applies
// only the UNIX socket filter (NoUnixSockets). The caller must hold the
// thread (runtime.LockOSThread) and start the process from it. A path that
// does not exist is skipped.
func (r Rules) Apply(abi int) error {
	if r.NoUnixSockets {
		if err := denyUnixSockets(); err != nil {
			return err
		}
	}
	if abi < 1 {
		return nil
	}
	attr := rulesetAttr{fs: handledFS(abi)}
	size := unsafe.Sizeof(uint64(0)) // ABI 1 to 3 know only the file-system field
	if abi >= 4 {
		size = 2 * unsafe.Sizeof(uint64(0))
		if !r.Network.Any {
			attr.net = tcpRights
		}
	}
	if abi >= 6 {
		size = unsafe.Sizeof(attr)
		attr.scoped = scopeRights
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock: create the ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, d := range r.Read {
		rights := uint64(readRights)
		if d.Label == LabelDevices {
			rights = deviceRights
		}
		if err := addPath(int(fd), d.Path, rights&attr.fs); err != nil {
			return err
		}
	}
	for _, d := range r.Write {
		if err := addPath(int(fd), d.Path, attr.fs); err != nil {
			return err
		}
	}
	if attr.net != 0 {
		for _, port := range r.Network.ConnectTCP {
			rule := netPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
			if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, landlockRuleNetPort,
				uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
				return fmt.Errorf("landlock: allow TCP port %d: %w", port, errno)
			}
		}
	}
	// no_new_privs: a set-uid program cannot shed the domain (the kernel
	// requires it of an unprivileged caller). Both calls act on this thread.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict: %w", errno)
	}
	return nil
}

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT (x/sys names only the path
// rule).
const landlockRuleNetPort = 2

// addPath grants rights beneath path. A file gets only the rights that
// apply to files; a missing path is skipped.
func addPath(rulesetFD int, path string, rights uint64) error {
	if rights == 0 || path == "" {
		return nil
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: open %s: %w", strconv.Quote(path), err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", strconv.Quote(path), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: allow %s: %w", strconv.Quote(path), errno)
	}
	return nil
}
