// Package docs holds tests that keep the repository's design documents true
// to the code: every clause id the code cites is defined in docs/RUN-MODEL.md.
package docs
