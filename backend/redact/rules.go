package redact

import (
	"math"
	"regexp"
	"strings"
)

// Our own rules come first; gitleaks' default rule set (gitleaks.go) runs
// after them, on the same lines. Ours cover what gitleaks, built to scan
// repositories, leaves out: a secret by the name it is assigned to
// (POSTGRES_PASSWORD=…, db_password = "…", AccountKey=…;), passwords in URLs
// and .pgpass and .netrc lines, command-line flags, and private key blocks
// split across JSON strings (json.go). Several token formats follow
// gitleaks' config/gitleaks.toml (MIT License, Copyright (c) 2019 Zachary
// Rice) with the secret in group 1 where a prefix (a header name, a key
// name) must stay readable; they keep their kinds ("github_token") stable
// for the markers already stored.

// rule is one secret format.
type rule struct {
	kind     string
	keywords []string // one must occur (any case) before the expression runs: a cheap prefilter
	re       *regexp.Regexp
	group    int               // the submatch that is the secret; 0 = the whole match
	check    func(string) bool // optional filter on the secret, against false positives

	// gitleaks rules: with autoGroup the secret is the first non-empty
	// submatch (or the whole match), as gitleaks takes it; entropy > 0
	// requires more Shannon entropy than that; allow are the rule's
	// allow-lists, and the global one applies too.
	gitleaks  bool
	autoGroup bool
	entropy   float64
	allow     []allowlist
	lead      int // see stripLead

	// pre, if set, must accept the line before the expression runs: the
	// prefilter of a rule without keywords.
	pre func(string) bool

	// near, if set, must accept the text before the match (a name's
	// first part).
	near func(before string) bool

	// anywhere: the match need not start at a word boundary.
	anywhere bool

	// wholeText: the expression can cross lines, so it runs on the whole
	// text rather than line by line.
	wholeText bool
}

