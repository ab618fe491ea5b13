// Package api is the transport-neutral composition root: it opens the data
// directory, the store and the services, and exposes thin facades
// (SystemAPI, WorkspacesAPI, SettingsAPI, …) returning (T, error). The Wails
// window binds these facades directly; app/httpapi serves the same facades
// over HTTP. It owns the one error → {code, message, next} table.
//
// It must not import Wails or the app package: window-only abilities (the
// native directory dialog) are injected as functions.
package api
