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

	got, err := f.Save()
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

	cancelled, err := NewAuditFileAPI(core, func(string) (string, error) { return "", nil }).Save()
	if err != nil || cancelled.Saved || cancelled.File != "" {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}

	_, err = NewAuditFileAPI(core, func(string) (string, error) { return "", errors.New("no display") }).Save()
	if err == nil {
		t.Fatal("a dialog error is returned")
	}

	_, err = NewAuditFileAPI(core, nil).Save()
	if ErrorOf(err).Code != backend.CodeInvalidInput {
		t.Fatalf("without a dialog: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "audit.jsonl")
	_, err = NewAuditFileAPI(core, func(string) (string, error) { return missing, nil }).Save()
	body := ErrorOf(err)
	if body.Code != backend.CodeInvalidInput || bytes.Contains([]byte(body.Message), []byte(filepath.Dir(missing))) {
		t.Fatalf("unwritable folder: %+v", body)
	}
}
