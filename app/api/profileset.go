package api

import "sync"

// ProfileProblem is a profile file that cannot be used, as the settings
// view shows it: the file's name in the profiles directory and why, with no
// absolute path.
type ProfileProblem struct {
	File    string `json:"file"`
	Problem string `json:"problem"`
}

// profileSet is the registered profiles and the broken files, shared by a
// core and its views and replaced whole when the files change (watch.go).
type profileSet struct {
	mu       sync.RWMutex
	list     []ProfileInfo
	problems []ProfileProblem
}

func (s *profileSet) get() ([]ProfileInfo, []ProfileProblem) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list, s.problems
}

// ProfileProblems lists the profile files that cannot be used and why, so
// the window shows them instead of only logging them (issue 21).
func (r *RunsAPI) ProfileProblems() ([]ProfileProblem, error) {
	if _, err := r.core.db(); err != nil {
		return nil, err
	}
	_, problems := r.core.prof.get()
	if problems == nil {
		problems = []ProfileProblem{}
	}
	return problems, nil
}