// ourRules are ours, most specific first (a secret two rules find gets the
// earlier one's kind). The private key rule must stay first: it is the only
// one of ours applied to whole texts rather than lines. A function, called
// once by compiledRules, so a process that never redacts (most CLI
// commands) does not compile the expressions at package initialisation.
func ourRules() []rule {
	return []rule{
		{
			kind: "private_key", keywords: []string{"PRIVATE KEY"},
			re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)`),
		},
		{
			kind: "aws_access_key", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re: regexp.MustCompile(`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`),
		},
		{
			kind: "aws_secret_key", keywords: []string{"aws"},
			re:    regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`),
			group: 1,
		},
		{
			kind: "github_token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
			re: regexp.MustCompile(`(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b`),
		},
		{
			kind: "github_token", keywords: []string{"github_pat_"},
			re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{50,}\b`),
		},
		{
			kind:     "gitlab_token",
			keywords: []string{"glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glsoat-", "glft-", "glimt-", "glagent-"},
			re:       regexp.MustCompile(`gl(?:pat|dt|ptt|rt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}`),
		},
		{
			kind: "slack_token", keywords: []string{"xox", "xapp-"},
			re: regexp.MustCompile(`(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})`),
		},
		{
			kind: "slack_webhook", keywords: []string{"hooks.slack.com"},
			re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`),
		},
		{
			kind: "anthropic_api_key", keywords: []string{"sk-ant-"},
			re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`),
		},
		{
			kind: "openai_api_key", keywords: []string{"sk-"},
			re:    regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`),
			check: digitAndLetter,
		},
		{
			kind: "google_api_key", keywords: []string{"AIza"},
			re: regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`),
		},
		{
			kind: "stripe_key", keywords: []string{"_live_", "_test_"},
			re: regexp.MustCompile(`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}`),
		},
		{
			kind: "npm_token", keywords: []string{"npm_"},
			re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}\b`),
		},
		{
			// Hugging Face user tokens are hf_ and 34 letters; organisation
			// and newer tokens mix in digits.
			kind: "huggingface_token", keywords: []string{"hf_"},
			re:    regexp.MustCompile(`hf_[A-Za-z0-9]{34}\b`),
			check: hasUpperAndLower,
		},
		{
			kind: "google_oauth_secret", keywords: []string{"gocspx-"},
			re: regexp.MustCompile(`GOCSPX-[A-Za-z0-9_-]{28}`),
		},
		{
			// Mailgun's private API keys: key- and 32 hex digits.
			kind: "mailgun_key", keywords: []string{"key-"},
			re: regexp.MustCompile(`\bkey-[0-9a-f]{32}\b`),
		},
		{
			// Mailchimp API keys: 32 hex digits and the data centre (-us12).
			kind: "mailchimp_key", keywords: []string{"-us"}, anywhere: true,
			re: regexp.MustCompile(`\b[0-9a-f]{32}-us[0-9]{1,2}\b`),
		},
		{
			kind: "jwt", keywords: []string{"eyJ"},
			re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`),
		},
		{
			kind: "url_password", keywords: []string{"://"},
			re:    regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\[\]]*:([^/\s@\[\]]{3,})@`),
			group: 1,
		},
		{
			kind: "bearer", keywords: []string{"authorization"},
			re:    regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=]\s*["']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/-]{8,}=*)`),
			group: 1,
		},
		{
			kind: "bearer", keywords: []string{"earer"},
			re:    regexp.MustCompile(`[Bb]earer\s+([A-Za-z0-9._~+/-]{16,}=*)`),
			group: 1, check: digitAndLetter,
		},
		{
			// A value assigned to a name that holds a secret word, wherever the
			// word is in the name (POSTGRES_PASSWORD, MY_SERVICE_API_KEY,
			// _authToken, AccountKey) and whatever the syntax: .env, YAML, JSON,
			// TOML, shell, logfmt, properties, PHP define(…, …). The expression
			// starts at the word, not at the start of the name: a leading run of
			// name characters would make it ten times slower.
			kind: "generic_secret", anywhere: true,
			keywords: []string{"passw", "pwd", "secret", "token", "key", "credential"},
			re: regexp.MustCompile(`(?i)(?:passw(?:or)?d|pwd|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|` +
				`account[_.-]?key|auth[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|credentials?)` +
				`[a-z0-9_.-]*` + assignedValue),
			group: 1, check: assignedSecret,
		},
		{
			// Names that end in "key" (DD_APP_KEY, MASTER_KEY), except the keys
			// of databases and indexes (primary_key, sort_key).
			kind: "generic_secret", anywhere: true, keywords: []string{"key"},
			re:    regexp.MustCompile(`(?i)[_.-]key` + assignedValue),
			group: 1, check: assignedSecret, near: notDataKey,
		},
		{
			// The same for names that end in "pass" (SMTP_PASS) …
			kind: "generic_secret", anywhere: true, keywords: []string{"pass"},
			re:    regexp.MustCompile(`(?i)[_.-]pass` + assignedValue),
			group: 1, check: assignedSecret,
		},
		{
			// … or are "pass" or "auth" ("auth": "dXNlcjpwYXNz" in a Docker
			// config).
			kind: "generic_secret", keywords: []string{"pass", "auth"},
			re:    regexp.MustCompile(`(?i)(?:pass|auth)` + assignedValue),
			group: 1, check: assignedSecret,
		},
		{
			// A secret word as a command-line flag with its value after a
			// space: --token x, --password x, --access-token x.
			kind: "generic_secret", keywords: []string{"--"},
			re: regexp.MustCompile(`(?i)--?[a-z0-9-]*(?:token|passw(?:or)?d|secret|api-?key)[ \t]+["']?` +
				`([A-Za-z0-9!#$%&*+./?@^_|~=-]{8,})`),
			group: 1, check: assignedSecret,
		},
		{
			// XML and config files naming the secret in one attribute and
			// holding it in the next: <add key="ApiSecret" value="…"/>.
			kind: "generic_secret", keywords: []string{"value="},
			re:    regexp.MustCompile(`(?i)(?:key|name)="[^"]*(?:passw(?:or)?d|secret|token|api[_.-]?key)[^"]*"\s+value="([^"\s]{8,})"`),
			group: 1, check: assignedSecret,
		},
		{
			// A .netrc entry: machine host login user password secret.
			// Its keyword is "machine", where the match starts: a stream must
			// not be cut between it and the password (stream.go).
			kind: "netrc_password", keywords: []string{"machine"},
			re:    regexp.MustCompile(`(?i)\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S{4,})`),
			group: 1,
		},
		{
			// A .pgpass line, host:port:database:user:password, alone on its
			// line or inside a quoted string.
			// A line of a few KiB at most: the expression has no literal to
			// look for, so it is not run over long lines of output.
			kind: "pgpass_password", pre: func(s string) bool { return len(s) <= longLine && strings.Count(s, ":") >= 4 },
			re: regexp.MustCompile(`(?:^|[\s"'\x60])[A-Za-z0-9_.*-]+:(?:[0-9]{1,5}|\*):[^:\s"'\x60]+:[^:\s"'\x60]+:` +
				`([^\s"'\x60]{4,})(?:[\s"'\x60]|$)`),
			group: 1, anywhere: true,
		},
		{
			kind: "telegram_bot_token", keywords: []string{":aa"}, anywhere: true, // in a URL: …/bot<token>/
			re: regexp.MustCompile(`[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b`),
		},
		{
			kind: "doppler_token", keywords: []string{"dp."},
			re: regexp.MustCompile(`dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b`),
		},
	}
}

