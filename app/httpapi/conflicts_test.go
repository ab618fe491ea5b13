package httpapi

import (
	"strings"
	"testing"
)

// TestConflictResolveRoute: POST /api/runs/{id}/conflicts/{intent}/resolve
// is guarded like every route (token, origin) and answers with the facade's
// stable codes. Resolving real conflicts both ways is
// app/api.TestResolveConflict.
func TestConflictResolveRoute(t *testing.T) {
	f := start(t)
	path := "/api/runs/run_none/conflicts/ck_none/resolve"
	tests := []struct {
		name, body string
		hdr        map[string]string
		want       int
		wantCode   string
	}{
		{"no token", `{"choice":"keep"}`, nil, 401, "unauthorized"},
		{"cross-origin", `{"choice":"keep"}`, map[string]string{"Authorization": "Bearer " + f.token,
			"Origin": "http://evil.example"}, 403, "permission_denied"},
		{"bad choice", `{"choice":"sideways"}`, f.auth(), 400, "invalid_input"},
		{"no such conflict", `{"choice":"restore"}`, f.auth(), 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.hdr {
				hdr[k] = v
			}
			status, body, _ := f.do(t, "POST", path, tt.body, hdr)
			if status != tt.want || !strings.Contains(body, `"code":"`+tt.wantCode+`"`) {
				t.Errorf("status %d body %s, want %d %s", status, body, tt.want, tt.wantCode)
			}
		})
	}
}
