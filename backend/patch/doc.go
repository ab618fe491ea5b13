// Package patch is the staged-patch model every file-writing tool shares,
// built in or behind a runtime adapter: a [Proposal] is one whole-file
// change computed from the workspace as it is now; [Gated] turns it into
// the approval request the reviewer sees (a diffview preview bound to the
// pre-image and the post-image); [Narrow] applies the reviewer's per-hunk
// selection to it.
//
// Invariants: nothing here writes to the workspace (workspace.Apply does,
// after approval); reads never follow a symbolic link, neither the file nor
// a parent directory; the hunk indexes a reviewer picks are those of
// [Proposal.Diff], which the preview is computed with, so they agree at
// apply time.
package patch
