package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// Absent is the preimage hash of a file that does not exist yet.
const Absent = "absent"

// Preimage binds a path to the content it had when the reviewer saw it.
type Preimage struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"` // hex, or Absent
}

// HashPreimages hashes the current content of paths in a workspace file
// system (os.Root.FS), so the engine can recompute a subject from the live
// workspace right before applying (AP10).
func HashPreimages(fsys fs.FS, paths []string) ([]Preimage, error) {
	out := make([]Preimage, 0, len(paths))
	for _, p := range paths {
		clean, ok := cleanRel(p)
		if !ok {
			return nil, fmt.Errorf("hash preimage %q: not a workspace-relative path", p)
		}
		data, err := fs.ReadFile(fsys, clean)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, Preimage{Path: clean, SHA256: Absent})
		case err != nil:
			return nil, fmt.Errorf("hash preimage %s: %w", clean, err)
		default:
			sum := sha256.Sum256(data)
			out = append(out, Preimage{Path: clean, SHA256: hex.EncodeToString(sum[:])})
		}
	}
	return out, nil
}

// Subject returns the canonical subject of an action (AP9) and its hash,
// "sha256:" + hex. The subject holds exactly what the reviewer is shown;
// maps and sorted slices make it independent of key and path order. The hash
// is "" only if encoding fails, which never equals a ticket's hash, so a
// comparison fails closed.
func Subject(a Action) (any, string) {
	var subject any
	switch a.Kind {
	case backend.ActionWrite, backend.ActionPatch:
		subject = patchSubject(a)
	case backend.ActionShell:
		subject = map[string]any{"kind": "shell", "argv": subjectArgv(a), "cwd": cleanCwd(a.Cwd), "env": subjectEnv(a)}
	case backend.ActionNetwork:
		subject = map[string]any{"kind": "network", "method": httpMethod(a.Method), "url": NormalizeURL(a.URL)}
	default:
		s := map[string]any{"kind": string(a.Kind), "remote": a.Remote, "ref": a.Ref, "target": a.Target}
		if a.Command != "" || len(a.Argv) > 0 {
			s["argv"], s["cwd"], s["env"] = subjectArgv(a), cleanCwd(a.Cwd), subjectEnv(a)
		}
		if len(a.paths()) > 0 {
			s["paths"] = sortedPaths(a.paths())
		}
		subject = s
	}
	hash, err := canon.SHA256(subject)
	if err != nil {
		return subject, ""
	}
	return subject, hash
}

func patchSubject(a Action) map[string]any {
	sum := sha256.Sum256(a.Patch)
	pre := make([]Preimage, 0, len(a.Preimages))
	seen := map[string]bool{}
	for _, p := range a.Preimages {
		p.Path = path.Clean(strings.ReplaceAll(p.Path, `\`, "/"))
		if !seen[p.Path] {
			seen[p.Path] = true
			pre = append(pre, p)
		}
	}
	sort.Slice(pre, func(i, j int) bool { return pre[i].Path < pre[j].Path })
	return map[string]any{
		"kind":        string(a.Kind),
		"workspace":   a.Workspace,
		"patchSha256": hex.EncodeToString(sum[:]),
		"preimages":   pre,
	}
}

func sortedPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	}
	sort.Strings(out)
	return out
}

// subjectArgv is the argv that executes: Argv, or `sh -c Command`, the form
// in which the process layer runs a command line.
func subjectArgv(a Action) []string {
	if len(a.Argv) > 0 {
		return a.Argv
	}
	return []string{"sh", "-c", a.Command}
}

func subjectEnv(a Action) map[string]string {
	if a.Env == nil {
		return map[string]string{}
	}
	return a.Env
}

// httpMethod is the upper-cased method; a request without one is a GET.
func httpMethod(m string) string {
	if m == "" {
		return "GET"
	}
	return strings.ToUpper(m)
}

// NormalizeURL lower-cases scheme and host, removes the default port and the
// fragment (never sent). An unparsable URL is returned unchanged, so it still
// binds exactly what was shown.
func NormalizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (port == "80" && (u.Scheme == "http" || u.Scheme == "ws")) || (port == "443" && (u.Scheme == "https" || u.Scheme == "wss")) {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// RiskOf is the risk level shown with an approval of a.
func RiskOf(a Action, r backend.PolicyResult) backend.Risk {
	switch r.Kind {
	case backend.ActionRead:
		return backend.RiskLow
	case backend.ActionPush, backend.ActionPublish, backend.ActionDeploy, backend.ActionSecret:
		return backend.RiskHigh
	case backend.ActionShell:
		if ReadOnly(a) { // readonly.go: only reads and prints
			return backend.RiskLow
		}
		parsed := ParseShell(a.commandLine())
		if parsed.Unsupported != "" {
			return backend.RiskHigh
		}
		for _, p := range parsed.Parts {
			// What the policy cannot see through (eval "$v", python3 -c,
			// $x as the command) could be anything: high, like a parse
			// failure.
			if p.Elevated || p.Opaque != "" || (len(p.Argv) > 0 && destructive[path.Base(p.Argv[0])]) {
				return backend.RiskHigh
			}
		}
	}
	return backend.RiskMedium
}

// destructive commands raise a shell request to high risk.
var destructive = map[string]bool{
	"rm": true, "rmdir": true, "dd": true, "mkfs": true, "shred": true, "chmod": true, "chown": true,
	"curl": true, "wget": true, "kill": true, "pkill": true, "killall": true, "truncate": true, "mv": true,
}
