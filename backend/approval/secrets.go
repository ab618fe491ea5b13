package approval

import (
	"path"
	"slices"
	"strings"
)

// Secret paths are denied for every kind of access, inside the workspace too
// (run-model.md §9.1). Matching is case-insensitive so that case-folding file
// systems cannot be used to slip past it.
var (
	secretBaseExact = map[string]bool{
		".git-credentials": true, ".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true,
		".pgpass": true, ".htpasswd": true, ".vault-token": true, ".dockercfg": true,
		"credentials.db": true, "access_tokens.db": true, "keychain-db": true, "credentials.json": true,
	}
	secretBasePrefix = []string{".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"}
	secretExt        = []string{
		".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".keychain", ".keychain-db",
		".gpg",
	}
	secretDirs = []string{".ssh", ".gnupg", ".password-store"}
	// secretSuffix are path endings that hold credentials of well-known tools.
	secretSuffix = []string{
		".aws/credentials", ".aws/config", ".kube/config", ".docker/config.json", ".config/gh/hosts.yml",
		".config/gcloud/credentials.db", ".config/gcloud/application_default_credentials.json",
		".azure/accesstokens.json", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
		".terraform.d/credentials.tfrc.json",
	}
)

// SecretPath reports whether p (any spelling: relative, ~/…, absolute, with
// backslashes) names a secret file, and the pattern that matched.
func SecretPath(p string) (bool, string) {
	p = strings.ToLower(strings.ReplaceAll(strings.Trim(p, `"'`), `\`, "/"))
	if p == "" {
		return false, ""
	}
	// --flag=value and user@host:path carry the path after the separator.
	if i := strings.LastIndexAny(p, "=:"); i >= 0 && i < len(p)-1 {
		if ok, pat := SecretPath(p[i+1:]); ok {
			return true, pat
		}
	}
	clean := path.Clean("/" + strings.TrimPrefix(p, "~"))
	base := path.Base(clean)
	if secretBaseExact[base] {
		return true, base
	}
	for _, pre := range secretBasePrefix {
		if strings.HasPrefix(base, pre) {
			return true, pre + "*"
		}
	}
	for _, ext := range secretExt {
		if strings.HasSuffix(base, ext) && base != ext {
			return true, "*" + ext
		}
	}
	for _, dir := range secretDirs {
		if strings.Contains(clean+"/", "/"+dir+"/") {
			return true, dir + "/"
		}
	}
	for _, suf := range secretSuffix {
		if strings.HasSuffix(clean, "/"+suf) {
			return true, suf
		}
	}
	return false, ""
}

// SecretIgnorePatterns are the secret paths of [SecretPath] as .gitignore
// patterns, for an agent CLI whose own file tools (read, grep, glob) take an
// ignore file: a name without a slash matches at any depth, a directory
// pattern everything under it. Matching case-insensitively is the ignore
// file's reader's job (Gemini CLI's is).
func SecretIgnorePatterns() []string {
	var pats []string
	for base := range secretBaseExact {
		pats = append(pats, base)
	}
	for _, pre := range secretBasePrefix {
		pats = append(pats, pre+"*")
	}
	for _, ext := range secretExt {
		pats = append(pats, "*"+ext)
	}
	for _, dir := range secretDirs {
		pats = append(pats, dir+"/")
	}
	for _, suf := range secretSuffix {
		pats = append(pats, "**/"+suf)
	}
	slices.Sort(pats)
	return pats
}

// credentialCommand reports whether argv reads a credential store: git's
// credential helpers, the macOS keychain, libsecret, pass, gpg secret keys.
func credentialCommand(argv []string) (bool, string) {
	if len(argv) == 0 {
		return false, ""
	}
	name := path.Base(argv[0])
	switch {
	case strings.HasPrefix(name, "git-credential"):
		return true, name
	case name == "git" && gitSubcommand(argv) == "credential":
		return true, "git credential"
	case name == "security" && len(argv) > 1 && (strings.HasPrefix(argv[1], "find-") || strings.HasPrefix(argv[1], "dump-")):
		return true, "security " + argv[1]
	case name == "secret-tool" || name == "pass" || name == "keyring" || name == "gopass":
		return true, name
	case name == "gpg" || name == "gpg2":
		for _, w := range argv[1:] {
			if strings.HasPrefix(w, "--export-secret") {
				return true, "gpg --export-secret-keys"
			}
		}
	}
	return false, ""
}

// agentHubPath reports whether a clean workspace-relative path is inside the
// policy directory, which the agent may never write (run-model.md §9.1).
func agentHubPath(clean string) bool {
	l := strings.ToLower(clean)
	return l == ".agenthub" || strings.HasPrefix(l, ".agenthub/")
}

// cleanRel validates a workspace-relative path and returns it cleaned with
// "/" separators. Absolute, home-relative, Windows-style, UNC and escaping
// paths, NUL bytes and overlong names are refused.
func cleanRel(p string) (string, bool) {
	if p == "" || len(p) > 4096 || strings.ContainsAny(p, "\x00\\") {
		return "", false
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || (len(p) >= 2 && p[1] == ':') {
		return "", false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	for _, seg := range strings.Split(c, "/") {
		if len(seg) > 255 {
			return "", false
		}
	}
	return c, true
}
