// Package tmux is party's tmux client. Every call is an exec of the tmux
// binary with an argv, never a shell; text reaches panes through stdin
// (load-buffer -), so nothing a user typed is parsed by tmux or a shell.
// Output is read only through -F formats whose separators cannot occur in
// data.
package tmux
