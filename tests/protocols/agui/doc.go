// Package agui holds the conformance test of AgentHub's ecosystem streams:
// the official AG-UI client (@ag-ui/client, @ag-ui/core) and the AI SDK v6
// (ai), pinned in package.json and package-lock.json and installed by
// scripts/deps.sh test, drive `agenthub serve` through runs with approvals,
// a stale hash, a partial approval, a rejection, a stream cut and resumed
// and a cancel (drive.mjs); agui_test.go starts the server and checks the
// workspace and the audit trail.
package agui
