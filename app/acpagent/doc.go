// Package acpagent makes AgentHub an agent of the Agent Client Protocol
// (ACP, stdio JSON-RPC): an editor that speaks ACP (Zed, or any ACP client)
// opens sessions on an allowlisted workspace, and each prompt becomes an
// AgentHub run of the engine, streamed back as session/update
// notifications. Every approval the run asks for becomes a
// session/request_permission showing the diff or the command, and the
// editor's answer is decided through the engine's own decide path, bound to
// the subject hash the editor was shown, so it lands in the audit trail like
// a decision taken in the window.
//
// mapping.go turns envelope events into session updates and approvals into
// permission requests (pure functions, table-tested); agent.go holds the
// sessions and follows runs. `agenthub acp` (app/cli/acp.go) wires it to
// the engine's core and to standard input and output.
package acpagent
