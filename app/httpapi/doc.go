// Package httpapi serves the app/api facades and the frontend over HTTP for
// `agenthub serve`: loopback only, a random token per start, no cross-origin
// requests, events over Server-Sent Events that resume from Last-Event-ID.
//
// It must not import Wails or the app package; it adds no behaviour of its
// own beyond transport: every decision lives in app/api and below.
package httpapi
