//go:build !linux

package confine

import "syscall"

func probeNetNS() (bool, string) { return false, "network namespaces are Linux only" }

// SetNetNSProbe does nothing where there are no network namespaces.
func SetNetNSProbe(func() error) {}

// NetNSAttr is attr unchanged where there are no network namespaces.
func NetNSAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// EnterIsolation does nothing where there are no network namespaces.
func EnterIsolation() error { return nil }
