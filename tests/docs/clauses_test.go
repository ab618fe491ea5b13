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

// walkSources calls fn with every source file's path (relative to the
// repository) and content.
func walkSources(t *testing.T, fn func(rel string, src []byte)) {
	t.Helper()
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
			fn(filepath.ToSlash(rel), b)
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatalf("walk %s: %v", d, err)
		}
	}
}

// citations maps each cited id to the first files that cite it.
func citations(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	walkSources(t, func(rel string, src []byte) {
		ids := cited.FindAllString(string(src), -1)
		for _, m := range citedCLI.FindAllStringSubmatch(string(src), -1) {
			ids = append(ids, m[1])
		}
		for _, id := range ids {
			if len(out[id]) < 3 && !slices.Contains(out[id], rel) {
				out[id] = append(out[id], rel)
			}
		}
	})
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

// sectionCite is "run-model.md §9.1" (or "run-model §9"); scenarioCite is a
// test naming an acceptance scenario of §17.
var (
	sectionCite  = regexp.MustCompile(`run-model(?:\.md)?,? §([0-9]+(?:\.[0-9]+)?)`)
	scenarioCite = regexp.MustCompile(`\bscenarios? ([0-9]{1,2})\b`)
	heading      = regexp.MustCompile(`(?m)^#{2,3} ([0-9]+(?:\.[0-9]+)?)[. ]`)
	scenarioItem = regexp.MustCompile(`(?m)^([0-9]{1,2})\. \S`)
)

// TestSectionCitationsExist: "run-model.md §13.1" in a comment must lead
// to a section of that number, and "scenario N" to an item of §17.
func TestSectionCitationsExist(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "RUN-MODEL.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		sections[m[1]] = true
	}
	_, scen, ok := strings.Cut(string(doc), "## 17. Acceptance scenarios")
	if !ok {
		t.Fatal("docs/RUN-MODEL.md has no §17 Acceptance scenarios")
	}
	scen, _, _ = strings.Cut(scen, "\n## ")
	scenarios := map[string]bool{}
	for _, m := range scenarioItem.FindAllStringSubmatch(scen, -1) {
		scenarios[m[1]] = true
	}
	var missing []string
	walkSources(t, func(rel string, src []byte) {
		for _, m := range sectionCite.FindAllStringSubmatch(string(src), -1) {
			if !sections[m[1]] {
				missing = append(missing, "§"+m[1]+" ("+rel+")")
			}
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return
		}
		for _, m := range scenarioCite.FindAllStringSubmatch(string(src), -1) {
			if !scenarios[m[1]] {
				missing = append(missing, "scenario "+m[1]+" ("+rel+")")
			}
		}
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("cited but not in docs/RUN-MODEL.md:\n  %s", strings.Join(slices.Compact(missing), "\n  "))
	}
}
