package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// This file is the inference with its context route (run-model.md §12):
// the precheck at BeforeInference (CX3) and the overflow route (CX4). The
// summary is written by the run's own model; an overflow never switches
// model (CX5), which the llm package guarantees by never falling back on one.

// compactionTimeout bounds one summary request: CX2's four 60 s windows.
// At the cap the attempt continues from the pre-compaction view. A variable
// so tests can shorten it.
var compactionTimeout = 4 * 60 * time.Second

// errCompactionOverflow is a summary request that itself overflowed: CX4
// step 1, the run fails at once with context_overflow.
var errCompactionOverflow = errors.New("the summary request overflowed the context")

// The methods of run.context.compacted.
const (
	methodSummary  = "summary"
	methodTruncate = "truncate_tool_results"
)

// errNothingToCompact: no boundary beyond the current cut and no summary to
// shorten.
var errNothingToCompact = errors.New("nothing to compact")

// stream is the inference of one step under the context route: it sends
// the model-visible view of the transcript and, on a provider overflow,
// compacts or truncates and retries, or fails with context_overflow.
func (rc *runCtl) stream(req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	rc.restoreContext() // compact_restore.go: a restart keeps the compacted view
	rc.precheck(req.Tools)
	for {
		req.Messages = rc.cx.view(rc.transcript)
		emitted := false
		resp, err := rc.p.Model.Stream(rc.ctx, req, func(s string) { emitted = true; delta(s) })
		if err == nil {
			uniqueCalls(resp.Calls, rc.transcript)
		}
		if err == nil || emitted || rc.ctx.Err() != nil || !isOverflow(err) {
			return resp, err
		}
		retry, ferr := rc.onOverflow(err)
		if !retry {
			return resp, ferr
		}
	}
}

// uniqueCalls gives a fresh id to a call whose id is empty or already used
// in the run's transcript (which the compacted view may no longer show) or
// earlier in the same response: a call id must be unique within its run.
func uniqueCalls(calls []backend.ToolCallRequest, transcript []backend.Message) {
	if len(calls) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, m := range transcript {
		for _, c := range m.Calls {
			seen[c.ID] = true
		}
	}
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = backend.NewID(backend.PrefixCall)
		}
		seen[calls[i].ID] = true
	}
}

func isOverflow(err error) bool {
	var be *backend.Error
	return errors.As(err, &be) && be.Code == backend.FailContextOverflow
}

// onOverflow is CX4 after a provider overflow: compact while under the cap,
// else (or when compaction failed) truncate oversized tool results once,
// else give up. retry reports whether the request should be sent again.
func (rc *runCtl) onOverflow(overflow error) (retry bool, err error) {
	if rc.cx.compactions < maxCompactions {
		cerr := rc.compact("overflow")
		switch {
		case cerr == nil:
			return true, nil
		case rc.ctx.Err() != nil:
			return false, rc.ctx.Err()
		case errors.Is(cerr, errCompactionOverflow):
			return false, overflowFailure("The conversation no longer fits the model's context window, not even to summarise it.", cerr)
		}
		rc.e.log.Warn("context compaction failed", "run_id", rc.rec.ID, "err", cerr)
	}
	if !rc.cx.truncTried {
		rc.cx.truncTried = true
		if rc.truncate("overflow", 0) {
			return true, nil
		}
	}
	return false, overflowFailure("The conversation no longer fits the model's context window after "+
		fmt.Sprintf("%d compactions", rc.cx.compactions)+" and truncating tool results.", overflow)
}

func overflowFailure(msg string, cause error) *backend.Error {
	return &backend.Error{Code: backend.FailContextOverflow, Message: msg, Err: cause}
}

// precheck is CX3: with a known window, a request estimated not to fit is
// truncated when oversized tool results hold enough reducible text, else
// compacted (then truncated if still needed). Failures here are not final:
// the request goes out and the provider's answer decides (CX4).
func (rc *runCtl) precheck(tools []backend.ToolSpec) {
	cw, ok := rc.p.Model.(contextWindowed)
	if !ok {
		return
	}
	window, reserve := cw.ContextWindow()
	if window <= 0 {
		return
	}
	if reserve <= 0 || reserve > window/2 {
		reserve = min(4096, window/4)
	}
	budget := window - reserve
	view := rc.cx.view(rc.transcript)
	est := estimate(view, tools)
	if est <= budget {
		return
	}
	limit := resultLimit(window)
	if est-int(float64(reducible(view, limit))/4*safetyMargin) <= budget {
		rc.truncate("precheck", window)
		return
	}
	if rc.cx.compactions < maxCompactions {
		if err := rc.compact("precheck"); err != nil && rc.ctx.Err() == nil {
			rc.e.log.Warn("context compaction failed", "run_id", rc.rec.ID, "err", err)
		}
	}
	if estimate(rc.cx.view(rc.transcript), tools) > budget {
		rc.truncate("precheck", window)
	}
}

// truncate cuts oversized tool results from now on. It reports whether any
// result was cut (nothing to cut: the retry would be the same request).
func (rc *runCtl) truncate(reason string, window int) bool {
	if window <= 0 {
		if cw, ok := rc.p.Model.(contextWindowed); ok {
			window, _ = cw.ContextWindow()
		}
	}
	limit := resultLimit(window)
	if rc.cx.truncLimit > 0 && rc.cx.truncLimit <= limit {
		limit = rc.cx.truncLimit / 2 // already truncated at this size: cut harder
	}
	view := rc.cx.view(rc.transcript)
	cut, results := reducible(view, limit), 0
	for _, m := range view {
		if m.Role == backend.RoleTool && len(m.Text) > limit {
			results++
		}
	}
	if cut == 0 {
		return false
	}
	before := estimate(view, nil)
	rc.cx.truncLimit = limit
	rc.emitCompacted(map[string]any{"method": methodTruncate, "reason": reason,
		"toolResults": results, "charsRemoved": cut, "keptChars": limit,
		"estimatedTokensBefore": before, "estimatedTokensAfter": estimate(rc.cx.view(rc.transcript), nil)})
	return true
}

