package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"agenthub/backend"
)

// RuleSiteSetting is the settings key that holds where "always allow in
// this workspace" writes its rule: [backend.RuleSiteData] (the default) or
// [backend.RuleSiteRepository].
const RuleSiteSetting = "rule_location"

// DataPolicyDir is the folder of the data directory that holds the
// workspaces' rules, one <workspace-id>.toml each.
const DataPolicyDir = "policy"

// Rules says where workspace rules live besides the repository's
// [PolicyPath], which is always read: the data directory's policy folder
// (so that "always allow" leaves nothing in the repository's git status,
// issue 21) and which of the two a new rule goes to.
type Rules struct {
	// Dir is the absolute path of <data>/policy. Empty: rules live in the
	// repository only (the behaviour before issue 21).
	Dir string
	// Site returns the user's setting; nil, an error or an unknown value
	// mean the data directory.
	Site func() (string, error)
}

// workspaceIDShape is what a workspace id must look like before it names a
// file: it comes from the caller and must never climb out of the folder.
var workspaceIDShape = regexp.MustCompile(`^[a-z]{2,4}_[0-9A-Za-z]{1,64}$`)

// Location is where a new rule of the workspace would be written now.
func (r *Rules) Location(workspaceID string) backend.RuleLocation {
	if r == nil || r.Dir == "" {
		return backend.RuleLocation{Site: backend.RuleSiteRepository, Path: PolicyPath}
	}
	site := backend.RuleSiteData
	if r.Site != nil {
		if s, err := r.Site(); err == nil && s == backend.RuleSiteRepository {
			site = s
		}
	}
	if site == backend.RuleSiteRepository {
		return backend.RuleLocation{Site: site, Path: PolicyPath}
	}
	return backend.RuleLocation{Site: backend.RuleSiteData, Path: DataPolicyDir + "/" + workspaceID + ".toml"}
}

// DataFile is the data-directory-relative name of a workspace's rules file,
// or an error for an id that is not one.
func DataFile(workspaceID string) (string, error) {
	if !workspaceIDShape.MatchString(workspaceID) {
		return "", backend.Errorf(backend.CodeInvalidInput, "%q is not a workspace id", workspaceID)
	}
	return DataPolicyDir + "/" + workspaceID + ".toml", nil
}

// dataLocks serialises changes per rules file in this process.
var dataLocks sync.Map // file key → *sync.Mutex

