package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadDirSkipsBrokenAndDuplicates(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.toml":     "name = \"a\"\nruntime = \"script\"\nplaybook = \"play.toml\"",
		"b.toml":     "name = \"a\"\nruntime = \"script\"\nplaybook = \"p\"",
		"c.toml":     "name = ",
		"notes.txt":  "ignored",
		"play.toml2": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list, problems := LoadDir(dir)
	if len(list) != 1 || list[0].Name != "a" || list[0].Playbook != filepath.Join(dir, "play.toml") {
		t.Fatalf("profiles: %+v", list)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "already exists") {
		t.Fatalf("problems: %v", problems)
	}
	if list, problems := LoadDir(filepath.Join(dir, "missing")); len(list) != 0 || len(problems) != 0 {
		t.Fatalf("a missing directory is no profiles and no problem: %v %v", list, problems)
	}
}
