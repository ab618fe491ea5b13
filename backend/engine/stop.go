package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"time"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// stats are the stop-condition statistics, checkpointed with every step (SC4).
type stats struct {
	Steps        int      `json:"steps"`
	InputTokens  int64    `json:"inputTokens"`
	OutputTokens int64    `json:"outputTokens"`
	ActiveMS     int64    `json:"activeMs"`
	FailedSteps  int      `json:"consecutiveFailedSteps"`
	CallPrints   []string `json:"callPrints"`
	Texts        []string `json:"texts"`
}

const historyCap = 64

func pushCapped(h []string, v string) []string {
	h = append(h, v)
	if len(h) > historyCap {
		h = h[len(h)-historyCap:]
	}
	return h
}

// fingerprint is tool name + SHA-256 of the canonical JSON arguments (SC6).
func fingerprint(c backend.ToolCallRequest) string {
	b, err := canon.Transform(c.Arguments)
	if err != nil {
		b = c.Arguments
	}
	sum := sha256.Sum256(b)
	return c.Name + ":" + hex.EncodeToString(sum[:])
}

// stepOutcome is what one finished step contributes to the statistics.
type stepOutcome struct {
	text     string
	executed []backend.ToolCallRequest
	failed   bool
	tools    []string
}

func (s *stats) record(o stepOutcome) {
	s.Steps++
	if o.failed {
		s.FailedSteps++
	} else {
		s.FailedSteps = 0
	}
	for _, c := range o.executed {
		s.CallPrints = pushCapped(s.CallPrints, fingerprint(c))
	}
	if o.text != "" {
		s.Texts = pushCapped(s.Texts, o.text)
	}
}

func lastEqual(h []string, window int) bool {
	if window < 2 || len(h) < window {
		return false
	}
	tail := h[len(h)-window:]
	for _, v := range tail[1:] {
		if v != tail[0] {
			return false
		}
	}
	return true
}

// evaluate returns the code of the first firing condition, in order (SC3).
func (c StopConfig) evaluate(s stats, o stepOutcome) string {
	switch {
	case c.MaxRounds > 0 && s.Steps >= c.MaxRounds:
		return "max_rounds"
	case c.Timeout > 0 && time.Duration(s.ActiveMS)*time.Millisecond > c.Timeout:
		return "timeout"
	case c.TokenBudget > 0 && s.InputTokens+s.OutputTokens > c.TokenBudget:
		return "token_budget"
	case c.ConsecutiveErrors > 0 && s.FailedSteps >= c.ConsecutiveErrors:
		return "consecutive_errors"
	case c.StopOnTool != "" && contains(o.tools, c.StopOnTool):
		return "stop_on_tool"
	case c.ContentMatch != "" && regexp.MustCompile(c.ContentMatch).MatchString(o.text):
		return "content_match"
	case lastEqual(s.CallPrints, c.LoopWindow) || lastEqual(s.Texts, c.LoopWindow):
		return "loop_detection"
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
