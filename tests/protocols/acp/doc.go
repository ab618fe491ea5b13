// Package acp holds the conformance test of `agenthub acp`: the official ACP
// TypeScript client (@agentclientprotocol/sdk, pinned in package.json and
// package-lock.json, installed by scripts/deps.sh test) drives the real
// binary through a run with approvals, a rejection, a partial approval and a
// cancel (drive.mjs); acp_test.go checks the workspace and the audit trail.
package acp
