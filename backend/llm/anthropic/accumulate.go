package anthropic

import (
	"strings"

	"agenthub/backend/llm"
)

// streamEvent is one Messages stream event, as far as it is read; Type is
// the SSE event name. Thinking, signature and citation deltas decode to
// nothing here: they are not part of llm's vocabulary.
type streamEvent struct {
	Type    string `json:"-"`
	Index   int64  `json:"index"`
	Message struct {
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage `json:"usage"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

type call struct {
	pos      int // position in Response.ToolCalls
	id, name string
	args     strings.Builder
}

// accumulator turns Messages stream events into llm events and a Response.
type accumulator struct {
	h       llm.Handler
	model   string
	text    strings.Builder
	calls   []*call
	byBlock map[int64]*call // content block index → tool call
	stop    string
	done    bool // message_stop seen
	usage   llm.Usage
}

func newAccumulator(model string, h llm.Handler) *accumulator {
	return &accumulator{h: h, model: model, byBlock: map[int64]*call{}}
}

func (a *accumulator) event(ev streamEvent) error {
	switch ev.Type {
	case "message_start":
		if ev.Message.Model != "" {
			a.model = ev.Message.Model
		}
		u := ev.Message.Usage
		a.usage = llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
		return a.emitUsage()
	case "content_block_start":
		if ev.ContentBlock.Type != "tool_use" {
			return nil
		}
		c := &call{pos: len(a.calls), id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
		a.calls = append(a.calls, c)
		a.byBlock[ev.Index] = c
		return a.h(llm.Event{Kind: llm.EventToolStart, Index: c.pos, ID: c.id, Name: c.name})
	case "content_block_delta":
		return a.delta(ev)
	case "content_block_stop":
		c, ok := a.byBlock[ev.Index]
		if !ok {
			return nil
		}
		tc := llm.NewToolCall(c.id, c.name, c.args.String())
		return a.h(llm.Event{Kind: llm.EventToolEnd, Index: c.pos, ID: tc.ID, Name: tc.Name, Call: &tc})
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			a.stop = r
		}
		// message_delta usage is cumulative; input may be restated or zero.
		if ev.Usage.InputTokens > 0 {
			a.usage.InputTokens = ev.Usage.InputTokens
		}
		a.usage.OutputTokens = ev.Usage.OutputTokens
		return a.emitUsage()
	case "message_stop":
		a.done = true
	}
	return nil
}

func (a *accumulator) delta(ev streamEvent) error {
	switch ev.Delta.Type {
	case "text_delta":
		a.text.WriteString(ev.Delta.Text)
		return a.h(llm.Event{Kind: llm.EventText, Text: ev.Delta.Text})
	case "input_json_delta":
		c, ok := a.byBlock[ev.Index]
		if !ok || ev.Delta.PartialJSON == "" {
			return nil
		}
		c.args.WriteString(ev.Delta.PartialJSON)
		return a.h(llm.Event{Kind: llm.EventToolDelta, Index: c.pos, Text: ev.Delta.PartialJSON})
	}
	return nil // thinking and citation deltas are not part of this vocabulary
}

func (a *accumulator) emitUsage() error {
	u := a.usage
	return a.h(llm.Event{Kind: llm.EventUsage, Usage: &u})
}

// result assembles the Response; a stream without message_stop was cut.
func (a *accumulator) result() (llm.Response, error) {
	if !a.done || a.stop == "" {
		return llm.Response{}, &llm.Error{Kind: llm.ErrTruncatedStream, Provider: provider,
			Message: "stream ended before message_stop"}
	}
	r := llm.Response{Model: a.model, Text: a.text.String(), Usage: a.usage, RawStop: a.stop}
	for _, c := range a.calls {
		r.ToolCalls = append(r.ToolCalls, llm.NewToolCall(c.id, c.name, c.args.String()))
	}
	switch a.stop {
	case "end_turn", "stop_sequence":
		r.StopReason = llm.StopEndTurn
	case "tool_use":
		r.StopReason = llm.StopToolUse
	case "max_tokens":
		r.StopReason = llm.StopMaxTokens
	default:
		r.StopReason = llm.StopOther
	}
	return r, nil
}
