// Package backend is AgentHub's vocabulary: the names, states, events,
// failure codes and interfaces that every implementation beneath it shares.
//
// Invariants: this package imports only the standard library and never any
// other package of this module. Lifecycle rules live here as data (transition
// tables), so every implementation enforces the same machine.
package backend
