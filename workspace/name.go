package workspace

import (
	"strings"
	"unicode/utf8"
)

// Limits on names handed in by agents. They sit below every common filesystem
// limit (255 bytes per component, PATH_MAX 4096) so an overlong name is refused
// here, with a clear reason, instead of half-way through an operation.
const (
	maxComponentBytes = 255
	maxPathBytes      = 1024
	maxComponents     = 64
)

// clean validates a workspace-relative path and returns it in canonical form
// ('/' separators, no "." components, "." for the root). Anything that could
// name a location outside the root, or be read differently by another OS or
// tool, is refused with ErrOutsideRoot. windows adds the Windows-only name rules
// (reserved device names, alternate data streams, trailing dots and spaces) so
// they can be tested on every platform.
func clean(op, p string, windows bool) (string, error) {
	shown := p
	if len(shown) > 200 {
		shown = shown[:200] + "..."
	}
	if reason := pathReason(p); reason != "" {
		if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || reason == "drive-letter path" {
			// Never echo an absolute machine path back into events.
			shown = "(absolute path)"
			reason += "; use a workspace-relative path"
		}
		return "", outside(op, shown, reason)
	}
	parts := strings.Split(p, "/")
	out := parts[:0]
	for i, c := range parts {
		if c == "" || c == "." {
			if c == "" && i == 0 && len(parts) > 1 {
				return "", outside(op, shown, "absolute path")
			}
			continue
		}
		if reason := componentReason(c, len(out) == 0, windows); reason != "" {
			return "", outside(op, shown, reason)
		}
		out = append(out, c)
	}
	if len(out) > maxComponents {
		return "", outside(op, shown, "too many path components")
	}
	if len(out) == 0 {
		return ".", nil
	}
	return strings.Join(out, "/"), nil
}

// pathReason checks properties of the whole path string.
func pathReason(p string) string {
	switch {
	case len(p) > maxPathBytes:
		return "path too long"
	case strings.IndexByte(p, 0) >= 0:
		return "NUL byte in path"
	case !utf8.ValidString(p):
		// Also catches overlong UTF-8 encodings such as C0 AE for '.'.
		return "path is not valid UTF-8"
	case strings.HasPrefix(p, "/"):
		return "absolute path"
	case strings.ContainsRune(p, '\\'):
		return "backslash in path (Windows separator)"
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return "drive-letter path"
	}
	return ""
}

// componentReason checks one path component.
func componentReason(c string, first, windows bool) string {
	switch {
	case c == "..":
		return "parent directory reference"
	case len(c) > maxComponentBytes:
		return "name too long"
	case first && strings.HasPrefix(c, "~"):
		return "home directory reference"
	case hasControl(c):
		return "control character in name"
	case hasLookalike(c):
		// Windows "best fit" code-page conversion maps these to '.', '/',
		// '\\' or ':', so a tool on Windows could read them as traversal.
		return "separator or dot lookalike character in name"
	case strings.Trim(c, ". ") == "" || strings.TrimRight(c, ". ") == "..":
		// "...", ". ." and ".. " are ".." or "." to Windows.
		return "name made only of dots and spaces"
	}
	if windows {
		switch {
		case strings.ContainsRune(c, ':'):
			return "colon in name (drive or alternate data stream)"
		case strings.HasSuffix(c, ".") || strings.HasSuffix(c, " "):
			return "trailing dot or space in name"
		case isReservedDevice(c):
			return "reserved device name"
		case strings.ContainsAny(c, `<>"|?*`):
			return "character not allowed in Windows names"
		}
	}
	return ""
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// lookalikes are characters that best-fit conversions or normalisation turn
// into '.', '/', '\\' or ':'.
var lookalikes = map[rune]bool{
	0x2024: true, // ONE DOT LEADER
	0x2025: true, // TWO DOT LEADER
	0x2026: true, // HORIZONTAL ELLIPSIS
	0xFE52: true, // SMALL FULL STOP
	0xFF0E: true, // FULLWIDTH FULL STOP
	0x3002: true, // IDEOGRAPHIC FULL STOP
	0xFF61: true, // HALFWIDTH IDEOGRAPHIC FULL STOP
	0x2215: true, // DIVISION SLASH
	0x2044: true, // FRACTION SLASH
	0x29F8: true, // BIG SOLIDUS
	0xFF0F: true, // FULLWIDTH SOLIDUS
	0x29F5: true, // REVERSE SOLIDUS OPERATOR
	0x29F9: true, // BIG REVERSE SOLIDUS
	0xFE68: true, // SMALL REVERSE SOLIDUS
	0xFF3C: true, // FULLWIDTH REVERSE SOLIDUS
	0x00A5: true, // YEN SIGN (the backslash of code page 932)
	0x20A9: true, // WON SIGN (the backslash of code page 949)
	0xFF1A: true, // FULLWIDTH COLON
	0xFE55: true, // SMALL COLON
	0x2236: true, // RATIO
}

func hasLookalike(s string) bool {
	for _, r := range s {
		if lookalikes[r] {
			return true
		}
	}
	return false
}

func isReservedDevice(c string) bool {
	base := strings.ToUpper(c)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		d := base[3]
		return d >= '0' && d <= '9'
	}
	// COM¹ and friends: superscript digits are multi-byte in UTF-8.
	for _, p := range []string{"COM", "LPT"} {
		for _, s := range []string{"¹", "²", "³"} {
			if base == p+s {
				return true
			}
		}
	}
	return false
}
