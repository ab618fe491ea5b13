package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository, seen from tests/docs.
const root = "../.."

// cited matches a clause id as code cites it: a family prefix of
// docs/RUN-MODEL.md and a number (LC1, AP10, EV13). The agent-CLI findings
// (Bn) are single letters that collide with ordinary text, so they count only
// where the comment names their source: "agent-clis.md B6".
var (
	cited    = regexp.MustCompile(`\b(?:AD|AP|AU|CC|CK|CX|EV|EX|FC|GT|LC|PH|SA|SC|SR|TC|UI)[0-9]{1,2}\b`)
	citedCLI = regexp.MustCompile(`agent-clis\.md,? (?:blocker )?(B[0-9]{1,2})\b`)
	// defined is how the document defines an id: "- **LC1** text".
	defined = regexp.MustCompile(`(?m)^- \*\*([A-Z]{1,3}[0-9]{1,2})\*\* (.+)$`)
)

// sourceDirs are where code lives; node_modules, build output and caches
// are not walked.
var sourceDirs = []string{"app", "backend", "workspace", "diffview", "bench", "tests", "frontend/src", "frontend/e2e", "main.go"}

var skipDirs = map[string]bool{"node_modules": true, "dist": true, ".cache": true, "paraglide": true, "testdata": true}

// citations maps each cited id to the first files that cite it.
func citations(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, d := range sourceDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if skipDirs[e.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			switch filepath.Ext(p) {
			case ".go", ".ts", ".svelte", ".js", ".mjs":
			default:
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			ids := cited.FindAllString(string(b), -1)
			for _, m := range citedCLI.FindAllStringSubmatch(string(b), -1) {
				ids = append(ids, m[1])
			}
			for _, id := range ids {
				if len(out[id]) < 3 && !slices.Contains(out[id], rel) {
					out[id] = append(out[id], rel)
				}
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatalf("walk %s: %v", d, err)
		}
	}
	return out
}

// definitions reads the ids docs/RUN-MODEL.md defines, with their text.
func definitions(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "RUN-MODEL.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range defined.FindAllStringSubmatch(string(b), -1) {
		if _, dup := out[m[1]]; dup {
			t.Errorf("docs/RUN-MODEL.md defines %s twice", m[1])
		}
		out[m[1]] = m[2]
	}
	return out
}

// TestClauseIDsAreDefined: the code cites clause ids to say which promise it
// keeps; each must be defined in docs/RUN-MODEL.md, or a reader has nowhere
// to look it up.
func TestClauseIDsAreDefined(t *testing.T) {
	cites, defs := citations(t), definitions(t)
	if len(cites) < 50 {
		t.Fatalf("found only %d cited ids: is the walk reading the sources?", len(cites))
	}
	var missing []string
	for id, files := range cites {
		if _, ok := defs[id]; !ok {
			missing = append(missing, id+" (cited in "+strings.Join(files, ", ")+")")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Fatalf("%d clause ids cited by the code are not defined in docs/RUN-MODEL.md:\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
}

// TestClauseDefinitionsSaySomething: a definition is a sentence about what
// the code must do, not a stub that only makes the id exist.
func TestClauseDefinitionsSaySomething(t *testing.T) {
	for id, text := range definitions(t) {
		if len(text) < 30 || strings.Contains(strings.ToLower(text), "todo") || strings.Contains(strings.ToLower(text), "tbd") {
			t.Errorf("%s is not a real definition: %q", id, text)
		}
	}
}

// TestScannerFindsCitations keeps the scanner honest: it must see the ids in
// the shapes the code writes them and ignore look-alikes.
func TestScannerFindsCitations(t *testing.T) {
	src := "// see LC1 and (AP10); EV13: x\n// quietEnv (agent-clis.md B6)\nconst x = \"SHA256 A1 B6 M10 RE2\"\n"
	got := cited.FindAllString(src, -1)
	for _, m := range citedCLI.FindAllStringSubmatch(src, -1) {
		got = append(got, m[1])
	}
	if want := []string{"LC1", "AP10", "EV13", "B6"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
