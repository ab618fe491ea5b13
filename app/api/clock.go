package api

import "time"

// nowUTC is a variable so tests can pin time.
var nowUTC = func() time.Time { return time.Now().UTC() }
