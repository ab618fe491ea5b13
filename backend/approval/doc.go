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
// On disk the package touches only a workspace's policy file: [Gate] reads
// it and [AppendRule] replaces it atomically, both through an os.Root of the
// workspace, never through a plain path. It must not
// persist anything else (the store does) and must not decide on behalf of a
// user: it evaluates, the engine suspends, and only a local user's explicit
// action resolves a ticket or adds a rule (AP12).
package approval
