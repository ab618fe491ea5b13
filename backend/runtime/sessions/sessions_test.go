package sessions

import (
	"errors"
	"testing"

	"agenthub/backend"
)

type sess struct{ id string }

func TestRegistry(t *testing.T) {
	r := New[*sess]()
	a, b := &sess{"a"}, &sess{"b"}
	r.Add(a.id, "a-start", a)
	r.Add(b.id, "b-start", b)
	r.AddCall("a-1", a)
	if s, ok := r.ByCall("a-1"); !ok || s != a {
		t.Fatalf("ByCall(a-1) = %v, %v", s, ok)
	}
	if s, ok := r.ByID("b"); !ok || s != b {
		t.Fatalf("ByID(b) = %v, %v", s, ok)
	}
	r.Remove(a.id, a)
	for _, c := range []string{"a-start", "a-1"} {
		if _, ok := r.ByCall(c); ok {
			t.Errorf("call %s of a removed session is still found", c)
		}
	}
	if _, ok := r.ByCall("b-start"); !ok {
		t.Error("removing a forgot b")
	}
}

func TestFind(t *testing.T) {
	r := New[*sess]()
	a := &sess{"a"}
	r.Add(a.id, "a-start", a)
	gone := errors.New("gone")
	task := backend.Message{Role: backend.RoleUser, Text: "do it"}
	steer := backend.Message{Role: backend.RoleUser, Text: "also", Steer: true}
	call := func(id string) backend.Message {
		return backend.Message{Role: backend.RoleAssistant, Calls: []backend.ToolCallRequest{{ID: id}}}
	}
	tests := []struct {
		name string
		msgs []backend.Message
		want *sess
		task string
		err  error
	}{
		{"new run", []backend.Message{task}, nil, "do it", nil},
		{"live", []backend.Message{task, call("a-start"), steer}, a, "", nil},
		{"gone", []backend.Message{task, call("x")}, nil, "", gone},
		{"new task after a run", []backend.Message{task, call("a-start"), task}, nil, "do it", nil},
	}
	for _, tc := range tests {
		s, got, err := r.Find(tc.msgs, gone)
		if s != tc.want || got != tc.task || !errors.Is(err, tc.err) {
			t.Errorf("%s: Find = %v, %q, %v; want %v, %q, %v", tc.name, s, got, err, tc.want, tc.task, tc.err)
		}
	}
	if _, _, err := r.Find(nil, gone); err == nil {
		t.Error("Find(nil) did not fail")
	}
}

func TestCall(t *testing.T) {
	r, err := Call("text", "c1", "x.session", map[string]string{"session": "s1"})
	if err != nil || r.Text != "text" || len(r.Calls) != 1 || r.Calls[0].ID != "c1" || r.Calls[0].Name != "x.session" ||
		string(r.Calls[0].Arguments) != `{"session":"s1"}` {
		t.Fatalf("Call = %+v, %v", r, err)
	}
}

func TestReplies(t *testing.T) {
	msgs := []backend.Message{
		{Role: backend.RoleUser, Text: "write it"},
		{Role: backend.RoleAssistant, Calls: []backend.ToolCallRequest{{ID: "c1"}, {ID: "c2"}}},
		{Role: backend.RoleTool, ToolCallID: "c1", Text: "rejected by the reviewer"},
		{Role: backend.RoleTool, ToolCallID: "c2", Text: "denied by policy rule 3"},
	}
	got := Replies(msgs)
	want := map[string]string{"c1": "rejected by the reviewer", "c2": "denied by policy rule 3"}
	if len(got) != len(want) {
		t.Fatalf("Replies = %v, want %v", got, want)
	}
	for id, text := range want {
		if got[id] != text {
			t.Errorf("Replies[%s] = %q, want %q", id, got[id], text)
		}
	}
}
