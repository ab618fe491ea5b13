// Package keychain reads API keys that profiles reference from the OS
// keychain (the Secret Service on Linux, Keychain on macOS, Credential
// Manager on Windows) through github.com/zalando/go-keyring.
//
// Invariants: it only reads; a key it returns is never logged, stored or
// put into an error. A missing entry or an unreachable keychain is a
// runtime_unavailable error whose message names the entry (never the key)
// and the next step.
package keychain

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zalando/go-keyring"

	"agenthub/backend"
	"agenthub/backend/redact"
)

// Ref names one keychain entry: "service/account".
type Ref struct {
	Service string
	Account string
}

func (r Ref) String() string { return r.Service + "/" + r.Account }

// ParseRef reads "service/account": the service is everything before the
// first '/', the account everything after; both must be non-empty and free
// of whitespace at their ends.
func ParseRef(s string) (Ref, error) {
	svc, acct, ok := strings.Cut(s, "/")
	switch {
	case !ok || svc == "" || acct == "":
		return Ref{}, fmt.Errorf("keychain %q: write \"service/account\", e.g. \"agenthub/openai\"", s)
	case strings.TrimSpace(svc) != svc || strings.TrimSpace(acct) != acct:
		return Ref{}, fmt.Errorf("keychain %q: no spaces around the service or the account", s)
	}
	return Ref{Service: svc, Account: acct}, nil
}

// Get returns the secret of r. Errors are *backend.Error with code
// runtime_unavailable and detail "keychain".
func Get(r Ref) (string, error) {
	key, err := keyring.Get(r.Service, r.Account)
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "keychain", Err: err,
			Message: fmt.Sprintf("The API key is not in the OS keychain (service %q, account %q).", r.Service, r.Account),
			Next: fmt.Sprintf("Store it, e.g. `secret-tool store --label=AgentHub service %s username %s` on Linux or "+
				"`security add-generic-password -s %s -a %s -w` on macOS, then start the run again.",
				r.Service, r.Account, r.Service, r.Account)}
	case err != nil:
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "keychain", Err: err,
			Message: fmt.Sprintf("The OS keychain could not be read for %s.", r),
			Next: "Unlock the keychain (on Linux a Secret Service such as gnome-keyring must be running in the " +
				"session), or use key_env instead."}
	case key == "":
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "keychain",
			Message: fmt.Sprintf("The OS keychain entry %s is empty.", r), Next: "Store the API key in it."}
	}
	// Every value read from the keychain is a secret: masked by every
	// redactor from now on (events, messages, tool results, logs).
	redact.Register(key)
	return key, nil
}
