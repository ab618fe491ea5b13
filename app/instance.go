package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
	"github.com/wailsapp/wails/v2/pkg/options"
)

// instanceID scopes the single-instance lock to the data directory, so two
// homes (tests, profiles) can run side by side.
func instanceID(home string) string {
	sum := sha256.Sum256([]byte(home))
	return "dev.agenthub.desktop.h" + hex.EncodeToString(sum[:6])
}

// focusFirstInstance asks the window that holds the data directory to come
// forward. It speaks the D-Bus protocol of Wails' own single-instance lock,
// which the first window exports: Wails runs that check concurrently with
// OnStartup, so AgentHub takes its file lock first and hands over itself.
func focusFirstInstance(id string) error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return fmt.Errorf("connect to the session bus: %w", err)
	}
	defer conn.Close()
	name := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(id)
	wd, _ := os.Getwd()
	msg, err := json.Marshal(options.SecondInstanceData{Args: os.Args[1:], WorkingDirectory: wd})
	if err != nil {
		return err
	}
	dest := "org." + name + ".SingleInstance"
	obj := conn.Object(dest, dbus.ObjectPath("/org/"+name+"/SingleInstance"))
	if err := obj.Call(dest+".SendMessage", 0, string(msg)).Store(); err != nil {
		return fmt.Errorf("reach the running window: %w", err)
	}
	return nil
}
