// Package workspace owns every file access AgentHub makes inside a user's
// allowlisted directories: the allowlist checks ([Canonical], [Contains]),
// the display helpers that keep absolute machine paths out of anything shown
// or persisted ([Display], [Scrub]), rooted reads over os.Root ([Open], [FS]),
// the atomic applier of whole-file changes ([Apply]) with its content-addressed
// pre-image store ([CheckpointStore]) and [Undo].
//
// Invariants:
//   - Every path handed in is workspace-relative with '/' separators. Anything
//     that could name a location outside the root (`..`, absolute, `~`, drive
//     letters, UNC, backslashes, NUL, invalid UTF-8, Windows best-fit
//     lookalikes, symlinks or hard links out) fails with [ErrOutsideRoot]
//     before or during the open; os.Root confines the kernel side, so a
//     symlink swapped in between a check and a use still cannot escape.
//   - Writes happen only through [Apply] and [Undo]: pre-images are verified
//     first, stored outside the user's repository, and files are replaced by
//     temp file + fsync + rename, all or none. Writes into `.git/`,
//     `.agenthub/` and secret files are refused with [ErrProtected].
//   - The package never moves HEAD, never touches a git index, and never runs
//     a process.
//
// It must not import backend/** or app (the app maps these sentinel errors to
// failure codes) and must not import os/exec.
package workspace
