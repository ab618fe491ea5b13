package confine

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A command that was not granted the network runs in network and user
// namespaces of its own: Landlock's network rules (ABI 4+) cover TCP bind
// and connect only, so UDP (DNS included), ICMP and raw sockets would
// still reach the host's interfaces. In a new network namespace there is
// no interface but a loopback of its own, so nothing the command sends
// leaves it, whatever the protocol; the user namespace is what lets an
// unprivileged process create it.

// netNSProbe caches whether this kernel lets us create the namespaces.
// The probe starts a process, which only backend/proc does: it registers
// it with [SetNetNSProbe].
var netNSProbe struct {
	mu     sync.Mutex
	probe  func() error
	done   bool
	reason string // "" is supported
}

// SetNetNSProbe registers how to find out, once, whether a process can be
// started with [NetNSAttr] (proc starts a trivial program so).
func SetNetNSProbe(probe func() error) {
	netNSProbe.mu.Lock()
	defer netNSProbe.mu.Unlock()
	netNSProbe.probe, netNSProbe.done = probe, false
}

// probeNetNS runs the registered probe once per process.
func probeNetNS() (bool, string) {
	netNSProbe.mu.Lock()
	defer netNSProbe.mu.Unlock()
	if netNSProbe.probe == nil {
		return false, "nothing probed network namespaces in this program"
	}
	if !netNSProbe.done {
		netNSProbe.done, netNSProbe.reason = true, ""
		if err := netNSProbe.probe(); err != nil {
			netNSProbe.reason = "the kernel refuses an unprivileged network namespace (" + err.Error() + ")"
		}
	}
	return netNSProbe.reason == "", netNSProbe.reason
}

// NetNSAttr adds to attr what starts a process in new user and network
// namespaces, the user and group mapped to themselves, with CAP_NET_ADMIN
// in the new user namespace kept across exec (ambient) so that the process
// (proc's supervisor) can bring its loopback up; it drops the capability
// before it starts the command.
func NetNSAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	attr.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
	return attr
}

// EnterIsolation runs in a process started with [NetNSAttr], on the thread
// that will start the command: it brings the namespace's own loopback up
// (so a test suite's local server works inside it; it is not the host's)
// and drops every ambient capability of this thread, so the command starts
// with none.
func EnterIsolation() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network namespace: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("network namespace: read the loopback's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("network namespace: bring the loopback up: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("network namespace: drop the ambient capabilities: %w", err)
	}
	return nil
}
