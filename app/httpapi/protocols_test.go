package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// protoPost posts body to path and reads the SSE data messages until stop
// says so or the stream ends; a response that is not a stream is returned
// as its status and body.
func (f *fixture) protoPost(t *testing.T, path, body string, stop func(map[string]any) bool) (int, http.Header, []map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", f.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return resp.StatusCode, resp.Header, nil, b.String()
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("bad message %q: %v", data, err)
		}
		out = append(out, m)
		if stop(m) {
			break
		}
	}
	return resp.StatusCode, resp.Header, out, ""
}

func tourWorkspace(t *testing.T, f *fixture) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil || ws.ID == "" {
		t.Fatalf("add workspace: %s", body)
	}
	return dir, ws.ID
}

func isType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// TestAGUIStaleResumeExecutesNothing is the attack on the AG-UI resume: an
// answer carrying a hash other than the pending one is refused with
// approval_stale before anything is delivered; the patch is not written and
// the approval stays pending. The right hash then applies it, and the
// resumed stream carries what the decision caused (it was attached first).
func TestAGUIStaleResumeExecutesNothing(t *testing.T) {
	f := startReal(t)
	dir, ws := tourWorkspace(t, f)
	input := `{"threadId":"th","runId":"r1","messages":[{"id":"u","role":"user","content":"tour"}],"forwardedProps":{"agenthub":{"workspaceId":%q}}}`
	status, _, evs, body := f.protoPost(t, "/agui", fmt.Sprintf(input, ws), isType("RUN_FINISHED"))
	if status != 200 || len(evs) == 0 || evs[0]["type"] != "RUN_STARTED" {
		t.Fatalf("start: %d %s %v", status, body, evs)
	}
	fin := evs[len(evs)-1]
	outcome, _ := fin["outcome"].(map[string]any)
	if fin["type"] != "RUN_FINISHED" || outcome["type"] != "interrupt" {
		t.Fatalf("first stream ended with %v", fin)
	}
	intr := outcome["interrupts"].([]any)[0].(map[string]any)
	id := intr["id"].(string)
	hash := intr["metadata"].(map[string]any)["agenthub"].(map[string]any)["subjectHash"].(string)

	resume := `{"threadId":"th","runId":"r2","messages":[],"resume":[{"interruptId":%q,"status":"resolved","payload":{"decision":"approve_once","subjectHash":%q}}]}`
	for _, bad := range []string{"sha256:" + strings.Repeat("0", 64), ""} {
		status, _, _, body := f.protoPost(t, "/agui", fmt.Sprintf(resume, id, bad), isType("RUN_FINISHED"))
		if status < 400 || !strings.Contains(body, map[bool]string{true: "approval_stale", false: "invalid_input"}[bad != ""]) {
			t.Errorf("resume with hash %q: %d %s", bad, status, body)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused answer wrote the patch: %v", err)
	}
	if _, body, _ := f.do(t, "GET", "/api/approvals", "", f.auth()); !strings.Contains(body, id) {
		t.Fatalf("the approval is not pending after the refused answers: %s", body)
	}
	status, _, _, body = f.protoPost(t, "/agui", fmt.Sprintf(resume, "apr_nope", hash), isType("RUN_FINISHED"))
	if status != 409 || !strings.Contains(body, "approval_already_resolved") {
		t.Errorf("an unknown interrupt: %d %s", status, body)
	}

	status, _, evs, body = f.protoPost(t, "/agui", fmt.Sprintf(resume, id, hash), isType("RUN_FINISHED"))
	if status != 200 {
		t.Fatalf("resume: %d %s", status, body)
	}
	var names []string
	for _, e := range evs {
		names = append(names, fmt.Sprint(e["type"], e["name"]))
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"CUSTOMagenthub.run.approval.resolved", "CUSTOMagenthub.run.patch.applied", "TOOL_CALL_RESULT"} {
		if !strings.Contains(got, want) {
			t.Errorf("the resumed stream lacks %s: %s", want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); err != nil {
		t.Errorf("the approved patch was not written: %v", err)
	}
}

// TestAISDKStreamSuspendsAndRefusesStaleTokens: the response is a UI
// message stream (its header), it suspends at the approval with finish
// tool-calls, and an approval response whose token carries another hash is
// refused without effect.
func TestAISDKStreamSuspendsAndRefusesStaleTokens(t *testing.T) {
	f := startReal(t)
	dir, ws := tourWorkspace(t, f)
	body := fmt.Sprintf(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"tour"}]}],"agenthub":{"workspaceId":%q}}`, ws)
	status, hdr, chunks, text := f.protoPost(t, "/aisdk/chat", body, isType("finish"))
	if status != 200 || hdr.Get("x-vercel-ai-ui-message-stream") != "v1" {
		t.Fatalf("%d %v %s", status, hdr, text)
	}
	last := chunks[len(chunks)-1]
	if last["type"] != "finish" || last["finishReason"] != "tool-calls" {
		t.Fatalf("the response ended with %v", last)
	}
	var req map[string]any
	for _, c := range chunks {
		if c["type"] == "tool-approval-request" {
			req = c
		}
	}
	meta, _ := json.Marshal(last["messageMetadata"])
	token := req["approvalId"].(string)
	stale := token[:strings.Index(token, "#")+1] + "sha256:" + strings.Repeat("f", 64)
	cont := `{"id":"c","messages":[{"id":"a","role":"assistant","metadata":%s,"parts":[{"type":"dynamic-tool","toolName":"write_file","toolCallId":%q,"state":"approval-responded","input":{},"approval":{"id":%q,"approved":true}}]}]}`
	status, _, _, text = f.protoPost(t, "/aisdk/chat", fmt.Sprintf(cont, meta, req["toolCallId"], stale), isType("finish"))
	if status != 409 || !strings.Contains(text, "approval_stale") {
		t.Errorf("a stale token: %d %s", status, text)
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused answer wrote the patch: %v", err)
	}
	status, _, chunks, text = f.protoPost(t, "/aisdk/chat", fmt.Sprintf(cont, meta, req["toolCallId"], token), isType("finish"))
	if status != 200 {
		t.Fatalf("approve: %d %s", status, text)
	}
	found := false
	for _, c := range chunks {
		found = found || (c["type"] == "tool-output-available" && c["toolCallId"] == req["toolCallId"])
	}
	if !found {
		t.Errorf("the continued response lacks the tool's output: %v", chunks)
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); err != nil {
		t.Errorf("the approved patch was not written: %v", err)
	}
}

// gappySource drops the events from..to of every run stream and sends a
// system.gap for them instead, as a subscriber that overflowed is told
// (EV10).
type gappySource struct {
	inner    EventSource
	from, to int64
}

func (g gappySource) Subscribe(ctx context.Context, runID string, after int64) (<-chan backend.Event, error) {
	in, err := g.inner.Subscribe(ctx, runID, after)
	if err != nil {
		return nil, err
	}
	out := make(chan backend.Event)
	go func() {
		defer close(out)
		skipped := false
		for ev := range in {
			if runID != "" && ev.Sequence >= g.from && ev.Sequence <= g.to {
				skipped = true // dropped, as an overflowing queue drops
				continue
			}
			if skipped {
				// The gap item reaches the subscriber after the events it
				// stands for were committed, before the next one.
				skipped = false
				payload, _ := json.Marshal(backend.Gap{RunID: runID, FromSequence: g.from, ToSequence: g.to, Reason: "subscriber_overflow"})
				select {
				case out <- backend.Event{Type: backend.EvSystemGap, RunID: runID, Payload: payload}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// TestAGUIStreamRereadsAGap: events a gap says were dropped are read from
// the store, so the AG-UI stream still carries every event once.
func TestAGUIStreamRereadsAGap(t *testing.T) {
	core, err := api.Open(t.Context(), api.Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	f := serve(t, New(core, fstest.MapFS{}, gappySource{inner: core, from: 3, to: 8}, NewToken()))
	_, ws := tourWorkspace(t, f)
	input := `{"threadId":"th","runId":"r1","messages":[{"id":"u","role":"user","content":"tour"}],"forwardedProps":{"agenthub":{"workspaceId":%q}}}`
	status, _, evs, body := f.protoPost(t, "/agui", fmt.Sprintf(input, ws), isType("RUN_FINISHED"))
	if status != 200 || len(evs) == 0 || evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("%d %s %v", status, body, evs)
	}
	seen := map[int64]int{}
	var last int64
	for _, e := range evs {
		meta, _ := e["metadata"].(map[string]any)
		hub, _ := meta["agenthub"].(map[string]any)
		if seq, ok := hub["sequence"].(float64); ok && e["type"] != "RUN_FINISHED" && e["type"] != "STEP_FINISHED" {
			if int64(seq) != last {
				seen[int64(seq)]++
			}
			last = int64(seq)
		}
	}
	for seq := int64(1); seq <= last; seq++ {
		if seen[seq] != 1 {
			t.Errorf("event %d carried %d times (events %v)", seq, seen[seq], seen)
		}
	}
}

// TestReattachPastTheLastEventEnds is the attack on a reattach from a
// cursor after everything the run will say until a decision (it waits for
// an approval requested before the cursor) or after its end: the stream
// must end with the interrupt or the run's end, not wait for events that
// never come.
func TestReattachPastTheLastEventEnds(t *testing.T) {
	f := startReal(t)
	_, ws := tourWorkspace(t, f)
	input := `{"threadId":"th","runId":"r1","messages":[{"id":"u","role":"user","content":"tour"}],"forwardedProps":{"agenthub":{"workspaceId":%q}}}`
	_, _, evs, body := f.protoPost(t, "/agui", fmt.Sprintf(input, ws), isType("RUN_FINISHED"))
	if len(evs) == 0 {
		t.Fatal(body)
	}
	fin := evs[len(evs)-1]
	intr := fin["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)
	runID := intr["metadata"].(map[string]any)["agenthub"].(map[string]any)["runId"].(string)
	_, body, _ = f.do(t, "GET", "/api/runs/"+runID, "", f.auth())
	var run backend.RunSummary
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatal(err)
	}
	attach := `{"threadId":"th","runId":"r2","messages":[],"forwardedProps":{"agenthub":{"runId":%q,"after":%d}}}`
	_, _, evs, body = f.protoPost(t, "/agui", fmt.Sprintf(attach, runID, run.LastSequence), isType("RUN_FINISHED"))
	if len(evs) == 0 || evs[len(evs)-1]["type"] != "RUN_FINISHED" ||
		evs[len(evs)-1]["outcome"].(map[string]any)["type"] != "interrupt" {
		t.Fatalf("reattach past the approval: %v %s", evs, body)
	}
	chat := `{"id":"c","messages":[{"id":"a","role":"assistant","metadata":{"agenthub":{"runId":%q,"cursor":%d}},"parts":[]}]}`
	_, _, chunks, body := f.protoPost(t, "/aisdk/chat", fmt.Sprintf(chat, runID, run.LastSequence), isType("finish"))
	if len(chunks) == 0 || chunks[len(chunks)-1]["finishReason"] != "tool-calls" {
		t.Fatalf("AI SDK reattach past the approval: %v %s", chunks, body)
	}

	if _, body, _ := f.do(t, "POST", "/api/runs/"+runID+"/cancel", "", f.auth()); !strings.Contains(body, "Cancelled") {
		t.Fatalf("cancel: %s", body)
	}
	_, body, _ = f.do(t, "GET", "/api/runs/"+runID, "", f.auth())
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatal(err)
	}
	_, _, evs, body = f.protoPost(t, "/agui", fmt.Sprintf(attach, runID, run.LastSequence), isType("RUN_FINISHED"))
	if len(evs) == 0 || evs[len(evs)-1]["type"] != "RUN_FINISHED" ||
		evs[len(evs)-1]["outcome"].(map[string]any)["type"] != "cancelled" {
		t.Fatalf("reattach past the end: %v %s", evs, body)
	}
	_, _, chunks, body = f.protoPost(t, "/aisdk/chat", fmt.Sprintf(chat, runID, run.LastSequence), isType("abort"))
	if len(chunks) == 0 || chunks[len(chunks)-1]["type"] != "abort" {
		t.Fatalf("AI SDK reattach past the end: %v %s", chunks, body)
	}
}

// TestAISDKRetryAttachesToTheSameRun: the transport retrying the POST of a
// user message (a dropped connection, a second click) gets the run that
// message started, from its start, and the task does not run twice; a new
// message of the chat starts a new run.
func TestAISDKRetryAttachesToTheSameRun(t *testing.T) {
	f := startReal(t)
	_, ws := tourWorkspace(t, f)
	post := func(chat, msg string) string {
		t.Helper()
		body := fmt.Sprintf(`{"id":%q,"messages":[{"id":%q,"role":"user","parts":[{"type":"text","text":"tour"}]}],"agenthub":{"workspaceId":%q}}`, chat, msg, ws)
		status, _, chunks, text := f.protoPost(t, "/aisdk/chat", body, isType("finish"))
		if status != 200 || len(chunks) == 0 {
			t.Fatalf("%d %s", status, text)
		}
		meta, _ := chunks[len(chunks)-1]["messageMetadata"].(map[string]any)
		hub, _ := meta["agenthub"].(map[string]any)
		id, _ := hub["runId"].(string)
		if id == "" {
			t.Fatalf("no run in the finish chunk's metadata: %v", chunks[len(chunks)-1])
		}
		return id
	}
	first := post("chat-retry", "u1")
	if again := post("chat-retry", "u1"); again != first {
		t.Fatalf("the retried POST started run %s beside %s", again, first)
	}
	if other := post("chat-retry", "u2"); other == first {
		t.Fatal("a new message of the chat did not start a new run")
	}
	_, body, _ := f.do(t, "GET", "/api/runs", "", f.auth())
	var runs []backend.RunSummary
	if err := json.Unmarshal([]byte(body), &runs); err != nil {
		t.Fatalf("runs: %v %s", err, body)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs after a retried and a new message, want 2", len(runs))
	}
}
