package cli

import (
	"path/filepath"

	"agenthub/backend/tools"
)

// chromiumCheck says whether the screenshot tool has a headless Chromium
// (the same lookup the tool makes). Optional: only screenshots need it.
func chromiumCheck() check {
	c := check{name: "chromium (screenshots)", optional: true,
		fix: "install Chromium (e.g. sudo apt-get install chromium) or set AGENTHUB_CHROMIUM to a Chromium or Chrome binary; only the screenshot tool needs it"}
	bin, err := tools.FindChromium()
	if err != nil {
		c.detail = "not found: the built-in agent's screenshot tool will fail"
		return c
	}
	c.ok, c.detail = true, filepath.Base(bin)+" found: the screenshot tool renders pages with it"
	return c
}
