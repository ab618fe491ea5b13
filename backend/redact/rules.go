package redact

import (
	"math"
	"regexp"
	"strings"
)

// The token formats below follow the rules of gitleaks' config/gitleaks.toml
// (https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019
// Zachary Rice). The expressions are written for this package: narrower
// where gitleaks relies on its own entropy and allow-list passes, and with
// the secret in group 1 where a prefix (a header name, a key name) must stay
// readable.

// rule is one token format.
type rule struct {
	kind     string
	keywords []string // one must occur before the expression runs (a cheap prefilter)
	fold     bool     // keywords are matched case-insensitively
	re       *regexp.Regexp
	group    int               // the submatch that is the secret; 0 = the whole match
	check    func(string) bool // optional filter on the secret, against false positives
}

// A leading \b would keep Go's regexp from scanning for the literal prefix
// (a 100x slowdown), so the word boundary before a match is checked here.
func boundaryBefore(s string, i int) bool {
	return i == 0 || !isWordByte(s[i-1])
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// rules run in order: specific formats before generic ones, so a generic
// rule only sees what the specific ones left. The private key rule must stay
// first: it is the only one applied to whole texts rather than lines.
var rules = []rule{
	{
		kind: "private_key", keywords: []string{"PRIVATE KEY"},
		re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)`),
	},
	{
		kind: "aws_access_key", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		re: regexp.MustCompile(`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`),
	},
	{
		kind: "aws_secret_key", keywords: []string{"aws"}, fold: true,
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
		kind: "huggingface_token", keywords: []string{"hf_"},
		re: regexp.MustCompile(`hf_[A-Za-z]{34}\b`),
	},
	{
		kind: "jwt", keywords: []string{"eyJ"},
		re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`),
	},
	{
		kind: "url_password", keywords: []string{"://"},
		re:    regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\[\]]+:([^/\s@\[\]]{3,})@`),
		group: 1,
	},
	{
		kind: "bearer", keywords: []string{"authorization"}, fold: true,
		re:    regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=]\s*["']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/-]{8,}=*)`),
		group: 1,
	},
	{
		kind: "bearer", keywords: []string{"earer"},
		re:    regexp.MustCompile(`[Bb]earer\s+([A-Za-z0-9._~+/-]{16,}=*)`),
		group: 1, check: digitAndLetter,
	},
	{
		kind: "generic_secret", fold: true,
		keywords: []string{"key", "token", "secret", "password", "passwd"},
		re:       regexp.MustCompile(`(?i)\b(?:x-api-key|api[_-]?key|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret|password|passwd)["']?\s*[:=]\s*["']?([A-Za-z0-9_~+/=-]{12,})`),
		group:    1, check: highEntropy,
	},
}

func digitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// highEntropy keeps ordinary identifiers (apiKeyFromConfig) out of the
// generic rule: the value needs digits and letters and about 3 bits of
// Shannon entropy per character, as random tokens have.
func highEntropy(s string) bool {
	if !digitAndLetter(s) {
		return false
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h >= 3.0
}

// apply replaces every match of r in s.
func (r *rule) apply(s, lower string) string {
	if !r.hasKeyword(s, lower) {
		return s
	}
	matches := r.re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[2*r.group], m[2*r.group+1]
		if start < 0 || !boundaryBefore(s, m[0]) || (r.check != nil && !r.check(s[start:end])) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(marker(r.kind))
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func (r *rule) hasKeyword(s, lower string) bool {
	hay := s
	if r.fold {
		hay = lower
	}
	for _, k := range r.keywords {
		if strings.Contains(hay, k) {
			return true
		}
	}
	return false
}

func marker(kind string) string { return "[REDACTED:" + kind + "]" }
