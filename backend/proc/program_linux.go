package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// program is what launch re-executes as the supervisor: this very binary
// (selfExe) unless UseSupervisorProgram named another one. The desktop
// window's binary links GTK and WebKitGTK, whose ~170 shared libraries every
// supervisor would load (about 0.25 s of CPU per command) just to fork the
// command; it hands the small CLI binary here instead.
var program = struct {
	sync.Mutex
	path string // "" is selfExe
	file *os.File
}{}

// programFdFloor keeps the held descriptor above the ones a supervisor
// inherits (stdin..fdStatus), which the child's dup2s would overwrite before
// it execs the program through /proc/self/fd.
const programFdFloor = 10

// UseSupervisorProgram makes every later supervisor the program at path,
// which must be an AgentHub binary (its backend/proc init hook is the
// supervisor). The file is opened now and executed through its descriptor,
// so, like /proc/self/exe, a binary replaced or removed on disk afterwards
// (an upgrade) still starts the one this process was started with.
func UseSupervisorProgram(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("the supervisor program: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("the supervisor program is not an executable file")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open the supervisor program: %w", err)
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, programFdFloor)
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("hold the supervisor program open: %w", err)
	}
	held := os.NewFile(uintptr(fd), path)
	program.Lock()
	defer program.Unlock()
	if program.file != nil {
		_ = program.file.Close()
	}
	program.file, program.path = held, fmt.Sprintf("/proc/self/fd/%d", fd)
	return nil
}

// useSelfAsSupervisor undoes UseSupervisorProgram (tests).
func useSelfAsSupervisor() {
	program.Lock()
	defer program.Unlock()
	if program.file != nil {
		_ = program.file.Close()
	}
	program.file, program.path = nil, ""
}

// supervisorProgram is the path launch executes.
func supervisorProgram() string {
	program.Lock()
	defer program.Unlock()
	if program.path == "" {
		return selfExe
	}
	return program.path
}
