package script

import _ "embed"

//go:embed demo.toml
var demoText []byte

// Demo returns the bundled demo playbook.
func Demo() (*Playbook, error) { return Parse(demoText) }
