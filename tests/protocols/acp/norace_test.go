//go:build !race

package acp

const raceBuild = false
