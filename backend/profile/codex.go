package profile

// Settings of the codex runtime.
const (
	GatingEnforced = "enforced" // app-server: every command and patch waits for AgentHub (the default)
	GatingAdvisory = "advisory" // exec --json: Codex acts in its sandbox, AgentHub only records it

	ModeAppServer = "app-server" // the default with enforced gating
	ModeExec      = "exec"       // the default with advisory gating; refused at run time without it

	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
)
