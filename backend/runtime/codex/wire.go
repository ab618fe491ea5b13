package codex

import (
	"bytes"
	"encoding/json"
	"fmt"

	"agenthub/backend/scrub"
)

// kind is what one stdout line of `codex app-server` (JSON-RPC 2.0 without
// the "jsonrpc" field, one message per line) means to the adapter.
type kind int

const (
	kindIgnored       kind = iota // a known notification the adapter does not need
	kindResponse                  // the answer to one of AgentHub's requests
	kindRequest                   // a request from Codex (approvals and others)
	kindDelta                     // item/agentMessage/delta
	kindItemStarted               // item/started
	kindItemCompleted             // item/completed
	kindTurnCompleted             // turn/completed
	kindError                     // the error notification
	kindUsage                     // thread/tokenUsage/updated
	kindInvalid                   // not JSON, or a known message that lacks its fields
	kindUnknown                   // a message of a method this adapter does not know
)

// line is one parsed stdout line. Only the fields of its kind are set.
type line struct {
	Kind    kind
	Problem string // kindInvalid, kindUnknown: why

	ID     json.RawMessage // kindResponse, kindRequest
	Method string          // kindRequest and notifications
	Params json.RawMessage // kindRequest
	Result json.RawMessage // kindResponse
	Error  *rpcError       // kindResponse

	Delta string      // kindDelta
	Item  threadItem  // kindItemStarted, kindItemCompleted
	Turn  turn        // kindTurnCompleted
	Fail  turnError   // kindError
	Usage tokenTotals // kindUsage
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// envelope is any JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// threadItem is the part of an item the adapter reads: agent messages,
// command executions and file changes. Paths are absolute.
type threadItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Text    string       `json:"text"`
	Command string       `json:"command"`
	Cwd     string       `json:"cwd"`
	Status  string       `json:"status"`
	Output  *string      `json:"aggregatedOutput"`
	Exit    *int         `json:"exitCode"`
	Changes []fileChange `json:"changes"`
	// Source is "rollout" for an item read from the session's rollout
	// file rather than the CLI's output (advisory gating).
	Source string `json:"-"`
}

