package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/approval"
	"agenthub/backend/runtime/sessions"
	"agenthub/backend/scrub"
)

// permission is one session/request_permission, proxied to the engine as a
// call. Its answer goes back to the SDK handler waiting on it.
type permission struct {
	callID   string
	req      sdk.RequestPermissionRequest // as the agent sent it: absolute paths
	answer   chan sdk.RequestPermissionOutcome
	sent     bool // handed to the engine as a call
	answered bool
	s        *session
}

// newPermission registers a request and queues it for Stream.
func (s *session) newPermission(req sdk.RequestPermissionRequest) *permission {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.reqSeq++
	p := &permission{callID: fmt.Sprintf("acp-%s-perm-%d", s.ID, s.reqSeq), req: req,
		answer: make(chan sdk.RequestPermissionOutcome, 1), s: s}
	s.perms[p.callID] = p
	live.AddCall(p.callID, s)
	if s.closing {
		p.answered = true
		p.answer <- sdk.NewRequestPermissionOutcomeCancelled()
		return p
	}
	s.Push(item{kind: itemPermission, perm: p})
	return p
}

// respond sends the one answer a request gets.
func (p *permission) respond(out sdk.RequestPermissionOutcome) error {
	p.s.Mu.Lock()
	defer p.s.Mu.Unlock()
	if p.answered {
		return errors.New("this permission request was already answered")
	}
	p.answered = true
	p.answer <- out
	return nil
}

// cancel answers "cancelled" (a stop, or the agent withdrew the request).
func (p *permission) cancel() { _ = p.respond(sdk.NewRequestPermissionOutcomeCancelled()) }

// allowOption picks the option that allows this call once. An "always"
// option is chosen only when the reviewer granted the run or the workspace
// and the agent offers nothing once-scoped (AP14); AgentHub keeps grants
// itself.
func allowOption(opts []sdk.PermissionOption, decision backend.DecisionKind) (sdk.PermissionOptionId, bool) {
	for _, o := range opts {
		if o.Kind == sdk.PermissionOptionKindAllowOnce {
			return o.OptionId, true
		}
	}
	if decision == backend.ApproveForRun || decision == backend.AlwaysAllowWorkspace {
		for _, o := range opts {
			if o.Kind == sdk.PermissionOptionKindAllowAlways {
				return o.OptionId, true
			}
		}
	}
	return "", false
}

// rejectOutcome rejects once, or cancels when the agent offers no
// once-scoped reject: never reject_always, which would outlive this call.
func rejectOutcome(opts []sdk.PermissionOption) sdk.RequestPermissionOutcome {
	for _, o := range opts {
		if o.Kind == sdk.PermissionOptionKindRejectOnce {
			return sdk.NewRequestPermissionOutcomeSelected(o.OptionId)
		}
	}
	return sdk.NewRequestPermissionOutcomeCancelled()
}

// permArgs are a permission call's arguments, recorded in events: paths
// are workspace-relative; a path outside the workspace is never recorded,
// Outside says there was one.
type permArgs struct {
	Session    string    `json:"session"`
	Request    string    `json:"request"`
	ToolCallID string    `json:"toolCallId"`
	Kind       string    `json:"kind"`
	Title      string    `json:"title"`
	Text       string    `json:"text,omitempty"`
	Paths      []string  `json:"paths,omitempty"`
	Diffs      []diffArg `json:"diffs,omitempty"`
	Outside    bool      `json:"outside,omitempty"`
	Options    []string  `json:"options"` // the option kinds the agent offered
}

// diffArg is one file change of a permission request: the whole new text.
type diffArg struct {
	Path    string `json:"path"`
	NewText string `json:"newText"`
	Delete  bool   `json:"delete,omitempty"`
}

// proxyName is the proxy tool of an ACP tool kind.
func proxyName(kind string) string {
	switch sdk.ToolKind(kind) {
	case sdk.ToolKindEdit, sdk.ToolKindDelete, sdk.ToolKindMove:
		return ToolEdit
	case sdk.ToolKindExecute:
		return ToolExecute
	case sdk.ToolKindFetch:
		return ToolFetch
	case sdk.ToolKindRead, sdk.ToolKindSearch:
		return ToolRead
	}
	return ToolOther
}

// proxyCall turns a permission request into the engine's call.
func (s *session) proxyCall(p *permission) (backend.ToolCallRequest, error) {
	tc := p.req.ToolCall
	a := permArgs{Session: s.ID, Request: p.callID, ToolCallID: string(tc.ToolCallId)}
	if tc.Kind != nil {
		a.Kind = string(*tc.Kind)
	}
	if tc.Title != nil {
		a.Title = scrub.Clip(s.Scrub(*tc.Title), 2000)
	}
	a.Text = scrub.Clip(s.contentText(tc.Content), 4000)
	for _, l := range tc.Locations {
		if rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, l.Path); ok {
			a.Paths = append(a.Paths, rel)
		} else {
			a.Outside = true
		}
	}
	for _, c := range tc.Content {
		if c.Diff == nil {
			continue
		}
		rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, c.Diff.Path)
		if !ok {
			a.Outside = true
			continue
		}
		del := c.Diff.NewText == "" && c.Diff.Meta["kind"] == "delete"
		a.Diffs = append(a.Diffs, diffArg{Path: rel, NewText: c.Diff.NewText, Delete: del})
	}
	for _, o := range p.req.Options {
		a.Options = append(a.Options, string(o.Kind))
	}
	args, err := json.Marshal(a)
	if err != nil {
		return backend.ToolCallRequest{}, fmt.Errorf("encode a permission call: %w", err)
	}
	return backend.ToolCallRequest{ID: p.callID, Name: proxyName(a.Kind), Arguments: args}, nil
}

