// Package desktop holds the desktop smoke test: the real binary, built with
// the desktop tags, in a real window under Xvfb. It builds only with the
// smoke tag (`make test-desktop`), because it needs Xvfb, xdotool and
// ImageMagick, which `make test` installs.
package desktop
