package backend

// SurfaceACP is an editor speaking the Agent Client Protocol to
// `agenthub acp`: its decisions and runs are audited under this surface.
const SurfaceACP Surface = "acp"
