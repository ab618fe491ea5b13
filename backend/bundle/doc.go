// Package bundle writes, verifies and reads a run bundle: one run exported as
// a zip that checks itself on any machine, with no database (issue 19).
//
// A bundle holds manifest.json (the run, every other file's SHA-256 and size,
// the events' digest chain and the audit proof), events.jsonl, patches/*.diff
// (each proposed patch as a unified diff), artifacts/ (the run's artifacts,
// ID-FILE, as stored; a screenshot still pending its privacy review is left
// out), audit.jsonl (the run's audit entries),
// audit-chain.jsonl (every link of the audit chain from the run's first entry
// to the exported head: seq, prevHash, hash, no other run's data),
// transcript.md and transcript.html (one self-contained page).
//
// What a bundle proves, honestly: that its files are the ones the manifest
// names (hashes), that the events form one gap-free run whose digest chain
// ends at the manifest's digest, and that the run's audit entries sit in one
// unbroken chain ending at the exported head. The audit chain is keyed
// (HMAC) with a key that never leaves the machine that wrote it, so the
// verifier cannot recompute a keyed entry's hash and the bundle carries no
// signature: whoever rewrites a bundle can recompute every plain hash in it.
// It is tamper-evident against corruption and against edits that skip the
// manifest, and its head can be confirmed on the machine of origin with
// `agenthub audit verify --head SEQ:HASH`; it is not proof of authorship to a
// third party. Entries written before the chain was keyed carry a plain
// SHA-256, which the verifier recomputes.
//
// The package is standard library plus the backend vocabulary and canon, so
// verify needs nothing else. Every byte it writes passes the caller's Clean
// (secrets redacted, machine paths rewritten) first.
package bundle
