package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/partyhq/party/core/tmux"
)

// Terminal is where Attach shows a session: the caller's standard streams,
// and whether it runs inside tmux ($TMUX).
type Terminal struct {
	In          io.Reader
	Out, ErrOut io.Writer
	InTmux      bool
	// ControlView, when set, is the session (an id, $N) a control-mode
	// client (tmux -CC, iTerm2) attaches to instead: the view of the
	// session that core/iterm made.
	ControlView string
}

// Attach shows session name: inside tmux it switches the client to it (a
// client of another server is told how to attach, on Warn); otherwise it
// runs tmux attach on the terminal until the user detaches (in control
// mode with ControlView).
func Attach(ctx context.Context, tc *tmux.Client, name string, term Terminal, warn func(string)) error {
	if term.InTmux {
		if _, err := tc.Run(ctx, "switch-client", "-t", tmux.SessionTarget(name)); err == nil {
			return nil
		}
		warn(fmt.Sprintf("session %s runs on another server; attach with: tmux %s attach -t %s", name, tc.SocketArgs(), name))
		return nil
	}
	argv := tc.Argv("attach-session", "-t", tmux.SessionTarget(name))
	if term.ControlView != "" {
		argv = tc.Argv("-CC", "attach-session", "-t", term.ControlView)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.In, term.Out, term.ErrOut
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("tmux attach: exit %d", ee.ExitCode())
		}
		return fmt.Errorf("tmux attach: %w", err)
	}
	return nil
}
