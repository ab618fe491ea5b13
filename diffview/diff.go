package diffview

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"
)

// Diff compares two sides of one file. It returns an error only for malformed
// input (see [ErrInvalid]); size, binary content and time limits are reported
// inside the [FileDiff], never as errors.
func Diff(old, new Side, opts Options) (FileDiff, error) {
	opts = opts.withDefaults()
	oi, err := sideInfo(old)
	if err != nil {
		return FileDiff{}, fmt.Errorf("old side: %w", err)
	}
	ni, err := sideInfo(new)
	if err != nil {
		return FileDiff{}, fmt.Errorf("new side: %w", err)
	}
	if !oi.Exists && !ni.Exists {
		return FileDiff{}, fmt.Errorf("both sides are absent: %w", ErrInvalid)
	}
	fd := FileDiff{Old: oi, New: ni, Hunks: []Hunk{}}
	fd.Status = status(oi, ni)
	if bytes.Equal(old.Content, new.Content) {
		fd.Old.Lines, fd.New.Lines = countLines(old.Content), countLines(new.Content)
		return fd, nil
	}
	if isBinary(old.Content) || isBinary(new.Content) {
		fd.Binary = &BinaryInfo{Reason: "NUL byte in the first 8000 bytes"}
		return fd, nil
	}
	if o := overBytes(old.Content, new.Content, opts.MaxBytes); o != nil {
		fd.Omitted = o
		return fd, nil
	}
	fd.Old.Lines, fd.New.Lines = countLines(old.Content), countLines(new.Content)
	if n := max(fd.Old.Lines, fd.New.Lines); n > opts.MaxLines {
		fd.Omitted = &Omitted{Reason: OmitTooManyLines,
			Detail: fmt.Sprintf("%d lines, limit %d", n, opts.MaxLines)}
		return fd, nil
	}
	textDiff(&fd, string(old.Content), string(new.Content), opts)
	return fd, nil
}

// textDiff fills hunks, stats and markers for two text contents.
func textDiff(fd *FileDiff, old, new string, opts Options) {
	start := time.Now()
	deadline := start.Add(opts.Timeout)
	a, b := splitLines(old), splitLines(new)
	in := newInterner(len(a) + len(b))
	ia, ib := in.intern(a), in.intern(b)
	blocks, fellBack := lineDiff(ia, ib, int(in.count), deadline)
	if fellBack > 0 {
		fd.Degraded = &Degraded{Regions: fellBack, Reason: fmt.Sprintf(
			"line diff exceeded its %v budget; %d region(s) shown as whole replacements", opts.Timeout, fellBack)}
	}
	for _, bl := range blocks {
		fd.Stats.Deleted += bl.a1 - bl.a0
		fd.Stats.Added += bl.b1 - bl.b0
	}
	if rows := countRows(blocks, len(a), opts.Context); rows > opts.MaxRows {
		fd.Omitted = &Omitted{Reason: OmitDiffTooLarge,
			Detail: fmt.Sprintf("%d diff lines, limit %d", rows, opts.MaxRows)}
		return
	}
	fd.Hunks = buildHunks(a, b, blocks, opts.Context)
	if !opts.NoWords {
		if !addWordSpans(fd.Hunks, deadline) && fd.Degraded == nil {
			fd.Degraded = &Degraded{Reason: fmt.Sprintf(
				"word-level highlighting stopped at the %v budget", opts.Timeout)}
		}
	}
}

func sideInfo(s Side) (FileInfo, error) {
	if s.Path == "" {
		if len(s.Content) > 0 {
			return FileInfo{}, fmt.Errorf("content without a path: %w", ErrInvalid)
		}
		return FileInfo{}, nil
	}
	if err := checkPath(s.Path); err != nil {
		return FileInfo{}, err
	}
	mode := s.Mode
	if mode == "" {
		mode = ModeRegular
	}
	switch mode {
	case ModeRegular, ModeExecutable, ModeSymlink:
	default:
		return FileInfo{}, fmt.Errorf("mode %q of %s: %w", s.Mode, s.Path, ErrInvalid)
	}
	sum := sha256.Sum256(s.Content)
	return FileInfo{Path: s.Path, Mode: mode, Exists: true, Size: len(s.Content),
		SHA256: hex.EncodeToString(sum[:])}, nil
}

// checkPath refuses anything that is not a clean workspace-relative path:
// diff headers must never carry machine paths or climb out of the root.
func checkPath(p string) error {
	switch {
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("path %q is not workspace-relative: %w", p, ErrInvalid)
	case path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../") || p == "..":
		return fmt.Errorf("path %q is not clean: %w", p, ErrInvalid)
	case strings.ContainsAny(p, "\x00\n\r\t"):
		return fmt.Errorf("path %q has control characters: %w", p, ErrInvalid)
	}
	return nil
}

func status(o, n FileInfo) Status {
	switch {
	case !o.Exists:
		return StatusAdded
	case !n.Exists:
		return StatusDeleted
	case o.Path != n.Path:
		return StatusRenamed
	case o.SHA256 != n.SHA256:
		return StatusModified
	case o.Mode != n.Mode:
		return StatusModeChanged
	}
	return StatusUnchanged
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binarySniffLen)], 0) >= 0
}

func overBytes(old, new []byte, limit int) *Omitted {
	if n := max(len(old), len(new)); n > limit {
		return &Omitted{Reason: OmitTooManyBytes, Detail: fmt.Sprintf("%d bytes, limit %d", n, limit)}
	}
	return nil
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
