package tmux

import "syscall"

// dieWithParent makes the child get SIGKILL when party exits.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
