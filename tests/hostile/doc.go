// Package hostile is the permanent hostile-agent suite (issue 14): a corpus
// of attacks a hostile model, a hostile repository or a crash at the worst
// moment would try, played against the product at the highest level that is
// practical for each kind: `agenthub` commands with playbooks and scripted
// model servers through the real engine, tools, SQLite and git, the approval
// gate for pure decisions, and the real agent CLIs for a few cases.
//
// Every case asserts an invariant (no escape, no execution beyond what was
// approved, no leak, no hang past the timeout). testdata/known_open.txt lists
// the cases that still escape on this tree; the suite fails when any other
// case escapes and when a listed case no longer does, so the list is always
// exactly true. docs/SECURITY.md reports the counts.
package hostile
