package engine

import (
	"fmt"
	"unicode/utf8"

	"agenthub/backend"
)

// This file is the model-visible view of a run's transcript (run-model.md
// §12): a compaction summary that stands in for a prefix of the transcript,
// and tool results cut to fit. The view changes only what the model sees
// (CX6): rc.transcript, the stored messages and the events are never
// rewritten, and because the transcript only grows by appending, a prefix
// length stays valid for the rest of the run. The messages a summary
// replaces are always stored ones (a cut falls on an earlier step's
// assistant message), so the cut is also a position in the session's
// stored transcript: compact_restore.go rebuilds the view from it after a
// restart.

// maxCompactions caps compactions per run, across restarts and resumes
// (CX4 step 3).
const maxCompactions = 3

// safetyMargin scales the token estimate (CX3): characters/4 undercounts
// code, JSON and non-Latin text.
const safetyMargin = 1.2

// defaultWindow is assumed, only to size "oversized" tool results, when the
// profile does not declare the model's context window.
const defaultWindow = 32768

// toolResultShare is the part of the window one tool result may take before
// it counts as oversized and may be truncated.
const toolResultShare = 0.3

// contextWindowed is implemented by models that know their context window
// (an llm.Model whose profile sets context_window). Only those get the
// precheck at BeforeInference (CX3); every model gets the overflow route
// (CX4). reserve is the room kept for the answer (max_tokens).
type contextWindowed interface {
	ContextWindow() (window, reserve int)
}

// contextState is the run's view of its transcript. Only the run's own
// goroutine touches it.
type contextState struct {
	summary     string // stands in for transcript[:cut]
	cut         int
	truncLimit  int  // characters kept of each tool result; 0 = no truncation
	compactions int  // summaries made in this run, restored ones included
	truncTried  bool // the overflow route's one truncation was applied (CX4 step 4)
	extended    bool // the hard timeout was extended for a compaction (CC8), once per run
	restored    bool // restoreContext ran in this activation
}

// summaryPreamble introduces the summary to the model; the kept messages
// follow it.
const summaryPreamble = "This is a summary of the earlier part of this conversation, written because the full " +
	"conversation no longer fits the context window. Continue the task from here.\n\n"

// view returns what the model sees of transcript.
func (cs *contextState) view(transcript []backend.Message) []backend.Message {
	cut := min(cs.cut, len(transcript))
	out := make([]backend.Message, 0, len(transcript)-cut+1)
	if cs.summary != "" {
		out = append(out, backend.Message{Role: backend.RoleUser, Text: summaryPreamble + cs.summary})
	}
	for _, m := range transcript[cut:] {
		if m.Role == backend.RoleTool && cs.truncLimit > 0 {
			m.Text = truncateText(m.Text, cs.truncLimit)
		}
		out = append(out, m)
	}
	return out
}

// estimate is a token estimate of a request: characters/4 of every text,
// call argument and tool schema, times the safety margin.
func estimate(msgs []backend.Message, tools []backend.ToolSpec) int {
	chars := 0
	for _, m := range msgs {
		chars += len(m.Text) + 16 // role and framing
		for _, c := range m.Calls {
			chars += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range tools {
		chars += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return int(float64(chars) / 4 * safetyMargin)
}

// resultLimit is the number of characters one tool result may keep.
func resultLimit(window int) int {
	if window <= 0 {
		window = defaultWindow
	}
	return int(float64(window) * toolResultShare * 4)
}

// reducible counts the characters truncation at limit would remove from the
// tool results of msgs.
func reducible(msgs []backend.Message, limit int) int {
	n := 0
	for _, m := range msgs {
		if m.Role == backend.RoleTool && len(m.Text) > limit {
			n += len(m.Text) - limit
		}
	}
	return n
}

// truncateText keeps the head and the tail of s within limit characters and
// says what was cut, so the model knows the result is incomplete.
func truncateText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("\n\n[… %d characters of this tool result were cut to fit the model's context window …]\n\n",
		len(s)-limit)
	keep := max(limit-len(note), 0)
	head := validPrefix(s, keep*4/5)
	tail := validSuffix(s, keep-len(head))
	return head + note + tail
}

func validPrefix(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// boundaries are the indices where a kept tail may start: assistant
// messages, so the tail never begins with a tool result whose call was
// summarised away (TC6 pairing stays valid for both providers).
func boundaries(transcript []backend.Message, from int) []int {
	var out []int
	for i := max(from, 1); i < len(transcript); i++ {
		if transcript[i].Role == backend.RoleAssistant {
			out = append(out, i)
		}
	}
	return out
}

// tailShare is the part of the current view the kept tail may take at
// compaction k (1-based): each compaction keeps less, the last keeps only
// the latest step.
func tailShare(k int) float64 {
	switch k {
	case 1:
		return 0.5
	case 2:
		return 0.25
	}
	return 0
}

// nextCut picks where compaction k cuts: the earliest boundary whose tail
// fits the share, else the latest boundary. It returns cs.cut when no
// boundary lies beyond it.
func (cs *contextState) nextCut(transcript []backend.Message, k int) int {
	bs := boundaries(transcript, cs.cut+1)
	if len(bs) == 0 {
		return cs.cut
	}
	total := estimate(cs.view(transcript), nil)
	for _, b := range bs {
		if float64(estimate(transcript[b:], nil)) <= tailShare(k)*float64(total) {
			return b
		}
	}
	return bs[len(bs)-1]
}

// summaryWords bounds the summary of compaction k: later ones must shrink.
func summaryWords(k int) int {
	return 800 >> (k - 1)
}
