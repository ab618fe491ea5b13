package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"agenthub/backend"
)

func TestAuditFileSave(t *testing.T) {
	core, add := policyCore(t)
	add(map[string]string{"a.txt": "a"})
	add(map[string]string{"b.txt": "b"})
	dir := t.TempDir()
	var suggested string
	target := filepath.Join(dir, "audit.jsonl")
	f := NewAuditFileAPI(core, func(name string) (string, error) { suggested = name; return target, nil })

	got, err := f.Save(AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Saved || got.File != "audit.jsonl" || got.Entries != 2 || !got.Verified || got.Head == "" {
		t.Fatalf("saved = %+v", got)
	}
	if filepath.Ext(suggested) != ".jsonl" || filepath.Dir(suggested) != "." {
		t.Fatalf("suggested name %q", suggested)
	}
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || lines[0]["kind"] != "workspace.added" || lines[2]["chainHead"] != got.Head || lines[2]["verified"] != true {
		t.Fatalf("export lines = %v", lines)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the export is readable by others: %v", fi.Mode())
	}
}

func TestAuditFileSaveCancelledOrRefused(t *testing.T) {
	core, _ := policyCore(t)

	cancelled, err := NewAuditFileAPI(core, func(string) (string, error) { return "", nil }).Save(AuditFilter{})
	if err != nil || cancelled.Saved || cancelled.File != "" {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}

	_, err = NewAuditFileAPI(core, func(string) (string, error) { return "", errors.New("no display") }).Save(AuditFilter{})
	if err == nil {
		t.Fatal("a dialog error is returned")
	}

	_, err = NewAuditFileAPI(core, nil).Save(AuditFilter{})
	if ErrorOf(err).Code != backend.CodeInvalidInput {
		t.Fatalf("without a dialog: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "audit.jsonl")
	_, err = NewAuditFileAPI(core, func(string) (string, error) { return missing, nil }).Save(AuditFilter{})
	body := ErrorOf(err)
	if body.Code != backend.CodeInvalidInput || bytes.Contains([]byte(body.Message), []byte(filepath.Dir(missing))) {
		t.Fatalf("unwritable folder: %+v", body)
	}
}

// TestAuditExportFollowsFilters: the export holds the entries the active
// filters match, and its summary line says it was filtered, by what, and of
// how many entries.
func TestAuditExportFollowsFilters(t *testing.T) {
	core, add := policyCore(t)
	add(map[string]string{"a.txt": "a"})
	add(map[string]string{"b.txt": "b"})
	wss, err := NewWorkspacesAPI(core).List()
	if err != nil || len(wss) != 2 {
		t.Fatalf("workspaces %v %v", wss, err)
	}
	for _, tc := range []struct {
		name string
		f    AuditFilter
		want int
	}{
		{"one workspace", AuditFilter{WorkspaceID: wss[0].ID}, 1},
		{"a kind", AuditFilter{Kind: "workspace.added"}, 2},
		{"from the future", AuditFilter{From: "2999-01-01T00:00:00.000Z"}, 0},
		{"until the past", AuditFilter{To: "2000-01-01T00:00:00.000Z"}, 0},
	} {
		data, _, n, err := AuditExportBytes(NewAuditAPI(core), tc.f)
		if err != nil || n != tc.want {
			t.Errorf("%s: %d entries (%v), want %d", tc.name, n, err, tc.want)
			continue
		}
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		var summary struct {
			Entries int         `json:"entries"`
			Total   int         `json:"total"`
			Filter  AuditFilter `json:"filter"`
		}
		if err := json.Unmarshal(lines[len(lines)-1], &summary); err != nil {
			t.Fatal(err)
		}
		if summary.Entries != tc.want || summary.Total != 2 || summary.Filter != tc.f {
			t.Errorf("%s: summary %+v", tc.name, summary)
		}
	}
	got, err := NewAuditFileAPI(core, func(string) (string, error) { return "", nil }).Save(AuditFilter{Kind: "x"})
	if err != nil || !got.Filtered || got.Total != 2 || got.Entries != 0 {
		t.Fatalf("saved %+v %v", got, err)
	}
}
