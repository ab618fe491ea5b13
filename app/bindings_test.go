package app

import (
	"os"
	"reflect"
	"regexp"
	"testing"

	"agenthub/app/api"
)

// TestFrontendCallsBoundMethods reads the desktop transport
// (frontend/src/lib/api/wails.ts) and checks that every
// window.go.api.<Facade>.<Method> it calls is bound. The repository does not
// keep generated wailsjs bindings (the transport looks methods up at call
// time), so this is the drift check between the two sides.
func TestFrontendCallsBoundMethods(t *testing.T) {
	src, err := os.ReadFile("../frontend/src/lib/api/wails.ts")
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]map[string]bool{}
	for _, f := range Bindings(api.New(api.Config{}), nil) {
		typ := reflect.TypeOf(f)
		methods := map[string]bool{}
		for i := range typ.NumMethod() {
			methods[typ.Method(i).Name] = true
		}
		bound[typ.Elem().Name()] = methods
	}
	calls := regexp.MustCompile(`call(?:<[^>]*>)?\('(\w+)',\s*'(\w+)'`).FindAllStringSubmatch(string(src), -1)
	if len(calls) < 10 {
		t.Fatalf("found only %d calls in wails.ts: has the call helper been renamed?", len(calls))
	}
	for _, c := range calls {
		if !bound[c[1]][c[2]] {
			t.Errorf("wails.ts calls %s.%s, which no bound facade has", c[1], c[2])
		}
	}
}