// compact summarises the transcript before the next cut with the run's own
// model and makes the summary stand in for it (CX4 step 3, CX6).
func (rc *runCtl) compact(reason string) error {
	k := rc.cx.compactions + 1
	cut := rc.cx.nextCut(rc.transcript, k)
	if cut == rc.cx.cut && rc.cx.summary == "" {
		return errNothingToCompact
	}
	before := estimate(rc.cx.view(rc.transcript), nil)
	summary, err := rc.summarise(rc.transcript[rc.cx.cut:cut], summaryWords(k))
	if err != nil {
		return err
	}
	messages := cut - rc.cx.cut
	rc.cx.summary, rc.cx.cut, rc.cx.compactions = summary, cut, k
	rc.emitCompacted(map[string]any{"method": methodSummary, "reason": reason, "compaction": k,
		"maxCompactions": maxCompactions, "messagesSummarised": messages, "replacedMessages": cut,
		"estimatedTokensBefore": before, "estimatedTokensAfter": estimate(rc.cx.view(rc.transcript), nil),
		"summary": summary})
	return nil
}

// summarise asks the model for a summary of the previous summary and msgs.
// It sends no tools, so the model can only answer in text, and streams
// nothing to the run: the summary is shown in run.context.compacted.
func (rc *runCtl) summarise(msgs []backend.Message, words int) (string, error) {
	rc.extendForCompaction()
	ctx, cancel := context.WithTimeout(rc.ctx, compactionTimeout)
	defer cancel()
	prompt := summaryPrompt(rc.cx.summary, msgs, words)
	resp, err := unwrapped(rc.p.Model).Stream(ctx, backend.ModelRequest{Step: rc.st.Steps + 1,
		Messages: []backend.Message{{Role: backend.RoleUser, Text: prompt}}}, func(string) {})
	switch {
	case err != nil && isOverflow(err):
		return "", fmt.Errorf("%w: %w", errCompactionOverflow, err)
	case err != nil:
		return "", fmt.Errorf("summary request: %w", err)
	}
	rc.st.InputTokens += resp.Usage.InputTokens
	rc.st.OutputTokens += resp.Usage.OutputTokens
	text := strings.TrimSpace(resp.Text)
	if text == "" {
		return "", errors.New("summary request: the model returned no text")
	}
	return text, nil
}

// extendForCompaction is CC8: when the hard timeout could expire during
// this compaction, its deadline moves out once by the compaction timeout,
// so a summary under way is not cut off by the run's clock.
func (rc *runCtl) extendForCompaction() {
	if rc.cx.extended || rc.timer == nil || rc.activeSince.IsZero() {
		return
	}
	limit := rc.p.RunTimeout
	if limit <= 0 {
		limit = 30 * time.Minute
	}
	left := limit - time.Duration(rc.st.ActiveMS)*time.Millisecond - time.Since(rc.activeSince)
	if left >= compactionTimeout || !rc.timer.Stop() { // far enough, or already fired
		return
	}
	rc.cx.extended = true
	rc.timer = time.AfterFunc(max(left, 0)+compactionTimeout, func() { rc.stop(errTimeout) })
	rc.e.log.Info("hard timeout extended for a compaction", "run_id", rc.rec.ID, "by", compactionTimeout)
}

// summaryInputChars bounds what one summary request carries, so the
// summary request itself rarely overflows; each message keeps its head.
const (
	summaryInputChars   = 200_000
	summaryMessageChars = 4_000
)

func summaryPrompt(previous string, msgs []backend.Message, words int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summarise the conversation below for yourself, in at most %d words, so that you can "+
		"continue the task without it. Keep, verbatim where short: the user's task and every instruction "+
		"or constraint; decisions made and why; files, commands and identifiers involved; what was done, "+
		"what failed, and what remains. Write only the summary.\n\n", words)
	if previous != "" {
		b.WriteString("<earlier-summary>\n" + previous + "\n</earlier-summary>\n\n")
	}
	b.WriteString("<conversation>\n")
	for _, m := range msgs {
		if b.Len() > summaryInputChars {
			b.WriteString("[… later messages omitted …]\n")
			break
		}
		writeForSummary(&b, m)
	}
	b.WriteString("</conversation>\n")
	return b.String()
}

func writeForSummary(b *strings.Builder, m backend.Message) {
	switch m.Role {
	case backend.RoleTool:
		label := "tool result " + m.ToolCallID
		if m.IsError {
			label += " (error)"
		}
		fmt.Fprintf(b, "[%s]\n%s\n", label, truncateText(m.Text, summaryMessageChars))
	default:
		if m.Text != "" {
			fmt.Fprintf(b, "[%s]\n%s\n", m.Role, truncateText(m.Text, summaryMessageChars))
		}
		for _, c := range m.Calls {
			fmt.Fprintf(b, "[%s calls %s %s]\n%s\n", m.Role, c.Name, c.ID,
				truncateText(string(c.Arguments), summaryMessageChars))
		}
	}
}

// emitCompacted records run.context.compacted (CX6), committed before anyone
// sees it like every event.
func (rc *runCtl) emitCompacted(payload map[string]any) {
	rc.commitLog(func(tx *store.Tx) error {
		_, err := tx.Append(rc.rec.ID, backend.EvContextCompacted, payload)
		return err
	})
}
