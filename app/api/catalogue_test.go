package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agenthub/backend/llm"
)

// TestBackendTextIsInBothCatalogues is issue 21's check that everything the
// backend sends for people as a message key (backend.Msg("key", "arg", v,
// …): approval titles, rule previews, risk reasons) is in the English and
// the Chinese catalogue, with exactly the arguments the call passes as the
// placeholders of both texts. It reads the source, so a new call fails here
// before any UI shows a raw key.
func TestBackendTextIsInBothCatalogues(t *testing.T) {
	root := filepath.Join("..", "..")
	catalogues := map[string]map[string]string{}
	for _, locale := range []string{"en", "zh-CN"} {
		data, err := os.ReadFile(filepath.Join(root, "frontend", "messages", locale+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var cat map[string]string
		if err := json.Unmarshal(data, &cat); err != nil {
			t.Fatalf("%s.json: %v", locale, err)
		}
		catalogues[locale] = cat
	}
	calls := 0
	for _, dir := range []string{"backend", "app"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isMsgCall(call.Fun) || len(call.Args) == 0 {
					return true
				}
				calls++
				where := fset.Position(call.Pos()).String()
				key, ok := stringLit(call.Args[0])
				if !ok {
					t.Errorf("%s: the message key must be a string literal", where)
					return true
				}
				var args []string
				for i := 1; i < len(call.Args); i += 2 {
					name, ok := stringLit(call.Args[i])
					if !ok {
						t.Errorf("%s: argument names of %s must be string literals", where, key)
						return true
					}
					args = append(args, name)
				}
				slices.Sort(args)
				for locale, cat := range catalogues {
					text, ok := cat[key]
					if !ok || text == "" {
						t.Errorf("%s: %s is not in %s.json", where, key, locale)
						continue
					}
					if got := placeholders(text); !slices.Equal(got, args) {
						t.Errorf("%s: %s in %s.json has placeholders %v, the call passes %v", where, key, locale, got, args)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls < 10 {
		t.Fatalf("found %d backend.Msg calls; the walk is broken", calls)
	}
}

// TestModelNextStepsAreLocalised: a model server's failure carries its own
// next step (llm.NextSteps), which the UI shows in the reader's language by
// finding the same English text as next_model_<detail> in the catalogue.
func TestModelNextStepsAreLocalised(t *testing.T) {
	cats := map[string]map[string]string{}
	for _, locale := range []string{"en", "zh-CN"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "frontend", "messages", locale+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var cat map[string]string
		if err := json.Unmarshal(data, &cat); err != nil {
			t.Fatal(err)
		}
		cats[locale] = cat
	}
	for detail, text := range llm.NextSteps {
		key := "next_model_" + detail
		if cats["en"][key] != text {
			t.Errorf("en.json %s = %q, want llm.NextSteps[%q] = %q", key, cats["en"][key], detail, text)
		}
		if cats["zh-CN"][key] == "" {
			t.Errorf("zh-CN.json lacks %s", key)
		}
	}
}

func isMsgCall(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		pkg, ok := f.X.(*ast.Ident)
		return ok && pkg.Name == "backend" && f.Sel.Name == "Msg"
	case *ast.Ident:
		return f.Name == "Msg"
	}
	return false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

func placeholders(text string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}
