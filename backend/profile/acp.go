package profile

import (
	"strings"
)

// Command is a profile's command: in TOML either a string (one program,
// or for acp and gemini a command line split at spaces) or an array of the
// program and its arguments, for arguments with spaces.
type Command []string

// UnmarshalText reads the string form. A TOML array decodes as the slice
// itself.
func (c *Command) UnmarshalText(b []byte) error {
	*c = Command{string(b)}
	return nil
}

// Program is the program, "" when none is named.
func (c Command) Program() string {
	if len(c) == 0 {
		return ""
	}
	return c[0]
}

// Line is the command line of an acp or gemini profile: the array as it
// is, or the string split at spaces.
func (c Command) Line() []string {
	if len(c) == 1 {
		return strings.Fields(c[0])
	}
	return c
}