// permTool proxies one class of permission requests.
type permTool struct{ name string }

func (t permTool) Spec() backend.ToolSpec {
	what := map[string]string{
		ToolEdit:    "A file change the ACP agent asked to make, shown as a staged patch.",
		ToolExecute: "A command the ACP agent asked to run, shown as a shell approval.",
		ToolFetch:   "A fetch the ACP agent asked to make, shown as a network approval.",
		ToolRead:    "A read or search the ACP agent asked to make.",
		ToolOther:   "Another action the ACP agent asked permission for.",
	}[t.name]
	return spec(t.name, what)
}

func decodePerm(raw json.RawMessage) (permArgs, error) {
	var a permArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" || a.Request == "" {
		return a, errors.New("not an ACP permission request")
	}
	return a, nil
}

// outsideError refuses a path outside the workspace (AP3): the call fails,
// the agent is told no, the run goes on.
func outsideError(a permArgs) error {
	return &backend.Error{Code: backend.FailOutsideAllowlist,
		Message: fmt.Sprintf("%s: a path is outside the workspace; only paths inside it can be used", scrub.Clip(a.Title, 80))}
}

// Action describes the request for the gate from its arguments alone, so
// the engine can check it again right before it executes.
func (t permTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodePerm(raw)
	if err != nil {
		return nil, err
	}
	if a.Outside {
		return nil, outsideError(a)
	}
	switch t.name {
	case ToolEdit:
		return editAction(env, a)
	case ToolExecute:
		return shellAction(env, a)
	case ToolFetch:
		return fetchAction(a)
	case ToolRead:
		return readAction(env, a)
	}
	return otherAction(a)
}

// shellAction is a command the agent will run itself after approval.
// Gemini CLI puts the command line in the title.
func shellAction(env backend.ToolEnv, a permArgs) (*backend.GatedAction, error) {
	command := a.Title
	preview, err := json.Marshal(map[string]any{"command": command, "description": a.Text, "shell": "the agent's own shell tool",
		"cwd": ".", "runtime": "acp", "toolCallId": a.ToolCallID})
	if err != nil {
		return nil, err
	}
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionShell), "command": command, "cwd": "."})
	risk := approval.RiskOf(approval.Action{Kind: backend.ActionShell, Command: command},
		backend.PolicyResult{Kind: backend.ActionShell})
	return &backend.GatedAction{Kind: backend.ActionShell, Title: "Run: " + scrub.FirstLine(command, 80), Risk: risk,
		Preview: []byte(scrub.Paths(env.WorkspaceRoot, string(preview))), Subject: subject}, nil
}

var urlRE = regexp.MustCompile(`https?://[^\s"'<>)]+`)

// fetchAction is a network access; the URL is the first one the request
// names, else its title.
func fetchAction(a permArgs) (*backend.GatedAction, error) {
	url := urlRE.FindString(a.Title + "\n" + a.Text)
	if url == "" {
		url = "acp-fetch:" + a.Title
	}
	preview, _ := json.Marshal(map[string]any{"title": a.Title, "text": a.Text, "url": url, "runtime": "acp"})
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionNetwork), "method": "GET", "url": url})
	return &backend.GatedAction{Kind: backend.ActionNetwork, Title: scrub.Clip("Fetch "+url, 120), Risk: backend.RiskMedium,
		Preview: preview, Subject: subject}, nil
}

// readAction is a read or search of workspace paths.
func readAction(env backend.ToolEnv, a permArgs) (*backend.GatedAction, error) {
	p := "."
	if len(a.Paths) > 0 {
		p = a.Paths[0]
	}
	for _, x := range a.Paths {
		if ok, pat := agentpath.Secret(env.WorkspaceRoot, x); ok {
			return agentpath.SecretAccess{Label: ToolRead, Tool: ToolRead, Path: x, Pattern: pat}.Action(), nil
		}
	}
	preview, _ := json.Marshal(map[string]any{"title": a.Title, "paths": a.Paths, "kind": a.Kind, "runtime": "acp"})
	subject, _ := json.Marshal(map[string]any{"kind": string(backend.ActionRead), "tool": ToolRead, "path": p,
		"paths": a.Paths})
	return &backend.GatedAction{Kind: backend.ActionRead, Title: scrub.Clip("Read "+p, 120), Risk: backend.RiskLow,
		Preview: []byte(scrub.Paths(env.WorkspaceRoot, string(preview))), Subject: subject}, nil
}

