// Package mcp exposes the tools of a profile's MCP servers to the native
// agent runtime (github.com/modelcontextprotocol/go-sdk): a server is a
// child process speaking MCP over stdio, started through backend/proc in
// its own process group, or a running server reached over Streamable HTTP
// (http.go). Each of its tools becomes a [backend.Tool] named
// mcp__<server>__<tool> with the server's input schema. When a server
// sends notifications/tools/list_changed, the next [Set.Tools] (the next
// inference) lists its tools again.
//
// Invariants, most important first:
//   - MCP tools are untrusted. Every call is a gated action of kind "mcp"
//     ([ActionMCP]) whose subject binds server, tool and arguments (and
//     read_only when the server annotates the tool readOnlyHint); it asks
//     unless an [[mcp]] rule of the workspace policy says otherwise. This
//     package decides no policy. A tool the server annotates readOnlyHint,
//     on a server whose profile entry sets allow_read_only, is marked so in
//     the subject and the policy's default for it is allow instead of ask;
//     it still goes to the gate, so deny and ask rules apply. The
//     annotation alone never skips the gate.
//   - A server's failure is a tool error the model sees, never a run
//     failure: a server that will not start offers no tools, a server that
//     crashes mid-call fails that call and is restarted on the next one.
//   - A server gets only the environment variables its profile entry names
//     (plus PATH), and never the workspace root unless its arguments say so.
//     The headers of an HTTP server come from references (an environment
//     variable or a keychain entry) read when the session starts; their
//     values are never logged or put into an error, and redirects are not
//     followed.
//   - Every process this package starts is stopped by [Set.Close] (stdin
//     closed, then the whole process group signalled and killed), which the
//     engine calls when it shuts down.
//
// It must not start processes except through backend/proc, must not decide
// policy, and must not import app code or a UI toolkit.
package mcp
