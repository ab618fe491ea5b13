package api

import "agenthub/backend"

// Info describes the running app for the about box and the header.
type Info struct {
	Version string `json:"version"`
	Home    string `json:"home"` // with the home directory shown as ~
	Mode    string `json:"mode"` // window | browser | cli
}

// SystemAPI answers questions about the app itself.
type SystemAPI struct{ core *Core }

// NewSystemAPI returns the facade.
func NewSystemAPI(c *Core) *SystemAPI { return &SystemAPI{core: c} }

// Info returns the version, data directory and mode.
func (s *SystemAPI) Info() (Info, error) {
	return Info{Version: s.core.cfg.Version, Home: DisplayPath(s.core.cfg.Home), Mode: string(s.core.cfg.Surface)}, nil
}

// Notify shows a desktop notification, e.g. when a run needs approval while
// the window is not focused. Browser mode has none: the page uses the web
// Notification API there.
func (s *SystemAPI) Notify(heading, body string) error {
	if s.core.Notify == nil {
		return backend.Errorf(backend.CodeInvalidInput, "desktop notifications exist only in the desktop window")
	}
	if err := s.core.Notify(heading, body); err != nil {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Err: err,
			Message: "this desktop has no notification service", Next: "The window title shows the pending count instead."}
	}
	return nil
}
