package claude

import (
	"agenthub/backend/runtime/sessions"
)

// live holds the sessions of this process, by session and by call id.
var live = sessions.New[*session]()
