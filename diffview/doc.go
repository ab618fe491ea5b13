// Package diffview owns everything the UI renders about a change to one file
// and the unified patches made from it: a line diff of two byte slices with
// configurable context, every line tagged and numbered on both sides,
// word-level spans inside modified line pairs, unified and side-by-side
// models for the frontend, unified diff text that `git apply` and `patch -p1`
// accept, per-hunk selection and a strict applier.
//
// Invariants:
//   - Bytes are preserved exactly: CR LF, mixed endings, a missing final
//     newline and invalid UTF-8 survive Diff → Unified/Apply and a JSON round
//     trip of [FileDiff] unchanged.
//   - Nothing is dropped silently: a binary file carries [BinaryInfo], an
//     input or diff over the limits carries [Omitted] with the reason, and a
//     diff that had to give up on minimality carries [Degraded].
//   - Time is bounded: unique lines anchor the diff (patience style) and
//     go-diff's line mode runs only on the regions between anchors, under one
//     deadline for the whole file ([Options.Timeout]).
//
// It must not: import any package of this module, touch the file system, run
// processes, or know about runs, approvals or workspaces. Callers (workspace/,
// app/api) read and write files and map the sentinel errors to user-facing
// codes.
package diffview