// fileChange is one file of a fileChange item. Diff is the new content of
// an added file, the old content of a deleted one, and hunks ("@@ … @@"
// and their lines, no file headers) of an updated one, followed by
// "\n\nMoved to: <path>" when it also moves.
type fileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type     string  `json:"type"` // add | delete | update
		MovePath *string `json:"move_path"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

type turn struct {
	ID     string     `json:"id"`
	Status string     `json:"status"` // completed | interrupted | failed | inProgress
	Error  *turnError `json:"error"`
}

type turnError struct {
	Message string          `json:"message"`
	Info    json.RawMessage `json:"codexErrorInfo"`
}

// httpStatus is the HTTP status of a failed model request, or 0.
func (e turnError) httpStatus() int {
	var info struct {
		HTTP struct {
			Status int `json:"httpStatusCode"`
		} `json:"httpConnectionFailed"`
		Response struct {
			Status int `json:"httpStatusCode"`
		} `json:"responseStreamConnectionFailed"`
	}
	if json.Unmarshal(e.Info, &info) != nil {
		return 0
	}
	return max(info.HTTP.Status, info.Response.Status)
}

// code is the codexErrorInfo when it is a plain string (e.g.
// "unauthorized", "internalServerError").
func (e turnError) code() string {
	var s string
	_ = json.Unmarshal(e.Info, &s)
	return s
}

type tokenTotals struct {
	Input  int64 `json:"inputTokens"`
	Cached int64 `json:"cachedInputTokens"`
	Output int64 `json:"outputTokens"`
}

// known lists the notification methods of 0.169.0 (its generated schema)
// the adapter reads nothing from; they are kept in the raw output only.
var known = map[string]bool{
	"thread/started": true, "thread/status/changed": true, "thread/readState/changed": true,
	"thread/archived": true, "thread/deleted": true, "thread/unarchived": true, "thread/closed": true,
	"thread/reverted": true, "skills/changed": true, "thread/name/updated": true,
	"thread/section/changed": true, "thread/attachment/updated": true, "thread/goal/updated": true,
	"thread/prediction/updated": true, "thread/goal/cleared": true, "thread/queue/changed": true,
	"project/changed": true, "thread/project/updated": true, "thread/environment/connected": true,
	"thread/environment/disconnected": true, "thread/settings/updated": true, "turn/started": true,
	"hook/started": true, "hook/completed": true, "turn/diff/updated": true, "turn/plan/updated": true,
	"item/autoApprovalReview/started": true, "item/autoApprovalReview/completed": true,
	"autoApprovalReview/strictReviewRequired": true, "item/plan/delta": true,
	"command/exec/outputDelta": true, "process/outputDelta": true, "process/exited": true,
	"item/commandExecution/outputDelta": true, "item/commandExecution/terminalInteraction": true,
	"item/fileChange/outputDelta": true, "item/fileChange/patchUpdated": true,
	"serverRequest/resolved": true, "item/mcpToolCall/progress": true,
	"mcpServer/oauthLogin/completed": true, "mcpServer/startupStatus/updated": true,
	"mcpServer/event/stream/notification": true, "account/updated": true,
	"account/gatewayOAuth/changed": true, "account/rateLimits/updated": true, "app/list/updated": true,
	"remoteControl/status/changed": true, "externalAgentConfig/import/progress": true,
	"externalAgentConfig/import/completed": true, "fs/changed": true,
	"item/reasoning/summaryTextDelta": true, "item/reasoning/summaryPartAdded": true,
	"item/reasoning/textDelta": true, "thread/compacted": true, "model/rerouted": true,
	"model/verification": true, "modelProvider/authRecoveryStarted": true,
	"modelProvider/authRecoveryCompleted": true, "turn/moderationMetadata": true,
	"model/safetyBuffering/updated": true, "warning": true, "guardianWarning": true,
	"deprecationNotice": true, "configWarning": true, "fuzzyFileSearch/sessionUpdated": true,
	"fuzzyFileSearch/sessionCompleted": true, "thread/realtime/started": true,
	"thread/realtime/itemAdded": true, "thread/realtime/item/started": true,
	"thread/realtime/item/transcript/delta": true, "thread/realtime/item/completed": true,
	"thread/realtime/transcript/delta": true, "thread/realtime/transcript/done": true,
	"thread/realtime/outputAudio/delta": true, "thread/realtime/sdp": true, "thread/realtime/error": true,
	"thread/realtime/closed": true, "windows/worldWritableWarning": true,
	"windowsSandbox/setupCompleted": true, "account/login/completed": true,
}

// knownItems are the item types of 0.169.0; the adapter acts on
// agentMessage, commandExecution and fileChange.
var knownItems = map[string]bool{
	"userMessage": true, "hookPrompt": true, "agentMessage": true, "functionCallOutput": true, "plan": true,
	"reasoning": true, "commandExecution": true, "fileChange": true, "mcpToolCall": true,
	"dynamicToolCall": true, "collabAgentToolCall": true, "subAgentActivity": true, "webSearch": true,
	"imageView": true, "sleep": true, "imageGeneration": true, "enteredReviewMode": true,
	"exitedReviewMode": true, "contextCompaction": true,
}

// parseLine classifies one stdout line. It never fails: what it cannot use
// comes back as kindInvalid or kindUnknown with the reason.
func parseLine(b []byte) line {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return line{Kind: kindIgnored}
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return invalid("not a JSON object: %v", err)
	}
	hasID := len(env.ID) > 0 && !bytes.Equal(env.ID, []byte("null"))
	switch {
	case hasID && env.Method != "":
		return line{Kind: kindRequest, ID: env.ID, Method: env.Method, Params: env.Params}
	case hasID && (env.Result != nil || env.Error != nil):
		return line{Kind: kindResponse, ID: env.ID, Result: env.Result, Error: env.Error}
	case hasID:
		return invalid("a response without result or error")
	case env.Method == "":
		return invalid("a message without method or id")
	}
	return parseNotification(env)
}

func parseNotification(env envelope) line {
	l := line{Method: env.Method}
	switch env.Method {
	case "item/agentMessage/delta":
		var p struct {
			Delta *string `json:"delta"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.Delta == nil {
			return invalid("%s without delta", env.Method)
		}
		l.Kind, l.Delta = kindDelta, *p.Delta
	case "item/started", "item/completed":
		return parseItem(env)
	case "turn/completed":
		var p struct {
			Turn *turn `json:"turn"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.Turn == nil || p.Turn.Status == "" {
			return invalid("turn/completed without a turn status")
		}
		l.Kind, l.Turn = kindTurnCompleted, *p.Turn
	case "error":
		var p struct {
			Error     *turnError `json:"error"`
			WillRetry bool       `json:"willRetry"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.Error == nil {
			return invalid("error without an error object")
		}
		if p.WillRetry {
			return line{Kind: kindIgnored, Method: env.Method}
		}
		l.Kind, l.Fail = kindError, *p.Error
	case "thread/tokenUsage/updated":
		var p struct {
			Usage struct {
				Total *tokenTotals `json:"total"`
			} `json:"tokenUsage"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.Usage.Total == nil {
			return invalid("thread/tokenUsage/updated without totals")
		}
		l.Kind, l.Usage = kindUsage, *p.Usage.Total
	default:
		if known[env.Method] {
			l.Kind = kindIgnored
			return l
		}
		return line{Kind: kindUnknown, Method: env.Method,
			Problem: fmt.Sprintf("unknown notification %q", scrub.Clip(env.Method, 60))}
	}
	return l
}

func parseItem(env envelope) line {
	var p struct {
		Item *threadItem `json:"item"`
	}
	if err := json.Unmarshal(env.Params, &p); err != nil || p.Item == nil {
		return invalid("%s without an item object", env.Method)
	}
	it := *p.Item
	switch {
	case it.Type == "" || it.ID == "":
		return invalid("%s: an item without type or id", env.Method)
	case !knownItems[it.Type]:
		return line{Kind: kindUnknown, Method: env.Method,
			Problem: fmt.Sprintf("%s: unknown item type %q", env.Method, scrub.Clip(it.Type, 40))}
	case it.Type == "fileChange":
		for _, c := range it.Changes {
			if c.Path == "" || (c.Kind.Type != "add" && c.Kind.Type != "delete" && c.Kind.Type != "update") {
				return invalid("%s: a file change without path or with kind %q", env.Method, scrub.Clip(c.Kind.Type, 20))
			}
		}
	}
	k := kindItemStarted
	if env.Method == "item/completed" {
		k = kindItemCompleted
	}
	return line{Kind: k, Method: env.Method, Item: it}
}

func invalid(format string, args ...any) line {
	return line{Kind: kindInvalid, Problem: fmt.Sprintf(format, args...)}
}

// commandApproval is the params of item/commandExecution/requestApproval.
type commandApproval struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	ItemID   string          `json:"itemId"`
	Command  string          `json:"command"`
	Cwd      string          `json:"cwd"`
	Reason   *string         `json:"reason"`
	Actions  []commandAction `json:"commandActions"`
	Network  json.RawMessage `json:"networkApprovalContext"`
}

type commandAction struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Path    string `json:"path,omitempty"`
}

// escalated reports whether Codex asks to run the command outside its
// sandbox (sandbox_permissions "require_escalated", which carries a
// justification as the reason) or with network access.
func (a commandApproval) escalated() bool {
	return (a.Reason != nil && *a.Reason != "") ||
		(len(a.Network) > 0 && !bytes.Equal(a.Network, []byte("null")))
}

// fileApproval is the params of item/fileChange/requestApproval. It
// carries no diff: the item it names was started earlier, with its changes.
type fileApproval struct {
	ThreadID  string  `json:"threadId"`
	TurnID    string  `json:"turnId"`
	ItemID    string  `json:"itemId"`
	Reason    *string `json:"reason"`
	GrantRoot *string `json:"grantRoot"`
}

// Approval request methods of 0.169.0 the adapter serves.
const (
	methodCommandApproval = "item/commandExecution/requestApproval"
	methodFileApproval    = "item/fileChange/requestApproval"
)
