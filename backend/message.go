package backend

// Text is text for people sent as a key of the UI's message catalogues
// (frontend/messages/{en,zh-CN}.json) with its arguments, so that the UI
// shows it in the reader's language instead of the English the backend
// would write (issue 21). Arguments are data (a path, a command), shown as
// sent; the English text beside a Text stays for the CLI and old clients.
type Text struct {
	Key  string            `json:"key"`
	Args map[string]string `json:"args,omitempty"`
}

// Msg builds a Text from a key and name/value pairs.
func Msg(key string, nameValues ...string) *Text {
	m := &Text{Key: key}
	for i := 0; i+1 < len(nameValues); i += 2 {
		if m.Args == nil {
			m.Args = map[string]string{}
		}
		m.Args[nameValues[i]] = nameValues[i+1]
	}
	return m
}

// Where "always allow in this workspace" writes its rule (a setting; the
// data directory is the default so that nothing appears in the
// repository's git status).
const (
	RuleSiteData       = "data"       // <data>/policy/<workspace-id>.toml
	RuleSiteRepository = "repository" // .agenthub/policy.toml in the workspace
)

// RuleLocation names the file a workspace rule is (or would be) written
// to, without machine paths: Path is relative to the data directory for
// the data site, to the workspace for the repository site.
type RuleLocation struct {
	Site string `json:"site"`
	Path string `json:"path"`
}
