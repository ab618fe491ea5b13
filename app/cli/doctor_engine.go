package cli

import (
	"context"
	"fmt"
	"time"

	"agenthub/app/api"
	"agenthub/app/engineclient"
)

// engineCheck reports the data directory's engine: who serves its socket,
// or that none runs (not a failure: commands that change runs start it),
// or that a process owns the runs without answering on the socket.
func engineCheck(ctx context.Context, e *Env, homeFlag string) check {
	home, err := api.ResolveHome(homeFlag, e.Getenv)
	if err != nil {
		return check{name: "engine", optional: true, detail: err.Error()}
	}
	if c, err := engineclient.Dial(home); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		st, err := c.Status(ctx)
		if err != nil {
			return check{name: "engine", optional: true, detail: "its socket accepts but does not answer: " + err.Error(),
				fix: "restart it: agenthub engine stop, then agenthub engine start"}
		}
		return check{name: "engine", ok: true, detail: fmt.Sprintf("running: pid %d (%s %s) since %s, on %s",
			st.Pid, st.Surface, st.Version, st.StartedAt, engineclient.SocketName)}
	}
	if l, err := api.TryLock(home, api.EngineLock); err != nil {
		return check{name: "engine", optional: true,
			detail: "a process owns this data directory's runs but serves no engine socket (an older AgentHub?)",
			fix:    "close that window or agenthub serve; the next command then starts an engine"}
	} else {
		l.Release()
	}
	return check{name: "engine", ok: true,
		detail: "not running; commands that change runs start it (or: agenthub engine start)"}
}
