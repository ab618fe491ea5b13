package diffview

import (
	"bytes"
	"fmt"
	"strconv"
)

// Unified renders the files as one git-style unified diff ("diff --git"
// headers, new/deleted/renamed files and mode changes) that `git apply` and
// GNU `patch -p1` accept. A file without text hunks renders as git does:
// "Binary files … differ" for binary content and, for an omitted diff, the
// same line preceded by a comment line with the reason; neither can be
// applied as text (use [FileDiff.IsText]). Zero-context hunks need
// `git apply --unidiff-zero`.
func Unified(files ...FileDiff) []byte {
	var buf bytes.Buffer
	for _, fd := range files {
		writeFile(&buf, fd)
	}
	return buf.Bytes()
}

func writeFile(buf *bytes.Buffer, fd FileDiff) {
	if fd.Status == StatusUnchanged && len(fd.Hunks) == 0 {
		return
	}
	oldName, newName := fd.Old.Path, fd.New.Path
	if !fd.Old.Exists {
		oldName = newName
	}
	if !fd.New.Exists {
		newName = oldName
	}
	fmt.Fprintf(buf, "diff --git %s %s\n", quote("a/"+oldName), quote("b/"+newName))
	switch {
	case !fd.Old.Exists:
		fmt.Fprintf(buf, "new file mode %s\n", fd.New.Mode)
	case !fd.New.Exists:
		fmt.Fprintf(buf, "deleted file mode %s\n", fd.Old.Mode)
	default:
		if fd.Old.Mode != fd.New.Mode {
			fmt.Fprintf(buf, "old mode %s\nnew mode %s\n", fd.Old.Mode, fd.New.Mode)
		}
		if fd.Old.Path != fd.New.Path {
			fmt.Fprintf(buf, "rename from %s\nrename to %s\n", quote(fd.Old.Path), quote(fd.New.Path))
		}
	}
	from, to := "/dev/null", "/dev/null"
	if fd.Old.Exists {
		from = quote("a/" + oldName)
	}
	if fd.New.Exists {
		to = quote("b/" + newName)
	}
	if !fd.IsText() {
		if fd.Omitted != nil {
			fmt.Fprintf(buf, "# diff omitted: %s (%s)\n", fd.Omitted.Reason, fd.Omitted.Detail)
		}
		fmt.Fprintf(buf, "Binary files %s and %s differ\n", from, to)
		return
	}
	if len(fd.Hunks) == 0 {
		return
	}
	fmt.Fprintf(buf, "--- %s\n+++ %s\n", from, to)
	for _, h := range fd.Hunks {
		writeHunk(buf, h)
	}
}

func writeHunk(buf *bytes.Buffer, h Hunk) {
	fmt.Fprintf(buf, "@@ -%s +%s @@\n", hunkRangeText(h.OldStart, h.OldLines), hunkRangeText(h.NewStart, h.NewLines))
	line := make([]byte, 0, 128)
	for _, l := range h.Lines {
		line = line[:0]
		switch l.Op {
		case OpAdd:
			line = append(line, '+')
		case OpDelete:
			line = append(line, '-')
		default:
			line = append(line, ' ')
		}
		line = l.appendExact(line)
		if l.EOL == EOLNone {
			line = append(line, "\n\\ No newline at end of file\n"...)
		}
		buf.Write(line)
	}
}

func hunkRangeText(start, count int) string {
	if count == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}

// quote applies git's C-style quoting to a header path when it holds a
// quote, a backslash, a control or non-ASCII byte or a space (git quotes
// the first group; quoting spaces too keeps `patch -p1` from splitting names).
func quote(name string) string {
	needs := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x21 || c >= 0x7f || c == '"' || c == '\\' {
			needs = true
			break
		}
	}
	if !needs {
		return name
	}
	b := []byte{'"'}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == ' ':
			b = append(b, c)
		case c < 0x20 || c >= 0x7f:
			b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
