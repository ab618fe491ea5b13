package api

import (
	"context"

	"agenthub/backend"
	"agenthub/backend/approval"
)

// Settings are the user's persisted preferences.
type Settings struct {
	Theme    string `json:"theme"`    // light | dark | system
	Language string `json:"language"` // en | zh-CN
	// RuleLocation is where "always allow in this workspace" writes its
	// rule: data (the data directory, the default: nothing appears in the
	// repository) or repository (.agenthub/policy.toml). Empty in Set keeps
	// the current value.
	RuleLocation string `json:"ruleLocation"`
}

var (
	themes    = map[string]bool{"light": true, "dark": true, "system": true}
	languages = map[string]bool{"en": true, "zh-CN": true}
)

// DefaultSettings apply until the user changes something.
var DefaultSettings = Settings{Theme: "system", Language: "en", RuleLocation: backend.RuleSiteData}

var ruleSites = map[string]bool{backend.RuleSiteData: true, backend.RuleSiteRepository: true}

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
	if v, ok, err := db.Setting(ctx, approval.RuleSiteSetting); err != nil {
		return out, err
	} else if ok && ruleSites[v] {
		out.RuleLocation = v
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
	if in.RuleLocation != "" && !ruleSites[in.RuleLocation] {
		return Settings{}, backend.Errorf(backend.CodeInvalidInput, "unknown rule location %q: use data or repository", in.RuleLocation)
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
	if in.RuleLocation != "" {
		if err := db.SetSetting(ctx, approval.RuleSiteSetting, in.RuleLocation); err != nil {
			return Settings{}, err
		}
	}
	s.core.changed("settings")
	return s.Get()
}