func lockFile(key string) func() {
	mu, _ := dataLocks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// Append writes the rule equivalent to g at loc: the repository's policy
// file ([AppendRule]) or the workspace's file in the data directory. The
// same checks apply to both (issue 14: the rule block is produced only by
// the TOML encoder and the new text must parse as the old plus the rule).
func (r *Rules) Append(loc backend.RuleLocation, root, workspaceID string, g Grant) (RuleChange, error) {
	if loc.Site != backend.RuleSiteData {
		return AppendRule(root, g)
	}
	if err := validGrant(g); err != nil {
		return RuleChange{}, err
	}
	dir, name, unlock, err := r.openData(workspaceID, true)
	if err != nil {
		return RuleChange{}, err
	}
	defer unlock()
	defer dir.Close()
	return appendIn(dir, name, loc.Path, g)
}

// Remove deletes the rule named ruleID (as traces name it) from the file
// at site, keeping every other byte but the rule's table and the comment
// AgentHub wrote above it; the new text must parse as the old policy
// without exactly that rule, or nothing is written.
func (r *Rules) Remove(site, root, workspaceID, ruleID string) (RuleChange, error) {
	var dir *os.Root
	var name, shown string
	if site == backend.RuleSiteData {
		d, n, unlock, err := r.openData(workspaceID, false)
		if err != nil {
			return RuleChange{}, err
		}
		defer unlock()
		dir, name, shown = d, n, DataPolicyDir+"/"+n
	} else {
		defer lockFile("repo:" + root)()
		ws, err := os.OpenRoot(root)
		if err != nil {
			return RuleChange{}, fmt.Errorf("open the workspace: %w", pathless(err))
		}
		defer ws.Close()
		d, err := ws.OpenRoot(policyDir)
		if err != nil {
			return RuleChange{}, fmt.Errorf("open %s: %w", policyDir, pathless(err))
		}
		dir, name, shown = d, path.Base(PolicyPath), PolicyPath
	}
	defer dir.Close()
	before, err := readRulesFile(dir, name, shown)
	if err != nil {
		return RuleChange{}, err
	}
	after, err := RemoveRule(before, ruleID)
	if err != nil {
		return RuleChange{}, err
	}
	mode := os.FileMode(0o644) // the repository's file stays as readable as it was made
	if site == backend.RuleSiteData {
		mode = 0o600
	}
	if err := replaceFileMode(dir, name, after, mode); err != nil {
		return RuleChange{}, fmt.Errorf("write %s: %w", shown, err)
	}
	return RuleChange{Before: before, After: after, RuleID: ruleID}, nil
}

// ReadData returns the text of the workspace's rules file in the data
// directory, nil when there is none.
func (r *Rules) ReadData(workspaceID string) ([]byte, error) {
	if r == nil || r.Dir == "" {
		return nil, nil
	}
	dir, name, unlock, err := r.openData(workspaceID, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer dir.Close()
	return readRulesFile(dir, name, DataPolicyDir+"/"+name)
}

// openData opens <data>/policy (creating it when create is set) and
// returns it with the workspace's file name, locked.
func (r *Rules) openData(workspaceID string, create bool) (*os.Root, string, func(), error) {
	if r == nil || r.Dir == "" {
		return nil, "", nil, errors.New("no data directory for rules is configured")
	}
	rel, err := DataFile(workspaceID)
	if err != nil {
		return nil, "", nil, err
	}
	if create {
		if err := os.MkdirAll(r.Dir, 0o700); err != nil {
			return nil, "", nil, fmt.Errorf("create the data directory's %s folder: %w", DataPolicyDir, pathless(err))
		}
	}
	dir, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, "", nil, fmt.Errorf("open the data directory's %s folder: %w", DataPolicyDir, pathless(err))
	}
	unlock := lockFile("data:" + r.Dir + "/" + rel)
	return dir, path.Base(rel), unlock, nil
}

// readRulesFile returns a rules file's text, nil when there is none; a
// symbolic link, a non-regular or an oversized file is refused.
func readRulesFile(dir *os.Root, name, shown string) ([]byte, error) {
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("stat %s: %w", shown, pathless(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link, which is never followed", shown)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", shown)
	case fi.Size() > maxPolicyBytes:
		return nil, fmt.Errorf("%s: larger than %d bytes (1 MiB), the most the gate reads", shown, maxPolicyBytes)
	}
	data, err := dir.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", shown, pathless(err))
	}
	return data, nil
}

// appendIn appends the rule for g to the file name in dir.
func appendIn(dir *os.Root, name, shown string, g Grant) (RuleChange, error) {
	before, err := readRulesFile(dir, name, shown)
	if err != nil {
		return RuleChange{}, err
	}
	after, id, err := addRule(before, g)
	if err != nil {
		return RuleChange{}, err
	}
	if err := replaceFileMode(dir, name, after, 0o600); err != nil {
		return RuleChange{}, fmt.Errorf("write %s: %w", shown, err)
	}
	return RuleChange{Before: before, After: after, Rule: strings.TrimPrefix(string(after), string(before)), RuleID: id}, nil
}

// each calls fn for every rule of p in trace order with its class, index
// within the class and the name traces use.
func each(p *Policy, fn func(class string, i int, name string)) {
	for i, r := range p.Write {
		fn("write", i, ruleName("write", i, r.ID))
	}
	for i, r := range p.Shell {
		fn("shell", i, ruleName("shell", i, r.ID))
	}
	for i, r := range p.Network {
		fn("network", i, ruleName("network", i, r.ID))
	}
	for i, r := range p.Git {
		fn("git", i, ruleName("git", i, r.ID))
	}
	for i, r := range p.MCP {
		fn("mcp", i, ruleName("mcp", i, r.ID))
	}
}

