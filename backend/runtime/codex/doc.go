// Package codex is the Codex CLI runtime. Gated runs drive `codex
// app-server` (JSON-RPC on stdio) and put every approval request of the CLI
// through AgentHub's approval gate, by plugging into the engine as a
// [backend.Model] and a set of proxy tools, as the Claude Code runtime does.
//
// How a gated run goes: the model's first Stream resolves the CLI (missing
// → runtime_unavailable with the install step; version and binary hash
// recorded, another version than [TestedVersion] → a drift warning) and
// returns a call to [ToolSession], whose Execute starts the app-server in
// the workspace root (tracked by the run, so cancel and timeout stop its
// process group), checks that the thread runs with approval policy
// "untrusted", a sandbox and the user as reviewer, and starts the turn.
// Each later Stream streams Codex's text and returns when Codex sends an
// approval request or ends its turn. A command request is one call to
// [ToolCommand], shown as a shell approval (argv, workspace-relative cwd,
// sandbox or escalation); a file-change request is one call to [ToolFile]
// per file, each a staged patch (backend/patch). Execute, which runs only
// after approval, answers "accept"; a rejected call is answered "decline"
// at the next Stream, and the agent is told why through turn/steer.
//
// Codex accepts or declines a patch as a whole: per-hunk selection is not
// possible ([Capabilities] says PartialApply false, and so does every
// preview). A reviewer who approves only some hunks, or some files of a
// patch, declines all of it, and the agent is told so.
//
// `codex exec --json` cannot delegate approvals. It is refused (runtime
// unavailable with the reason) unless the profile accepts advisory gating,
// in which case it runs in a read-only sandbox (or the profile's), and what
// Codex did is recorded after the fact as observed actions: from exec's
// output, and, for the commands and patches that output did not report
// (0.169.0 does not always print them), from the session's rollout file in
// AgentHub's CODEX_HOME, marked source "rollout".
//
// Invariants: the CLI never gets a bypass (no danger-full-access, no
// --dangerously-bypass-approvals-and-sandbox, approval policy never
// "never" in gated mode); CODEX_HOME is AgentHub's own, written by AgentHub,
// and the environment is an allow-list that never holds the profile's key
// (Codex talks to a keyproxy with a per-session token); features that
// reach services other than the model server are off; every answer is
// once-scoped ("accept" or "decline", never acceptForSession or a policy amendment:
// grants stay with AgentHub, AP14); events and tool results hold
// workspace-relative paths only, and text from the CLI is scrubbed of
// machine paths and secrets; the raw output is kept beside the database.
// Processes are started only through backend/runtime/agentproc (over
// backend/proc), confined by Landlock like every agent CLI: the CLI and all
// it runs, escalated commands and its own patch writes included, write only
// the workspace, its state dir and a private temp dir, and connect only to
// the model endpoint. Codex's own sandbox inside that is its Landlock one
// (features.use_legacy_landlock): its default, bubblewrap, needs mounts,
// which a Landlock-confined process may not make. What every runtime shares (sessions, agentbin, agentproc,
// rawlog, scrub, agentpath) lives beside this package; it holds only what
// is Codex's. This package must not import app code.
package codex
