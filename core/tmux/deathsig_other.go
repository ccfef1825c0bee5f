//go:build !linux

package tmux

import "syscall"

// dieWithParent is Linux-only (prctl PR_SET_PDEATHSIG); elsewhere the
// client ends when its stdin closes with party.
func dieWithParent(*syscall.SysProcAttr) {}