// assignedValue follows a secret's name: an optional closing quote, an
// assignment (=, :, :=, =>, or the comma of define('NAME', 'value')), an
// optional opening quote, and the value (group 1), which must not be
// followed by "(": a function call is code, not a value.
const assignedValue = `["'\x60]?[ \t]{0,3}(?::=|=>|=|:|,)[ \t]{0,3}["'\x60]?` +
	`([A-Za-z0-9!#$%&*+./?@^_|~=-]{8,})(?:[^A-Za-z0-9!#$%&*+./?@^_|~=(-]|$)`

// hasUpperAndLower rejects an all-lower or all-upper run (an identifier
// such as hf_attention_mask_in_the_pipeline_x is not a token).
func hasUpperAndLower(s string) bool {
	return strings.ToLower(s) != s && strings.ToUpper(s) != s
}

// notDataKey rejects names of keys that are not secrets, given the text
// before the match.
func notDataKey(before string) bool {
	before = strings.ToLower(before[max(0, len(before)-16):])
	for _, w := range []string{"primary", "foreign", "sort", "partition", "sequence", "schema", "bucket", "public",
		"pub", "idx", "index", "natural", "hot", "cache", "row", "hash", "range", "shard", "map", "dict", "ssh", "gpg"} {
		if strings.HasSuffix(before, w) {
			return false
		}
	}
	return true
}

// assignedSecret tells a secret value from configuration that happens to
// sit under a secret-sounding name: placeholders (${X}, $X, %X%, <x>,
// ****), words without digits (token_type: Bearer, password: required),
// numbers (max_tokens: 4096), URLs and paths, and short versions.
func assignedSecret(v string) bool {
	switch {
	case len(v) < 8,
		strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%"), strings.HasPrefix(v, "/"),
		strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"),
		strings.Contains(v, "://"), strings.Trim(v, "*xX.-_#") == "":
		return false
	}
	lower := strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz")
	upper := strings.ContainsAny(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	digits := strings.ContainsAny(v, "0123456789")
	symbols := strings.ContainsAny(v, "!#$%&*+?@^|~=")
	h := shannon(v)
	switch {
	case !lower && !upper:
		return false
	case digits || (symbols && len(v) >= 12):
		return h >= 2.5
	}
	// Letters only: a random token in mixed case, not an identifier.
	return lower && upper && len(v) >= 16 && h >= 3.5
}

func digitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// shannon is the Shannon entropy of s in bits per byte, as gitleaks
// computes it (per rune; the secrets it is used on are ASCII).
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	h := 0.0
	add := func(c int) {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range other {
		add(c)
	}
	return h
}

func marker(kind string) string { return "[REDACTED:" + kind + "]" }
