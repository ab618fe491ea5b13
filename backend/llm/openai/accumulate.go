package openai

import (
	"encoding/json"
	"strings"

	"agenthub/backend/llm"
)

// chunk is one chat.completion.chunk event, as far as it is read. Usage is
// a pointer: servers send "usage": null on every chunk but the last.
type chunk struct {
	Model   string          `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index int64 `json:"index"`
	Delta struct {
		Content   string          `json:"content"`
		ToolCalls []toolCallDelta `json:"tool_calls"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type toolCallDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// call is a tool call being assembled from deltas.
type call struct {
	id, name string
	args     strings.Builder
	started  bool
}

// accumulator turns chat-completion chunks into llm events and a Response.
// It keeps the per-call deltas and tells a finished stream from a
// truncated one.
type accumulator struct {
	h            llm.Handler
	model        string
	text         strings.Builder
	calls        []*call
	byIdx        map[int64]int // provider index → position in calls
	finishReason string
	usage        llm.Usage
}

func newAccumulator(model string, h llm.Handler) *accumulator {
	return &accumulator{h: h, model: model, byIdx: map[int64]int{}}
}

func (a *accumulator) chunk(ch chunk) error {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Usage != nil {
		a.usage = llm.Usage{
			InputTokens:     ch.Usage.PromptTokens,
			OutputTokens:    ch.Usage.CompletionTokens,
			CacheReadTokens: ch.Usage.PromptTokensDetails.CachedTokens,
		}
		u := a.usage
		if err := a.h(llm.Event{Kind: llm.EventUsage, Usage: &u}); err != nil {
			return err
		}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // n > 1 is never requested
		}
		if d := choice.Delta.Content; d != "" {
			a.text.WriteString(d)
			if err := a.h(llm.Event{Kind: llm.EventText, Text: d}); err != nil {
				return err
			}
		}
		for _, tc := range choice.Delta.ToolCalls {
			if err := a.toolDelta(tc); err != nil {
				return err
			}
		}
		if choice.FinishReason != "" {
			a.finishReason = choice.FinishReason
		}
	}
	return nil
}

func (a *accumulator) toolDelta(tc toolCallDelta) error {
	pos, ok := a.byIdx[tc.Index]
	// Some compatible servers reuse index 0 for every call of a turn; a new
	// id on a slot that already has one starts a new call.
	if !ok || (tc.ID != "" && a.calls[pos].id != "" && a.calls[pos].id != tc.ID) {
		a.calls = append(a.calls, &call{})
		pos = len(a.calls) - 1
		a.byIdx[tc.Index] = pos
	}
	c := a.calls[pos]
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name += tc.Function.Name
	}
	if !c.started && c.name != "" {
		c.started = true
		if err := a.h(llm.Event{Kind: llm.EventToolStart, Index: pos, ID: c.id, Name: c.name}); err != nil {
			return err
		}
	}
	if d := tc.Function.Arguments; d != "" {
		c.args.WriteString(d)
		if err := a.h(llm.Event{Kind: llm.EventToolDelta, Index: pos, Text: d}); err != nil {
			return err
		}
	}
	return nil
}

// result assembles the Response. A stream that ended without a finish
// reason was cut: the calls may be incomplete, so it is an error.
func (a *accumulator) result() (llm.Response, error) {
	if a.finishReason == "" {
		return llm.Response{}, &llm.Error{Kind: llm.ErrTruncatedStream, Provider: provider,
			Message: "stream ended without a finish reason"}
	}
	r := llm.Response{Model: a.model, Text: a.text.String(), Usage: a.usage, RawStop: a.finishReason}
	for i, c := range a.calls {
		tc := llm.NewToolCall(c.id, c.name, c.args.String())
		r.ToolCalls = append(r.ToolCalls, tc)
		if err := a.h(llm.Event{Kind: llm.EventToolEnd, Index: i, ID: tc.ID, Name: tc.Name, Call: &tc}); err != nil {
			return llm.Response{}, err
		}
	}
	switch a.finishReason {
	case "stop":
		r.StopReason = llm.StopEndTurn
	case "tool_calls", "function_call":
		r.StopReason = llm.StopToolUse
	case "length":
		r.StopReason = llm.StopMaxTokens
	default:
		r.StopReason = llm.StopOther
	}
	// Several local servers answer "stop" with tool calls attached.
	if r.StopReason == llm.StopEndTurn && len(r.ToolCalls) > 0 {
		r.StopReason = llm.StopToolUse
	}
	return r, nil
}
