// Package app is the desktop window: the only package that imports the Wails
// runtime. It binds the app/api facades, bridges committed events to the
// frontend and formats errors; it holds no behaviour of its own.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"agenthub/app/api"
	"agenthub/app/jscsignals"
	"agenthub/backend"
)

// Window is the running desktop app.
type Window struct {
	core      *api.Core
	ctx       context.Context
	lock      *api.Lock
	events    *bridge
	attention *attention

	// Runtime functions are fields so tests can replace them: calling the
	// real ones without a Wails context exits the process.
	emit       func(ctx context.Context, name string, data ...any)
	pickFolder func(ctx context.Context, o runtime.OpenDialogOptions) (string, error)
	saveFile   func(ctx context.Context, o runtime.SaveDialogOptions) (string, error)
	quit       func(ctx context.Context)
	errorBox   func(ctx context.Context, o runtime.MessageDialogOptions) (string, error)
}

// Run opens the window over an unopened core. The data directory's file lock
// is taken first: a second window for the same data directory brings the
// first forward and exits instead of opening a second writer.
func Run(core *api.Core, assets fs.FS, icon []byte) error {
	jscsignals.Keep()
	home := core.Config().Home
	lock, err := api.TryLock(home, "window.lock")
	if err != nil {
		if ferr := focusFirstInstance(instanceID(home)); ferr != nil {
			slog.Warn("focus the running window", "err", ferr)
			return err
		}
		fmt.Fprintf(os.Stderr, "AgentHub is already running with the data directory %s: switched to its window.\n",
			api.DisplayPath(home))
		return nil
	}
	att := &attention{setTitle: runtime.WindowSetTitle, notify: runtime.SendNotification, pending: pendingCount(core)}
	w := &Window{core: core, lock: lock, attention: att,
		events: &bridge{emit: runtime.EventsEmit, seen: func(ctx context.Context, batch []backend.Event) {
			if touches(batch) {
				att.refresh(ctx)
			}
		}}, emit: runtime.EventsEmit, pickFolder: runtime.OpenDirectoryDialog, saveFile: runtime.SaveFileDialog,
		quit: runtime.Quit, errorBox: runtime.MessageDialog}
	core.PickDirectory = w.pickDirectory
	core.Notify = func(heading, body string) error { return w.attention.send(w.ctx, heading, body) }
	core.SetSink(w.events)
	err = wails.Run(&options.App{
		Title:            "AgentHub",
		Width:            1200,
		Height:           800,
		MinWidth:         800,
		MinHeight:        560,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: &options.RGBA{R: 246, G: 247, B: 249, A: 255},
		// Setting Linux options changes the GPU policy's zero value to
		// OnDemand; Never is Wails' own default and costs ~70 MB less.
		Linux:              &linux.Options{Icon: icon, ProgramName: "agenthub", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
		OnStartup:          w.startup,
		OnShutdown:         w.shutdown,
		Bind:               Bindings(core, w.pickExportFile),
		ErrorFormatter:     formatError,
		SingleInstanceLock: &options.SingleInstanceLock{UniqueId: instanceID(home), OnSecondInstanceLaunch: w.focus},
	})
	if err != nil {
		lock.Release()
		// Wails' own text is safe to show, e.g. a binary built without the
		// desktop tags says which tags are missing.
		return &backend.Error{Code: backend.FailInternal, Err: err,
			Message: "the desktop window could not start: " + err.Error(),
			Next:    "Use `agenthub serve` for browser mode, or rebuild with `make build`."}
	}
	return nil
}

// Bindings are the facades the frontend calls as window.go.api.<Facade>;
// saveAs opens the native save dialog for the audit export.
func Bindings(core *api.Core, saveAs func(defaultName string) (string, error)) []any {
	return []any{api.NewSystemAPI(core), api.NewWorkspacesAPI(core), api.NewSettingsAPI(core),
		api.NewRunsAPI(core), api.NewApprovalsAPI(core), api.NewAuditAPI(core), api.NewChangesAPI(core),
		api.NewPolicyAPI(core), api.NewAuditFileAPI(core, saveAs), api.NewWorktreesAPI(core),
		api.NewSearchAPI(core), api.NewRunFileAPI(core, saveAs), // history (issue 19): search.go, export.go
		api.NewArtifactsAPI(core), // issue 18: artifacts.go
		api.NewConflictsAPI(core)} // issue 15: conflicts.go
}

func (w *Window) startup(ctx context.Context) {
	w.ctx = ctx
	go w.events.run(ctx)
	err := w.core.Open(ctx)
	if err == nil {
		w.attention.refresh(ctx) // approvals left pending by an earlier session
	}
	if err != nil {
		body := api.ErrorOf(err)
		slog.Error("start-up failed", "code", body.Code, "err", err)
		_, _ = w.errorBox(ctx, runtime.MessageDialogOptions{Type: runtime.ErrorDialog,
			Title: "AgentHub cannot start", Message: body.Message + "\n\n" + body.Next})
		w.quit(ctx)
	}
}

func (w *Window) shutdown(context.Context) {
	if err := w.core.Close(); err != nil {
		slog.Error("close the store", "err", err)
	}
	w.lock.Release()
}

// OpenEvent tells the page that an open request is waiting
// (SystemAPI.TakeOpen).
const OpenEvent = "agenthub:open"

// focus brings the first window forward when a second instance starts, and
// shows the approval the second launch named, if any.
func (w *Window) focus(data options.SecondInstanceData) {
	if w.ctx == nil {
		return
	}
	runtime.WindowUnminimise(w.ctx)
	runtime.Show(w.ctx)
	if req, ok := api.OpenRequestFromArgs(data.Args); ok {
		w.core.RequestOpen(req)
		w.emit(w.ctx, OpenEvent)
	}
}

func (w *Window) pickDirectory() (string, error) {
	return w.pickFolder(w.ctx, runtime.OpenDialogOptions{Title: "Add a workspace", CanCreateDirectories: true})
}

// pickExportFile asks where to save the audit export; "" when cancelled.
func (w *Window) pickExportFile(defaultName string) (string, error) {
	return w.saveFile(w.ctx, runtime.SaveDialogOptions{Title: "Export the audit trail", DefaultFilename: defaultName,
		Filters: []runtime.FileFilter{{DisplayName: "JSON Lines (*.jsonl)", Pattern: "*.jsonl"}}})
}

// formatError turns every bound-method error into {code, message, next},
// as JSON text: the Wails runtime rejects the call with new Error(value),
// which turns an object into "[object Object]" (issue 21: an already-listed
// folder showed that as internal_error), and keeps a string as the
// error's message, which the page parses (lib/api/error.ts).
func formatError(err error) any {
	b, jerr := json.Marshal(api.ErrorOf(err))
	if jerr != nil {
		return string(backend.FailInternal) + ": an internal error occurred"
	}
	return string(b)
}

// pendingCount counts pending approvals across runs.
func pendingCount(core *api.Core) func() (int, error) {
	return func() (int, error) {
		list, err := api.NewApprovalsAPI(core).List()
		return len(list), err
	}
}
