package canon

import "testing"

func TestTransform(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{`{"a":{"z":[3,2,1],"y":null}}`, `{"a":{"y":null,"z":[3,2,1]}}`},
		{`[1.0, 1e21, 1e-7, 0.000001, -0, 123456789012]`, `[1,1e+21,1e-7,0.000001,0,123456789012]`},
		{`"\u00e9\u2028<>&\u001f"`, "\"é\u2028<>&\\u001f\""},
		{`{"\u20ac":1,"\r":2,"1":3}`, `{"\r":2,"1":3,"€":1}`},
		{`"a\"b\\c\n"`, `"a\"b\\c\n"`},
	}
	for _, tt := range tests {
		got, err := Transform([]byte(tt.in))
		if err != nil {
			t.Fatalf("Transform(%s): %v", tt.in, err)
		}
		if string(got) != tt.want {
			t.Errorf("Transform(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSHA256KeyOrderInsensitive(t *testing.T) {
	a, _ := SHA256(map[string]any{"a": 1, "b": []string{"x"}})
	b, err := SHA256(map[string]any{"b": []string{"x"}, "a": 1})
	if err != nil || a != b {
		t.Fatalf("hashes differ: %s vs %s (%v)", a, b, err)
	}
	c, _ := SHA256(map[string]any{"a": 2, "b": []string{"x"}})
	if a == c {
		t.Fatal("different subjects hash equal")
	}
}
