package tools

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type lazyArgs struct {
	Path string `json:"path"`
}

// TestLazySchemaBuildsOnFirstUseOnly: a tool schema costs nothing until a
// model request or a call needs it, then is built exactly once, even when
// the first uses race (run with -race).
func TestLazySchemaBuildsOnFirstUseOnly(t *testing.T) {
	var builds atomic.Int32
	sc := lazySchema[lazyArgs](func(s *jsonschema.Schema) {
		builds.Add(1)
		s.Required = []string{"path"}
	})
	if n := builds.Load(); n != 0 {
		t.Fatalf("built %d times before any use", n)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				if raw := sc.Raw(); !json.Valid(raw) || !strings.Contains(string(raw), `"required":["path"]`) {
					t.Errorf("Raw = %s", raw)
				}
				return
			}
			// decode alone (a call before any Spec) must build it too.
			if _, err := decode[lazyArgs]("lazy", sc, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "path") {
				t.Errorf("decode({}) = %v, want the missing path reported", err)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("built %d times, want 1", n)
	}
	if v, err := decode[lazyArgs]("lazy", sc, json.RawMessage(`{"path":"a.go"}`)); err != nil || v.Path != "a.go" {
		t.Errorf("decode = %+v, %v", v, err)
	}
}
