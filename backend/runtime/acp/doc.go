// Package acp is the runtime for agents that speak the Agent Client
// Protocol (ACP) on stdio, Gemini CLI (`gemini --acp`) first: AgentHub is
// the ACP client, and the agent plugs into the engine as a [backend.Model]
// whose Stream drives the agent process and turns each of its requests into
// a call to a proxy tool that the engine gates.
//
// How a run goes: the model's first Stream resolves the command (missing →
// runtime_unavailable with the install step) and returns a call to
// [ToolSession], whose Execute starts the process in the workspace root
// (through backend/proc, tracked by the run so cancel and timeout stop its
// process group), sends initialize (fs.readTextFile, fs.writeTextFile
// and terminal offered), session/new and the task as session/prompt, and
// records the agent's name, version and program hash, with a drift warning
// against [GeminiTestedVersion]. Each later Stream streams
// agent_message_chunk text as deltas and the agent's tool calls as
// runtime.tool_call events, and returns when the agent asks something of
// the client:
//
//   - session/request_permission becomes a call to [ToolEdit] (a staged
//     patch from the request's diff), [ToolExecute] (a shell approval),
//     [ToolFetch], [ToolRead] or [ToolOther] by the ACP tool kind; Execute,
//     which runs only after approval, answers with the agent's allow_once
//     option and waits for the tool call to finish. A rejection answers
//     reject_once (or "cancelled"); an "always" option is never chosen
//     unless the reviewer granted the run or workspace and nothing
//     once-scoped is offered (AP14).
//   - fs/write_text_file of a change the reviewer approved is applied by
//     AgentHub (workspace.Apply, with a checkpoint) with only the approved
//     hunks; a partial approval is reported to the agent as an error so it
//     reads the file again. Any other write is shown as a staged patch
//     ([ToolWrite]) and applied only after approval.
//   - fs/read_text_file is served at once from the workspace's rooted file
//     API and recorded as run.file.read; paths outside the workspace and
//     secret files are refused. It is not offered to Gemini CLI 0.61.0,
//     which cannot then create new files (see Config.servesReads).
//   - terminal/create becomes a call to [ToolTerminal], gated exactly as the
//     built-in run_shell's command (tools.Shell: kind shell, the same
//     subject, the shell tool's environment allow-list); a cwd outside the
//     workspace or another variable is refused without asking. Execute,
//     which runs only after approval, starts the command in its own process
//     group, answers with the terminal id and waits for the command to end:
//     its output is the call's result. A rejection reaches the agent as an
//     error with the reason. terminal/output, wait_for_exit, kill and
//     release are served at once (terminal.go); every terminal is killed
//     when the session ends or the run is cancelled.
//
// A cancel sends session/cancel, answers every pending request
// "cancelled", then stops the process group gracefully and kills it.
// Every stdout line is kept in a raw log beside the database; a line that
// is not JSON-RPC, or an unknown method or update, becomes a
// schema.validation_failed event.
//
// Invariants: the agent gets an allow-listed environment with an isolated
// HOME and never a key: Gemini, and a generic agent whose profile declares
// its model protocol, talk to a keyproxy with a per-session token; a
// generic agent with a key and no protocol is refused (keyenv.go); Gemini
// runs in its default approval mode with the workspace untrusted (its
// settings, .env and hooks ignored); events and tool results hold
// workspace-relative paths only, and text from the agent is scrubbed of
// machine paths and secrets. This package must not import app code.
package acp
