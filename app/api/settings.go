package api

import (
	"context"

	"agenthub/backend"
)

// Settings are the user's persisted preferences.
type Settings struct {
	Theme    string `json:"theme"`    // light | dark | system
	Language string `json:"language"` // en | zh-CN
}

var (
	themes    = map[string]bool{"light": true, "dark": true, "system": true}
	languages = map[string]bool{"en": true, "zh-CN": true}
)

// DefaultSettings apply until the user changes something.
var DefaultSettings = Settings{Theme: "system", Language: "en"}

// SettingsAPI reads and writes preferences.
type SettingsAPI struct{ core *Core }

// NewSettingsAPI returns the facade.
func NewSettingsAPI(c *Core) *SettingsAPI { return &SettingsAPI{core: c} }

// Get returns the saved settings, with defaults for anything unset.
func (s *SettingsAPI) Get() (Settings, error) {
	ctx := context.Background()
	out := DefaultSettings
	db, err := s.core.db()
	if err != nil {
		return out, err
	}
	if v, ok, err := db.Setting(ctx, "theme"); err != nil {
		return out, err
	} else if ok && themes[v] {
		out.Theme = v
	}
	if v, ok, err := db.Setting(ctx, "language"); err != nil {
		return out, err
	} else if ok && languages[v] {
		out.Language = v
	}
	return out, nil
}

// Set validates and saves the settings.
func (s *SettingsAPI) Set(in Settings) (Settings, error) {
	if !themes[in.Theme] {
		return Settings{}, backend.Errorf(backend.CodeInvalidInput, "unknown theme %q: use light, dark or system", in.Theme)
	}
	if !languages[in.Language] {
		return Settings{}, backend.Errorf(backend.CodeInvalidInput, "unknown language %q: use en or zh-CN", in.Language)
	}
	ctx := context.Background()
	db, err := s.core.db()
	if err != nil {
		return Settings{}, err
	}
	if err := db.SetSetting(ctx, "theme", in.Theme); err != nil {
		return Settings{}, err
	}
	if err := db.SetSetting(ctx, "language", in.Language); err != nil {
		return Settings{}, err
	}
	s.core.changed("settings")
	return in, nil
}
