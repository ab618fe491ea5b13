package cli

import "agenthub/workspace"

// samePath compares a stored canonical root with a user-typed path.
func samePath(root, typed string) bool {
	c, err := workspace.Canonical(typed)
	return err == nil && c == root
}
