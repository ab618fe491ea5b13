// Package tools owns the built-in tools of the native agent runtime: listing
// and reading workspace files, proposing whole-file writes, edits and
// deletions, running a shell command and reporting git status. Each tool
// implements [backend.Tool]; [New] returns them all by name.
//
// Invariants, most important first:
//   - No tool changes anything outside Execute, and the mutating tools
//     (write_file, edit_file, delete_file) write only what their Action
//     proposed: Action records the pre-image it showed the reviewer, and
//     Execute applies through [workspace.Apply], which refuses (and writes
//     nothing) when the file changed since. Without such a proposal Execute
//     writes nothing.
//   - Every path goes through the rooted [workspace.FS]: `..`, absolute
//     paths, `~` and symlinks out of the root are refused. Secret paths
//     (approval.SecretPath, workspace.Classify) are never read or written:
//     read_file and the mutating tools turn them into an
//     [backend.ActionSecret] the gate denies, list_dir refuses them.
//   - Results, previews, subjects and events never carry the absolute
//     workspace root or the home directory: they are rewritten to "." and
//     "~" ([workspace.Scrub]).
//   - A mistake of the model (bad arguments, a path outside the workspace, an
//     edit that does not match) is a tool result with IsError set, never a
//     Go error and never a panic; Go errors are reserved for a tool that
//     cannot work at all (no workspace, no checkpoint store).
//
// It must not start processes except through backend/proc, must not import
// app or Wails, must not decide policy (the gate does; tools only describe
// their action), and must not write to the workspace except through
// workspace.Apply.
package tools
