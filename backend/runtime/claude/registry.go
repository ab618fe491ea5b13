package claude

import (
	"os"

	"agenthub/backend/runtime/sessions"
)

// live holds the sessions of this process, by session and by call id.
var live = sessions.New[*session]()

func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
