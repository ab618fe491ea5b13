package cli

import "sync"

// ExitInterrupted is the exit code of a command left with Ctrl-C while its
// run goes on (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// interrupts routes Ctrl-C, whether it comes from this process's SIGINT or
// from a client forwarding it to the engine: to the handler a command set
// (a follower detaches on the first and cancels the run on the second),
// else it cancels the command.
type interrupts struct {
	mu      sync.Mutex
	handler func()
	cancel  func()
}

func newInterrupts(cancel func()) *interrupts { return &interrupts{cancel: cancel} }

func (i *interrupts) fire() {
	i.mu.Lock()
	h := i.handler
	i.mu.Unlock()
	if h != nil {
		h()
		return
	}
	i.cancel()
}

// handle routes Ctrl-C to h until the returned function is called.
func (i *interrupts) handle(h func()) func() {
	if i == nil {
		return func() {}
	}
	i.mu.Lock()
	i.handler = h
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		i.handler = nil
		i.mu.Unlock()
	}
}
