package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// denyUnixSockets installs a seccomp filter on the calling thread, inherited
// by every process it starts, under which socket(AF_UNIX, …) fails with
// EACCES. Landlock before ABI 9 does not govern connecting to a UNIX socket
// file, so without it a confined command could reach any socket the user
// can (the Docker daemon's, ssh-agent's, a credential cache's) however
// narrow its file rules are. socketpair stays allowed: it reaches nothing
// outside the process tree. A 32-bit program on x86_64 gets no sockets at
// all (its socketcall multiplexer hides the domain from the filter).
func denyUnixSockets() error {
	arch, socketNr, ok := nativeArch()
	if !ok {
		return fmt.Errorf("seccomp: no filter for %s", runtime.GOARCH)
	}
	const (
		offNr   = 0  // struct seccomp_data: nr
		offArch = 4  // arch
		offArg0 = 16 // args[0], low 32 bits (little endian)
		x32Bit  = 0x40000000
		allow   = unix.SECCOMP_RET_ALLOW
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		// i386 on x86_64: socketcall (102) and socket (359).
		i386Arch, i386SocketCall, i386Socket = unix.AUDIT_ARCH_I386, 102, 359
	)
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: arch, SkipTrue: 7}, // to the i386 check
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: socketNr, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: socketNr | x32Bit, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: 6}, // to deny
		bpf.RetConstant{Val: allow},
		// not the native architecture
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: i386Arch, SkipTrue: 3}, // to allow
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: i386SocketCall, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: i386Socket, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.RetConstant{Val: deny},
	})
	if err != nil {
		return fmt.Errorf("seccomp: assemble the filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// The kernel requires no_new_privs of an unprivileged caller.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp: install the filter: %w", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}

// nativeArch is this build's audit architecture and socket syscall number.
func nativeArch() (arch, socketNr uint32, ok bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, 41, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, 198, true
	}
	return 0, 0, false
}
