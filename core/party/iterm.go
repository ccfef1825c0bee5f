package party

import (
	"context"
	"os"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/iterm"
	"github.com/partyhq/party/core/session"
)

// AttachOptions are the inputs of Attach.
type AttachOptions struct {
	Session string // "" picks the session (party attach); party start gives its own
	Raw     bool   // a plain client, even in iTerm2
}

// AttachPlan is how Attach shows a session, as party attach --json prints
// it before it attaches.
type AttachPlan struct {
	Session string `json:"session"`
	iterm.Choice
	// View is the session a control-mode client attaches to.
	View string `json:"view,omitempty"`
}

// PlanAttach picks the session and decides how the terminal attaches
// (iterm.Wanted); in control mode it makes the session's iTerm2 view.
func PlanAttach(ctx context.Context, env *Env, opts AttachOptions) (AttachPlan, error) {
	name := opts.Session
	if name == "" {
		sc, err := env.Open(ctx)
		if err != nil {
			return AttachPlan{}, err
		}
		name = sc.Session
	}
	cfg, err := env.Config()
	if err != nil {
		return AttachPlan{}, err
	}
	plan := AttachPlan{Session: name, Choice: iterm.Wanted(env.Getenv, opts.Raw, cfg.ITerm.ControlMode)}
	if plan.Control {
		if plan.View, err = iterm.View(ctx, env.Tmux, name, daemon.Background); err != nil {
			return plan, err
		}
	}
	return plan, nil
}

// Attach shows the session of plan on the terminal (session.Attach), in
// control mode on its view when the plan says so.
func Attach(ctx context.Context, env *Env, plan AttachPlan, term session.Terminal) error {
	term.InTmux = env.Getenv("TMUX") != ""
	term.ControlView = plan.View
	return session.Attach(ctx, env.Tmux, plan.Session, term, func(msg string) { env.Warnf("%s", msg) })
}

// ProfileResult is what party iterm profile did (core/iterm).
type ProfileResult = iterm.ProfileResult

// ITermProfile is the dynamic profile that runs this party binary, and
// with install writes it where iTerm2 reads it (under $HOME):
// iterm.ProfileFor.
func ITermProfile(env *Env, install bool) (ProfileResult, error) {
	exe, err := env.Executable()
	if err != nil {
		return ProfileResult{}, err
	}
	home := env.Getenv("HOME")
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return ProfileResult{}, err
		}
	}
	return iterm.ProfileFor(exe, home, install)
}
