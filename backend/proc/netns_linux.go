package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"agenthub/backend/confine"
)

// The network-namespace probe of backend/confine starts a process, which is
// this package's job: it starts /bin/true the way launch starts a
// supervisor without the network (confine.NetNSAttr).
func init() { confine.SetNetNSProbe(probeNetNS) }

func probeNetNS() error {
	prog := ""
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if _, err := os.Stat(p); err == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		return errors.New("no /bin/true to probe with")
	}
	cmd := exec.Command(prog)
	cmd.Env = []string{}
	cmd.SysProcAttr = confine.NetNSAttr(&syscall.SysProcAttr{})
	if err := cmd.Run(); err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return errno
		}
		return err
	}
	return nil
}
