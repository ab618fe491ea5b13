package api

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
