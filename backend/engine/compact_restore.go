package engine

import (
	"context"
	"encoding/json"

	"agenthub/backend"
)

// This file makes compaction durable (CX6 with restarts): every compaction
// is committed as run.context.compacted, whose payload names the summary,
// its number in the run and how many messages of the session transcript it
// stands in for (replacedMessages). When a run is activated again (a
// waiting run recovered at start) or an interrupted run is resumed as a
// new run, the first inference rebuilds the same view from those events
// instead of replaying the full history, which overflowed before; the
// count of compactions carries over too, so the cap of CX4 step 3 holds
// across restarts.

// maxResumeChain bounds how many resumed runs restoreContext walks back.
const maxResumeChain = 16

// restoreContext rebuilds rc.cx once per activation, before the first
// inference: from the run's own compactions and, for the part it did not
// compact itself, those of the interrupted run it resumes (and so on back).
// A failure to read them is logged and leaves the full view: the overflow
// route still applies.
func (rc *runCtl) restoreContext() {
	if rc.cx.restored {
		return
	}
	rc.cx.restored = true
	ctx := context.Background()
	var chain [][]compactedPayload // newest run first
	for id, n := rc.rec.ID, 0; id != "" && n < maxResumeChain; n++ {
		evs, err := rc.e.store.EventsOfType(ctx, id, backend.EvContextCompacted)
		if err != nil {
			rc.e.log.Warn("read compactions", "run_id", rc.rec.ID, "err", err)
			return
		}
		ps := decodeCompacted(evs)
		chain = append(chain, ps)
		if hasSummary(ps) {
			break
		}
		id = rc.resumedFrom(ctx, id)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, p := range chain[i] {
			rc.cx.apply(p, rc.transcript)
		}
	}
	if rc.cx.compactions > 0 || rc.cx.truncLimit > 0 {
		rc.e.log.Info("compacted context restored", "run_id", rc.rec.ID, "compactions", rc.cx.compactions,
			"replaced_messages", rc.cx.cut, "kept_chars", rc.cx.truncLimit)
	}
}

// resumedFrom is the run that runID resumes, from its run.created, or "".
func (rc *runCtl) resumedFrom(ctx context.Context, runID string) string {
	evs, err := rc.e.store.Events(ctx, runID, 0, 1)
	if err != nil || len(evs) == 0 || evs[0].Type != backend.EvRunCreated {
		return ""
	}
	var created struct {
		ResumedFrom string `json:"resumedFrom"`
	}
	_ = json.Unmarshal(evs[0].Payload, &created)
	return created.ResumedFrom
}

// compactedPayload is what restoreContext reads of run.context.compacted.
type compactedPayload struct {
	Method           string `json:"method"`
	Reason           string `json:"reason"`
	Compaction       int    `json:"compaction"`
	Summary          string `json:"summary"`
	ReplacedMessages *int   `json:"replacedMessages"` // absent in events written before it existed
	KeptChars        int    `json:"keptChars"`
}

func decodeCompacted(evs []backend.Event) []compactedPayload {
	out := make([]compactedPayload, 0, len(evs))
	for _, ev := range evs {
		var p compactedPayload
		if json.Unmarshal(ev.Payload, &p) == nil {
			out = append(out, p)
		}
	}
	return out
}

func hasSummary(ps []compactedPayload) bool {
	for _, p := range ps {
		if p.Method == methodSummary {
			return true
		}
	}
	return false
}

// apply replays one committed compaction onto the view. A summary whose cut
// does not fit this transcript (fewer messages, or not at a boundary) is
// skipped: the view stays complete rather than wrong.
func (cs *contextState) apply(p compactedPayload, transcript []backend.Message) {
	switch p.Method {
	case methodSummary:
		cs.compactions = max(cs.compactions, p.Compaction)
		if p.ReplacedMessages == nil || p.Summary == "" {
			return
		}
		cut := *p.ReplacedMessages
		if cut < 0 || cut > len(transcript) || (cut < len(transcript) && transcript[cut].Role != backend.RoleAssistant) {
			return
		}
		cs.summary, cs.cut = p.Summary, cut
	case methodTruncate:
		if p.KeptChars > 0 {
			cs.truncLimit = p.KeptChars
		}
		if p.Reason == "overflow" {
			cs.truncTried = true
		}
	}
}