// otherAction asks for anything AgentHub has no class for, as a command of
// high risk bound to the whole request.
func otherAction(a permArgs) (*backend.GatedAction, error) {
	command := "acp-agent " + a.Kind + ": " + a.Title
	preview, _ := json.Marshal(map[string]any{"kind": a.Kind, "title": a.Title, "text": a.Text, "paths": a.Paths,
		"runtime": "acp", "note": "an action of the ACP agent AgentHub has no action class for"})
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionShell), "command": command, "cwd": "."})
	return &backend.GatedAction{Kind: backend.ActionShell, Title: scrub.Clip("ACP agent: "+a.Title, 120),
		Risk: backend.RiskHigh, Preview: preview, Subject: subject}, nil
}

// lookupPerm finds the live session and request a call stands for.
func lookupPerm(raw json.RawMessage) (*session, *permission, permArgs, error) {
	a, err := decodePerm(raw)
	if err != nil {
		return nil, nil, a, err
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return nil, nil, a, errGone
	}
	s.Mu.Lock()
	p, ok := s.perms[a.Request]
	s.Mu.Unlock()
	if !ok {
		return s, nil, a, errors.New("the agent made no such request")
	}
	return s, p, a, nil
}

// decisionOf reads the reviewer's decision kind from the resume input;
// none (a policy allow) counts as once.
func decisionOf(resume json.RawMessage) backend.DecisionKind {
	var d struct {
		Decision backend.DecisionKind `json:"decision"`
	}
	_ = json.Unmarshal(resume, &d)
	if d.Decision == "" {
		return backend.ApproveOnce
	}
	return d.Decision
}

// Execute runs only after approval: it answers the agent with the allow
// option (for an edit, after recording exactly what was approved), waits
// for the agent to finish the tool call and reports its outcome.
func (t permTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	s, p, a, err := lookupPerm(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", t.name, err), nil
	}
	var plans []*plan
	var res *backend.ToolResult
	if t.name == ToolEdit && len(a.Diffs) > 0 {
		if plans, res = s.planEdit(env, p, a, in.ResumeInput); res != nil {
			return *res, nil
		}
	}
	opt, ok := allowOption(p.req.Options, decisionOf(in.ResumeInput))
	if !ok {
		s.forget(plans)
		_ = p.respond(rejectOutcome(p.req.Options))
		return scrub.Failure(env.WorkspaceRoot, "%s: the agent offered no once-scoped allow option, so AgentHub answered no", t.name), nil
	}
	if err := p.respond(sdk.NewRequestPermissionOutcomeSelected(opt)); err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", t.name, err), nil
	}
	status, text, err := s.waitCall(ctx, a.ToolCallID)
	if err != nil && ctx.Err() != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", t.name, err)
	}
	if t.name == ToolEdit && len(plans) > 0 {
		return s.editOutcome(env, plans, status, text), nil
	}
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", t.name, err), nil
	}
	out := fmt.Sprintf("%s: the agent's tool call %s", t.name, status)
	if text != "" {
		out += ":\n" + scrub.Clip(text, maxResult)
	}
	return backend.ToolResult{Content: out, IsError: status == sdk.ToolCallStatusFailed}, nil
}

// maxResult caps the tool output given back to the engine.
const maxResult = 64 << 10

// waitCall waits until the agent reports the tool call completed or
// failed, and returns its status and content.
func (s *session) waitCall(ctx context.Context, id string) (sdk.ToolCallStatus, string, error) {
	for {
		s.Mu.Lock()
		c := s.calls[id]
		exited, ended, wait := s.Exited, s.ended, s.Changed
		var status sdk.ToolCallStatus
		var text string
		var cw <-chan struct{}
		if c != nil {
			status, text, cw = c.status, c.text, c.changed
		}
		s.Mu.Unlock()
		switch {
		case status == sdk.ToolCallStatusCompleted || status == sdk.ToolCallStatusFailed:
			return status, text, nil
		case exited:
			return "", "", errors.New("the agent exited before it finished the tool call")
		case ended:
			return "", "", errors.New("the agent ended its turn without finishing the tool call")
		}
		if cw == nil {
			cw = wait
		}
		select {
		case <-cw:
		case <-wait:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
}

// settle answers the requests the engine decided without executing the
// call: a rejection, a policy denial, a refused path or an approval that
// drifted. The agent is told no; the transcript's tool message says why.
func (s *session) settle(msgs []backend.Message) {
	told := sessions.Replies(msgs)
	s.settleTerminals(told)
	s.Mu.Lock()
	var perms []*permission
	var writes []*writeReq
	for _, p := range s.perms {
		if p.sent && !p.answered {
			perms = append(perms, p)
		}
	}
	for _, w := range s.writes {
		if w.sent && !w.answered {
			writes = append(writes, w)
		}
	}
	s.Mu.Unlock()
	for _, p := range perms {
		_ = p.respond(rejectOutcome(p.req.Options))
	}
	for _, w := range writes {
		why := told[w.callID]
		if why == "" {
			why = "AgentHub did not run this write."
		}
		w.respond(refused("nothing was written: %s", scrub.Clip(why, 500)))
	}
}