// tableHeader is a line that starts a TOML table ([x] or [[x]]).
var tableHeader = regexp.MustCompile(`^\s*\[`)

// ruleHeader is the header of one rule of a class.
var ruleHeader = regexp.MustCompile(`^\s*\[\[\s*(write|shell|network|git|mcp)\s*\]\]\s*(#.*)?$`)

// alwaysComment is the comment AddRule writes above each rule.
const alwaysComment = "# added by always allow in this workspace"

// RemoveRule returns policy text without the rule named ruleID (its id, or
// class[n] as traces name it). Only the rule's table lines go, with the
// comment AddRule wrote above it; everything else stays byte for byte. The
// result must parse as the old policy minus exactly that rule, or nothing
// is returned: a rule written in a form this cannot cut out (an inline
// array) is refused with the advice to edit the file.
func RemoveRule(policyText []byte, ruleID string) ([]byte, error) {
	old, err := ParsePolicy(policyText)
	if err != nil {
		return nil, fmt.Errorf("revoke rule: current policy: %w", err)
	}
	class, index := "", -1
	each(old, func(c string, i int, name string) {
		if name == ruleID && index < 0 {
			class, index = c, i
		}
	})
	if index < 0 {
		return nil, &backend.NotFound{Kind: "rule", ID: ruleID}
	}
	lines := strings.SplitAfter(string(policyText), "\n")
	start, seen := -1, -1
	for i, l := range lines {
		if m := ruleHeader.FindStringSubmatch(strings.TrimRight(l, "\r\n")); m != nil && m[1] == class {
			seen++
			if seen == index {
				start = i
				break
			}
		}
	}
	if start < 0 {
		return nil, backend.Errorf(backend.CodeConflict,
			"rule %s is not written as its own [[%s]] table; edit the policy file to remove it", ruleID, class)
	}
	end := start + 1
	for end < len(lines) && !tableHeader.MatchString(lines[end]) {
		end++
	}
	// Trailing comments and blank lines belong to what follows.
	for end > start+1 && isBlankOrComment(lines[end-1]) {
		end--
	}
	from := start
	if from > 0 && strings.TrimSpace(lines[from-1]) == alwaysComment {
		from--
		if from > 0 && strings.TrimSpace(lines[from-1]) == "" {
			from--
		}
	}
	out := strings.Join(lines[:from], "") + strings.Join(lines[end:], "")
	if err := sameAsMinusRule(old, class, index, []byte(out)); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

func isBlankOrComment(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#")
}

// sameAsMinusRule parses text and checks it is old without the rule at
// index of class, nothing more, nothing less.
func sameAsMinusRule(old *Policy, class string, index int, text []byte) error {
	got, err := ParsePolicy(text)
	if err != nil {
		return fmt.Errorf("revoke rule: the new policy does not parse, nothing was written: %w", err)
	}
	want := normalized(old)
	want.Env = old.Env
	switch class {
	case "write":
		want.Write = slices.Delete(slices.Clone(want.Write), index, index+1)
	case "shell":
		want.Shell = slices.Delete(slices.Clone(want.Shell), index, index+1)
	case "network":
		want.Network = slices.Delete(slices.Clone(want.Network), index, index+1)
	case "git":
		want.Git = slices.Delete(slices.Clone(want.Git), index, index+1)
	case "mcp":
		want.MCP = slices.Delete(slices.Clone(want.MCP), index, index+1)
	}
	have := normalized(got)
	have.Env = got.Env
	if !reflect.DeepEqual(normalized(&want), normalized(&have)) || !slices.Equal(want.Env, have.Env) {
		return errors.New("revoke rule: the policy file would lose more than the rule, nothing was written; edit it by hand")
	}
	return nil
}
