package tools

import (
	"agenthub/backend"
	"agenthub/workspace"
)

// journal adapts the run's intent journal (ToolEnv.Intents) to the
// workspace applier, so every write is recorded before it is made.
type journal struct{ j backend.IntentJournal }

// JournalOptions are the workspace apply options that record a change as an
// intent of env's call before its first byte is written; other writers of
// workspace files (an ACP agent's approved writes) use it too.
func JournalOptions(env backend.ToolEnv) workspace.Options { return journalOf(env) }

func journalOf(env backend.ToolEnv) workspace.Options {
	if env.Intents == nil {
		return workspace.Options{}
	}
	return workspace.Options{Journal: journal{env.Intents}}
}

func (j journal) Intend(in workspace.Intent) error {
	out := backend.Intent{ID: in.ID, Op: in.Op, Undoes: in.Undoes, Staging: in.Staging}
	for _, f := range in.Files {
		out.Files = append(out.Files, backend.IntentFile{Path: f.Path, Before: f.Before, After: f.After})
	}
	return j.j.Intend(out)
}

func (j journal) Abandon(id string, v workspace.Verdict, cause error) {
	j.j.Abandon(id, string(v), cause)
}
