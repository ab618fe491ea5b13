package workspace

import (
	"path"
	"strings"
	"unicode"
)

// Class says whether a workspace-relative path is protected, and why.
type Class string

// Classes returned by [Classify].
const (
	ClassNone   Class = ""       // an ordinary file
	ClassGit    Class = "git"    // inside a .git directory (or the .git file of a worktree)
	ClassPolicy Class = "policy" // inside .agenthub/, the workspace policy directory
	ClassSecret Class = "secret" // a secret: .env files, private keys, key stores, credentials
)

// Classify reports the protection class of a workspace-relative path. It
// compares names after folding (see [foldName]) so ".GIT", ".gıt" (dotless i),
// ".g\u200cit" (ignored by HFS+), "GIT~1" (an NTFS 8.3 short name), ".git."
// and ".git::$INDEX_ALLOCATION" are all recognised as ".git". The policy layer
// uses it to deny secret access; [Apply] uses it to refuse protected writes.
func Classify(rel string) Class {
	parts := strings.Split(strings.ReplaceAll(rel, "\\", "/"), "/")
	secret := false
	for i, raw := range parts {
		f := foldName(raw)
		switch {
		case f == "":
			continue
		case f == ".git" || isShortName(f, ".git"):
			return ClassGit
		case f == ".agenthub" || isShortName(f, ".agenthub"):
			return ClassPolicy
		case secretDir[f]:
			secret = true
		case i == len(parts)-1 && isSecretFile(f, parts[:i]):
			secret = true
		}
	}
	if secret {
		return ClassSecret
	}
	return ClassNone
}

var secretDir = map[string]bool{".ssh": true, ".gnupg": true}

var secretFile = map[string]bool{
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"id_ecdsa_sk": true, "id_ed25519_sk": true, ".netrc": true, "_netrc": true,
	".git-credentials": true, ".pgpass": true, ".pypirc": true, "secring.gpg": true,
	"credentials.json": true, ".htpasswd": true,
}

var secretExt = map[string]bool{
	".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true,
	".keystore": true, ".kdbx": true, ".ppk": true,
}

// envTemplates are committed examples, not secrets.
var envTemplates = map[string]bool{
	".env.example": true, ".env.sample": true, ".env.template": true, ".env.dist": true,
}

func isSecretFile(f string, dirs []string) bool {
	switch {
	case secretFile[f], secretExt[path.Ext(f)]:
		return true
	case (f == ".env" || strings.HasPrefix(f, ".env.")) && !envTemplates[f]:
		return true
	case isShortName(f, ".env"):
		return true
	}
	if len(dirs) > 0 {
		parent := foldName(dirs[len(dirs)-1])
		switch {
		case parent == ".aws" && (f == "credentials" || f == "config"):
			return true
		case parent == ".docker" && f == "config.json":
			return true
		}
	}
	return false
}

// foldName maps a single path component to the form protected names are
// compared in. It is a deliberately small subset of Unicode normalisation,
// chosen for the protected names, which are all ASCII:
//   - default-ignorable code points (which HFS+ drops) are removed;
//   - the only canonical (NFC) singletons that land on ASCII letters, and the
//     case-folding specials that do (KELVIN SIGN, dotless i, dotted capital I,
//     long s), become their ASCII letters; fullwidth ASCII becomes ASCII;
//   - the result is lower-cased (simple case folding);
//   - an NTFS stream suffix (":...") and trailing dots and spaces, which
//     Windows ignores, are cut.
//
// Combining marks are kept: ".gi\u0301t" is a different name on every
// filesystem, so it is not a protected name.
func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case isIgnorable(r):
			continue
		case r == 0x212A: // KELVIN SIGN, NFC → 'K'
			r = 'k'
		case r == 0x212B: // ANGSTROM SIGN, NFC → 'Å'
			r = 'å'
		case r == 0x0131 || r == 0x0130: // dotless i, capital I with dot
			r = 'i'
		case r == 0x017F: // LONG S
			r = 's'
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
			r -= 0xFEE0
		}
		b.WriteRune(unicode.ToLower(r))
	}
	f := b.String()
	if i := strings.IndexByte(f, ':'); i >= 0 {
		f = f[:i]
	}
	return strings.TrimRight(f, ". ")
}

func isIgnorable(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x180E, r == 0xFEFF:
		return true
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2060 && r <= 0x206F, r >= 0xFE00 && r <= 0xFE0F:
		return true
	}
	return false
}

// isShortName reports whether f (folded) is an NTFS 8.3 short name that could
// alias the protected long name, e.g. "git~1" for ".git".
func isShortName(f, long string) bool {
	i := strings.IndexByte(f, '~')
	if i < 1 || i > 6 || i == len(f)-1 {
		return false
	}
	for _, c := range f[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	name := strings.TrimPrefix(long, ".")
	if f[:i] == name[:min(6, len(name))] {
		return true
	}
	// After a few collisions Windows switches to two letters and a 4-digit
	// hex hash ("AG1F2C~1").
	return i == 6 && f[:2] == name[:2] && isHex(f[2:6])
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
