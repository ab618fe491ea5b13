// Package claude is the Claude Code runtime: it drives the `claude` CLI in
// stream-json mode and puts every permission request of the CLI through
// AgentHub's approval gate, by plugging into the engine as a
// [backend.Model] and a set of proxy tools.
//
// How a run goes: the model's first Stream resolves the CLI (missing →
// runtime_unavailable with the install step; version and binary hash
// recorded, another version than [TestedVersion] → a drift warning) and
// returns a call to [ToolSession], whose Execute starts the process in the
// workspace root, tracked by the run so cancel and timeout stop its whole
// process group. Each later Stream streams the CLI's text and returns when
// the CLI sends a can_use_tool control request (one call to a proxy tool)
// or its result (the final text). A proxy tool's Action shows the request as
// a staged patch (Write, Edit, MultiEdit), a shell approval (Bash) or the
// closest action class; Execute, which runs only after approval, answers
// "allow" with exactly the approved input and returns the CLI's tool
// result. A rejected call is never executed: the next Stream answers "deny"
// with the reason the engine put in the transcript.
//
// Invariants: the CLI never runs with --dangerously-skip-permissions or a
// bypass mode, reads no settings file of the user or the workspace, and gets
// an allow-listed environment with an isolated HOME and never the profile's
// key (it talks to a keyproxy with a per-session token); a read through a
// link leading out of the workspace is refused; every answer to a
// permission request is once-scoped (AP14); events and tool results hold
// workspace-relative paths only, and text from the CLI is scrubbed of
// machine paths and secrets. Processes are started only through
// backend/runtime/agentproc (over backend/proc). What every runtime shares
// (sessions, agentbin, agentproc, rawlog, scrub, agentpath) lives beside
// this package; it holds only what is Claude Code's. This package must not
// import app code.
package claude
