package worktree

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrMoved: the branch or the remote is no longer where the approved plan
// saw it.
var ErrMoved = errors.New("the branch or the remote moved since the push was shown")

// PushPlan is the exact push a reviewer approves: the branch goes from From
// (the remote's tip, "" when the remote has no such branch) to To.
type PushPlan struct {
	Remote  string   `json:"remote"`
	Branch  string   `json:"branch"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to"`
	Commits []Commit `json:"commits"`
}

// PlanPush reads what pushing wt's branch to remote would send. The push
// itself is bound to From and To: the commit list is what the reviewer reads.
func (m *Manager) PlanPush(ctx context.Context, checkout string, wt Worktree, remote string) (PushPlan, error) {
	if err := m.configuredRemote(ctx, checkout, remote); err != nil {
		return PushPlan{}, fmt.Errorf("plan push: %w", err)
	}
	ref := "refs/heads/" + wt.Branch
	to, err := m.git(ctx, checkout, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		return PushPlan{}, fmt.Errorf("plan push: no branch %s: %w", wt.Branch, err)
	}
	p := PushPlan{Remote: remote, Branch: wt.Branch, To: strings.TrimSpace(string(to))}
	if p.From, err = m.remoteTip(ctx, checkout, remote, ref); err != nil {
		return PushPlan{}, err
	}
	// The commits shown: from the base (or, when the caller knows none, what
	// no other local branch holds) up to To, minus what the remote has.
	rng := []string{p.To, "--not", wt.Base}
	if wt.Base == "" {
		rng = []string{p.To, "--not", "--exclude=" + wt.Branch, "--branches"}
	}
	if p.From != "" {
		rng = append(rng, p.From)
	}
	out, err := m.git(ctx, checkout, append([]string{"log", "--format=%H%x09%s"}, append(rng, "--")...)...)
	if err != nil {
		return PushPlan{}, fmt.Errorf("plan push: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if h, s, ok := strings.Cut(line, "\t"); ok {
			p.Commits = append(p.Commits, Commit{Hash: h, Subject: s})
		}
	}
	return p, nil
}

// configuredRemote refuses anything but the name of a remote configured in
// the checkout: a path, a URL or an option would push somewhere no one
// configured (a plan can come back from a client).
func (m *Manager) configuredRemote(ctx context.Context, checkout, remote string) error {
	if remote == "" || strings.HasPrefix(remote, "-") || strings.ContainsAny(remote, ":/\\ ") {
		return fmt.Errorf("%q is not the name of a configured remote", remote)
	}
	if _, err := m.git(ctx, checkout, "remote", "get-url", "--", remote); err != nil {
		return fmt.Errorf("remote %q is not configured: %w", remote, err)
	}
	return nil
}

func (m *Manager) remoteTip(ctx context.Context, checkout, remote, ref string) (string, error) {
	out, err := m.git(ctx, checkout, "ls-remote", "--", remote, ref)
	if err != nil {
		return "", fmt.Errorf("read remote %s: %w", remote, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if h, r, ok := strings.Cut(line, "\t"); ok && strings.TrimSpace(r) == ref {
			return h, nil
		}
	}
	return "", nil
}

// Push performs exactly plan: the local branch must still be at plan.To,
// and the remote's branch at plan.From (a lease git checks on the remote
// side), else nothing is pushed and the error wraps [ErrMoved].
func (m *Manager) Push(ctx context.Context, checkout string, plan PushPlan) error {
	if err := m.configuredRemote(ctx, checkout, plan.Remote); err != nil {
		return fmt.Errorf("push %s: %w", plan.Branch, err)
	}
	// The refspec is built from the plan: only a branch name and object ids
	// (a "+" or a ":" there would change what the push does).
	if plan.Branch == "" || strings.HasPrefix(plan.Branch, "-") || strings.ContainsAny(plan.Branch, ":+ \\") ||
		!objectID(plan.To) || (plan.From != "" && !objectID(plan.From)) {
		return fmt.Errorf("push: the plan does not name a branch and commits")
	}
	ref := "refs/heads/" + plan.Branch
	to, err := m.git(ctx, checkout, "rev-parse", "--verify", "--quiet", ref)
	if err != nil || strings.TrimSpace(string(to)) != plan.To {
		return fmt.Errorf("push %s: the branch is no longer at %s: %w", plan.Branch, short(plan.To), ErrMoved)
	}
	if from, err := m.remoteTip(ctx, checkout, plan.Remote, ref); err != nil {
		return err
	} else if from != plan.From {
		return fmt.Errorf("push %s: %s's branch is no longer at %q: %w", plan.Branch, plan.Remote, short(plan.From), ErrMoved)
	}
	if _, err := m.git(ctx, checkout, "push", "--porcelain", "--force-with-lease="+ref+":"+plan.From, "--",
		plan.Remote, plan.To+":"+ref); err != nil {
		return fmt.Errorf("push %s: %w", plan.Branch, err)
	}
	return nil
}

// objectID reports whether s is a full hex object id (SHA-1 or SHA-256).
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
