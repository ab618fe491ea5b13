package api

import "testing"

func TestOpenRequestFromArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"window", "--approval", "apr_1"}, "apr_1", true},
		{[]string{"--approval=apr_2", "--home", "/x"}, "apr_2", true},
		{[]string{"-approval", "apr_3"}, "apr_3", true},
		{[]string{"window", "--approval"}, "", false},
		{[]string{"window"}, "", false},
	}
	for _, tt := range tests {
		got, ok := OpenRequestFromArgs(tt.args)
		if ok != tt.ok || got.ApprovalID != tt.want {
			t.Errorf("%v: %q %v, want %q %v", tt.args, got.ApprovalID, ok, tt.want, tt.ok)
		}
	}
}

// TestTakeOpenOnce: an open request is handed out once.
func TestTakeOpenOnce(t *testing.T) {
	c := New(Config{Home: t.TempDir()})
	s := NewSystemAPI(c)
	c.RequestOpen(OpenRequest{ApprovalID: "apr_1"})
	if r, _ := s.TakeOpen(); r.ApprovalID != "apr_1" {
		t.Fatalf("first take: %+v", r)
	}
	if r, _ := s.TakeOpen(); r.ApprovalID != "" {
		t.Fatalf("second take: %+v", r)
	}
}
