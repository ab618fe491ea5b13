// Package approval owns the approval gate's pure logic: the workspace policy
// file (.agenthub/policy.toml), policy evaluation with a full rule trace, the
// argv-aware shell parser, run grants and "always allow" rules, subject hashes
// (AP9) and verification of the audit hash chain (AU2, AU3).
//
// Invariants, in order of importance:
//   - Deny beats Allow beats Ask; nothing switches off the gate for push,
//     publish, deploy or secret access, and the agent can never write to
//     .agenthub/ (run-model.md §9).
//   - Anything the shell parser does not fully understand is Ask, never Allow
//     (fail closed).
//   - A subject hash covers exactly what the reviewer was shown; any drift
//     gives a different hash.
//
// The package must not touch the disk beyond the fs.FS it is handed, must not
// persist anything (the store does) and must not decide on behalf of a user:
// it evaluates, the engine suspends, and only a local user's explicit action
// resolves a ticket (AP12).
package approval
