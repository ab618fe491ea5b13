package hostile

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
)

// entropy returns n deterministic, high-entropy characters of alphabet for
// a seed, so every secret is realistic and unique but the corpus is stable.
func entropy(seed, alphabet string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", seed, i)))
		for _, c := range sum {
			if b.Len() < n {
				b.WriteByte(alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return b.String()
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexLow = "0123456789abcdef"
	b64    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// secretFormat is one format: line is how it sits in a file or output,
// secret the part that must never be stored, streamed or exported.
type secretFormat struct {
	name   string
	line   string
	secret string
}

// secretFormats is the corpus: well-known token formats, the assignments
// of issue 14 item 6 and the key/value shapes of ordinary config files.
func secretFormats() []secretFormat {
	var out []secretFormat
	add := func(name, secret, line string) {
		out = append(out, secretFormat{name: name, secret: secret, line: strings.ReplaceAll(line, "{S}", secret)})
	}
	e := func(alpha string, n int) func(string) string {
		return func(seed string) string { return entropy(seed, alpha, n) }
	}
	add("aws-access-key-id", "AKIA"+e(upper, 16)("aws-id"), "aws_access_key_id = {S}")
	add("aws-secret-access-key", e(b64, 40)("aws-secret"), "aws_secret_access_key = {S}")
	add("github-pat-classic", "ghp_"+e(alnum, 36)("ghp"), "token {S}")
	add("github-pat-fine-grained", "github_pat_"+e(alnum, 22)("gpat1")+"_"+e(alnum, 59)("gpat2"), "GH={S}")
	add("github-oauth", "gho_"+e(alnum, 36)("gho"), "oauth: {S}")
	add("github-app-server", "ghs_"+e(alnum, 36)("ghs"), "installation token {S}")
	add("github-token-40-hex", e(hexLow, 40)("gh40"), "GITHUB_TOKEN={S}")
	add("gitlab-pat", "glpat-"+e(alnum, 20)("glpat"), "CI_TOKEN {S}")
	add("slack-bot", "xoxb-"+e("0123456789", 12)("sb1")+"-"+e("0123456789", 12)("sb2")+"-"+e(alnum, 24)("sb3"), "SLACK={S}")
	add("slack-webhook", "https://hooks.slack.com/services/T"+e(upper, 8)("sw1")+"/B"+e(upper, 8)("sw2")+"/"+e(alnum, 24)("sw3"), "webhook: {S}")
	add("stripe-live", "sk_live_"+e(alnum, 24)("stripe"), "stripe.api_key = '{S}'")
	add("stripe-restricted", "rk_live_"+e(alnum, 24)("rk"), "key={S}")
	add("stripe-api-key-env", e(alnum, 32)("stripeenv"), "STRIPE_API_KEY={S}")
	add("postgres-password-env", e(alnum, 24)("pgpw"), "POSTGRES_PASSWORD={S}")
	add("db-password-env", e(alnum, 24)("dbpw"), "DB_PASSWORD={S}")
	add("mysql-root-password-yaml", e(alnum, 24)("mysqlpw"), "  MYSQL_ROOT_PASSWORD: {S}")
	add("my-service-api-key", e(alnum, 32)("svc"), "MY_SERVICE_API_KEY={S}")
	add("db-password-quoted", e(alnum+"!@#%^&*", 28)("dbq"), `db_password = "{S}"`)
	add("yaml-secret", e(alnum, 32)("yamlsecret"), "secret: {S}")
	add("yaml-token", e(alnum, 32)("yamltoken"), "token: {S}")
	add("azure-account-key", e(b64, 86)("azure")+"==", "DefaultEndpointsProtocol=https;AccountName=widget;AccountKey={S};EndpointSuffix=core.windows.net")
	add("npm-auth-token", "npm_"+e(alnum, 36)("npm"), "//registry.npmjs.org/:_authToken={S}")
	add("npm-auth-token-legacy", e(hexLow, 8)("npml1")+"-"+e(hexLow, 4)("npml2")+"-"+e(hexLow, 4)("npml3")+"-"+e(hexLow, 4)("npml4")+"-"+e(hexLow, 12)("npml5"), "//npm.example.com/:_authToken={S}")
	add("pgpass-line", e(alnum, 24)("pgpass"), "db.internal:5432:widget:app:{S}")
	add("sendgrid", "SG."+e(urlB64, 22)("sg1")+"."+e(urlB64, 43)("sg2"), "sendgrid {S}")
	add("twilio-api-key", "SK"+e(hexLow, 32)("twilio"), "TWILIO_KEY_SID {S}")
	add("google-api-key", "AIza"+e(urlB64, 35)("gapi"), "maps key {S}")
	add("google-oauth-secret", "GOCSPX-"+e(urlB64, 28)("gocspx"), "client_secret {S}")
	add("rsa-private-key", e(b64, 64)("rsa"), "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA{S}\n-----END RSA PRIVATE KEY-----")
	add("openssh-private-key", e(b64, 64)("openssh"), "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{S}\n-----END OPENSSH PRIVATE KEY-----")
	add("pgp-private-key", e(b64, 64)("pgp"), "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF{S}\n-----END PGP PRIVATE KEY BLOCK-----")
	jwtBody := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + e(alnum, 20)("jwtsub") + `","role":"admin"}`))
	add("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."+jwtBody+"."+e(urlB64, 43)("jwtsig"), "Authorization: Bearer {S}")
	add("openai-project-key", "sk-proj-"+e(urlB64, 48)("openai"), "OPENAI={S}")
	add("anthropic-key", "sk-ant-api03-"+e(urlB64, 93)("anthropic")+"AA", "claude {S}")
	add("heroku-api-key", e(hexLow, 8)("her1")+"-"+e(hexLow, 4)("her2")+"-"+e(hexLow, 4)("her3")+"-"+e(hexLow, 4)("her4")+"-"+e(hexLow, 12)("her5"), "HEROKU_API_KEY={S}")
	add("mailgun", "key-"+e(hexLow, 32)("mailgun"), "mailgun {S}")
	add("mailchimp", e(hexLow, 32)("mailchimp")+"-us12", "mc {S}")
	add("datadog-api-key", e(hexLow, 32)("dd"), "DD_API_KEY={S}")
	add("telegram-bot-token", e("0123456789", 10)("tg1")+":AA"+e(urlB64, 33)("tg2"), "bot {S}")
	add("url-basic-auth", e(alnum, 20)("urlpw"), "https://deploy:{S}@git.example.com/widget.git")
	add("postgres-url", e(alnum, 20)("pgurl"), "DATABASE_URL=postgres://app:{S}@db:5432/widget")
	add("mongodb-url", e(alnum, 20)("mongo"), "mongodb+srv://app:{S}@cluster0.example.net/widget")
	add("redis-url", e(alnum, 20)("redis"), "REDIS_URL=redis://:{S}@cache:6379/0")
	add("docker-config-auth", base64.StdEncoding.EncodeToString([]byte("bot:"+e(alnum, 24)("docker"))), `{"auths":{"ghcr.io":{"auth":"{S}"}}}`)
	add("bearer-header", e(alnum, 40)("bearer"), "curl -H 'Authorization: Bearer {S}' https://api.example.com")
	add("vault-token", "hvs."+e(alnum, 24)("vault"), "VAULT_TOKEN={S}")
	add("shopify", "shpat_"+e(hexLow, 32)("shopify"), "shop {S}")
	add("pypi-token", "pypi-AgEIcHlwaS5vcmc"+e(urlB64, 50)("pypi"), "password = {S}")
	add("huggingface", "hf_"+e(alnum, 34)("hf"), "HF {S}")
	add("digitalocean", "dop_v1_"+e(hexLow, 64)("do"), "do {S}")
	add("netrc", e(alnum, 24)("netrc"), "machine api.example.com login bot password {S}")
	add("age-secret-key", "AGE-SECRET-KEY-1"+e("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)("age"), "# created\n{S}")
	add("terraform-cloud", e(alnum, 14)("tfc1")+".atlasv1."+e(alnum, 67)("tfc2"), "token = \"{S}\"")
	add("linear-api-key", "lin_api_"+e(alnum, 40)("linear"), "LINEAR {S}")
	add("doppler", "dp.pt."+e(alnum, 43)("doppler"), "DOPPLER_TOKEN={S}")
	return out
}

// playSecrets plays every format on three channels, each through the
// product: a file the agent reads (read_file), a command's streamed output
// (run_shell, approved) and the model's own streamed text (a scripted
// OpenAI-wire server, the secret cut across two deltas). A case escapes
// when the secret appears in the database, its WAL, the run's --json
// stdout, `runs events --json`, or `audit export`.
func playSecrets(t *testing.T, l *ledger) {
	formats := secretFormats()
	if len(formats) < 40 {
		t.Fatalf("only %d secret formats", len(formats))
	}
	done := make(chan struct{}, 3)
	go func() {
		defer func() { done <- struct{}{} }()
		t.Run("read", func(t *testing.T) { playSecretChannel(t, l, formats, "read") })
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		t.Run("shell", func(t *testing.T) { playSecretChannel(t, l, formats, "shell") })
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		t.Run("model", func(t *testing.T) { playSecretModel(t, l, formats) })
	}()
	for range 3 {
		<-done
	}
	t.Run("straddle", func(t *testing.T) { playStraddle(t, l) })
	t.Run("profile-key", func(t *testing.T) { playProfileKey(t, l) })
}

// exported is everything a user can export or print of the world's runs.
func (w *world) exported(runID string) string {
	var b strings.Builder
	for _, args := range [][]string{{"runs", "events", runID, "--json"}, {"audit", "export"}, {"runs", "show", runID}} {
		_, out, errOut := w.cli(context.Background(), args...)
		b.WriteString(out)
		b.WriteString(errOut)
	}
	return b.String()
}

func runIDOf(evs []backend.Event) string {
	for _, ev := range evs {
		if ev.RunID != "" {
			return ev.RunID
		}
	}
	return ""
}

// secretLeaks says where secret is: the data files, stdout, exports.
func secretLeaks(files map[string][]byte, stdout, exports, secret string) []string {
	var where []string
	if f := leakIn(files, secret); f != "" {
		where = append(where, "stored ("+f+")")
	}
	if strings.Contains(stdout, secret) {
		where = append(where, "streamed (run --json stdout)")
	}
	if strings.Contains(exports, secret) {
		where = append(where, "exported (runs events / audit export / runs show)")
	}
	return where
}

// secretChunk is how many formats one run of a channel plays: a run's
// commands and reads go one after another, so the channel is split into
// runs of this many, played at once (the shell channel was the suite's
// longest path: 80 approved commands in one run).
const secretChunk = 22

func playSecretChannel(t *testing.T, l *ledger, formats []secretFormat, channel string) {
	var wg sync.WaitGroup
	for i := 0; i < len(formats); i += secretChunk {
		part := formats[i:min(i+secretChunk, len(formats))]
		wg.Go(func() {
			t.Run(fmt.Sprintf("part-%d", i/secretChunk), func(t *testing.T) { playSecretRun(t, l, part, channel) })
		})
	}
	wg.Wait()
}

// playSecretRun plays formats on channel in one run.
func playSecretRun(t *testing.T, l *ledger, formats []secretFormat, channel string) {
	w := newWorld(t)
	var calls []call
	for i, f := range formats {
		rel := fmt.Sprintf("notes/n%02d.txt", i)
		w.write(rel, "# settings\n"+f.line+"\n")
		if channel == "read" {
			calls = append(calls, call{Tool: "read_file", Args: map[string]any{"path": rel}})
		} else {
			calls = append(calls, call{Tool: "run_shell", Args: map[string]any{"command": "cat " + rel}})
		}
	}
	w.putScriptProfile("secrets", script(calls...), "5m")
	res := w.run("secrets", "approve", 4*time.Minute, nil)
	if res.hung || terminal(res.events) != backend.EvRunCompleted {
		t.Fatalf("the run did not complete (hung %v, exit %d, %s): %s", res.hung, res.code, terminal(res.events), res.stderr)
	}
	if n := len(toolResults(res.events)); n != len(formats) {
		t.Fatalf("%d tool results, want %d", n, len(formats))
	}
	files := w.dataFiles()
	exports := w.exported(runIDOf(res.events))
	for _, f := range formats {
		where := secretLeaks(files, res.stdout, exports, f.secret)
		l.check(t, "secret/"+channel+"/"+f.name, len(where) == 0, "%s: %s", f.line, strings.Join(where, ", "))
	}
}

// playSecretModel has a scripted model stream every secret in its text,
// each cut in two deltas in its middle.
func playSecretModel(t *testing.T, l *ledger, formats []secretFormat) {
	w := newWorld(t)
	var text []string
	for _, f := range formats {
		mid := len(f.line) / 2
		if i := strings.Index(f.line, f.secret); i >= 0 {
			mid = i + len(f.secret)/2
		}
		text = append(text, "Here it is: "+f.line[:mid], f.line[mid:]+"\n")
	}
	srv := llmtest.NewOpenAI(llmtest.Turn{Text: text})
	t.Cleanup(srv.Close)
	w.putProfile("model", fmt.Sprintf("name = \"model\"\nruntime = \"native\"\nprovider = \"openai\"\nbase_url = %q\n"+
		"model = \"test-model\"\nrun_timeout = \"2m\"\n"+patientStop, srv.URL+"/v1"))
	res := w.run("model", "reject", 2*time.Minute, nil)
	if res.hung || terminal(res.events) != backend.EvRunCompleted {
		t.Fatalf("the run did not complete (hung %v, exit %d, %s): %s", res.hung, res.code, terminal(res.events), res.stderr)
	}
	files := w.dataFiles()
	exports := w.exported(runIDOf(res.events))
	joined := joinedText(res.events, backend.EvMessageDelta)
	for _, f := range formats {
		where := secretLeaks(files, res.stdout, exports, f.secret)
		if strings.Contains(joined, f.secret) {
			where = append(where, "the streamed deltas join into it")
		}
		l.check(t, "secret/model/"+f.name, len(where) == 0, "%s: %s", f.line, strings.Join(where, ", "))
	}
}

// joinedText is the text of every event of typ, joined in order.
func joinedText(evs []backend.Event, typ backend.EventType) string {
	var b strings.Builder
	for _, p := range payloads(evs, typ) {
		s, _ := p["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// playStraddle puts a token across the 32 KiB pieces a long line is cut
// into (issue 14 item 6): neither the stored pieces, nor the streamed
// deltas joined, may hold the whole token.
func playStraddle(t *testing.T, l *ledger) {
	cases := []struct {
		name       string
		lineLen    int
		tokenStart int
	}{
		{"line-20k-token-at-16k", 20 << 10, 16<<10 - 20},
		{"line-40k-token-at-32k", 40 << 10, 32<<10 - 20},
		{"line-70k-token-at-64k", 70 << 10, 64<<10 - 7},
		{"line-100k-token-at-96k", 100 << 10, 96<<10 - 30},
		{"line-40k-spaces-token-at-32k", 40 << 10, 32<<10 - 20},
	}
	w := newWorld(t)
	var calls []call
	tokens := make([]string, len(cases))
	for i, c := range cases {
		tokens[i] = "ghp_" + entropy("straddle-"+c.name, alnum, 36)
		fill := "x"
		if strings.Contains(c.name, "spaces") {
			fill = "ab "
		}
		line := strings.Repeat(fill, c.lineLen)[:c.tokenStart] + tokens[i]
		line += strings.Repeat("y", c.lineLen-len(line))
		rel := fmt.Sprintf("logs/long%d.txt", i)
		w.write(rel, line+"\n")
		calls = append(calls, call{Tool: "run_shell", Args: map[string]any{"command": "cat " + rel}})
	}
	w.putScriptProfile("straddle", script(calls...), "5m")
	res := w.run("straddle", "approve", 4*time.Minute, nil)
	if res.hung || terminal(res.events) != backend.EvRunCompleted {
		t.Fatalf("the run did not complete (hung %v, exit %d, %s): %s", res.hung, res.code, terminal(res.events), res.stderr)
	}
	files := w.dataFiles()
	exports := w.exported(runIDOf(res.events))
	deltas := map[string]*strings.Builder{}
	for _, p := range payloads(res.events, backend.EvToolDelta) {
		id, _ := p["toolCallId"].(string)
		s, _ := p["text"].(string)
		if deltas[id] == nil {
			deltas[id] = &strings.Builder{}
		}
		deltas[id].WriteString(s)
	}
	for i, c := range cases {
		where := secretLeaks(files, res.stdout, exports, tokens[i])
		for _, b := range deltas {
			if strings.Contains(b.String(), tokens[i]) {
				where = append(where, "the streamed deltas join into it")
			}
		}
		l.check(t, "secret/straddle/"+c.name, len(where) == 0, "%s", strings.Join(where, ", "))
	}
}

// playProfileKey runs a native profile whose key (a local gateway token
// without a well-known prefix) the model echoes, and a command that prints
// its environment: the key is in neither the events, the database nor the
// command's environment (issue 14 item 6, last point).
func playProfileKey(t *testing.T, l *ledger) {
	w := newWorld(t)
	key := "gw-" + entropy("gateway", hexLow, 40)
	w.env["HOSTILE_GATEWAY_KEY"] = key
	// The profile's key is read from the process environment (app/api
	// keyOf), as in a real start; the CLI's Getenv only stands in for the
	// rest. The name is this case's own, so parallel cases do not see it.
	must(t, os.Setenv("HOSTILE_GATEWAY_KEY", key))
	t.Cleanup(func() { _ = os.Unsetenv("HOSTILE_GATEWAY_KEY") })
	args, _ := json.Marshal(map[string]any{"command": "env"})
	srv := llmtest.NewOpenAI(
		llmtest.Turn{Text: []string{"Your key is " + key[:20], key[20:] + ". Checking the environment."},
			Calls: []llmtest.Call{{ID: "call_1", Name: "run_shell", Args: []string{string(args)}}}},
		llmtest.Turn{Text: []string{"Done."}},
	)
	t.Cleanup(srv.Close)
	w.putProfile("keyed", fmt.Sprintf("name = \"keyed\"\nruntime = \"native\"\nprovider = \"openai\"\nbase_url = %q\n"+
		"model = \"test-model\"\nkey_env = \"HOSTILE_GATEWAY_KEY\"\nrun_timeout = \"2m\"\n"+patientStop, srv.URL+"/v1"))
	res := w.run("keyed", "approve", 2*time.Minute, nil)
	if res.hung || terminal(res.events) == "" {
		t.Fatalf("the run did not end (hung %v, exit %d): %s", res.hung, res.code, res.stderr)
	}
	files := w.dataFiles()
	exports := w.exported(runIDOf(res.events))
	where := secretLeaks(files, res.stdout, exports, key)
	if strings.Contains(joinedText(res.events, backend.EvMessageDelta), key) {
		where = append(where, "the streamed deltas join into it")
	}
	l.check(t, "secret/profile-key/echoed-by-model", len(where) == 0, "%s", strings.Join(where, ", "))
	var shellSaw bool
	for _, r := range toolResults(res.events) {
		shellSaw = shellSaw || strings.Contains(r.text, "HOSTILE_GATEWAY_KEY")
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		shellSaw = shellSaw || strings.Contains(string(r.Raw), "HOSTILE_GATEWAY_KEY")
	}
	l.check(t, "secret/profile-key/in-command-env", !shellSaw, "the command's environment holds the profile's key variable")
}
