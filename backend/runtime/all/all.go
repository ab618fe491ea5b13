// Package all registers every runtime AgentHub ships: import it for its
// side effect where profiles are loaded. An agent CLI added in its own
// package under backend/runtime is listed here, once.
package all

import (
	_ "agenthub/backend/runtime/acp"
	_ "agenthub/backend/runtime/claude"
	_ "agenthub/backend/runtime/codex"
	_ "agenthub/backend/runtime/native"
	_ "agenthub/backend/runtime/opencode"
	_ "agenthub/backend/runtime/script"
)
