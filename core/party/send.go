package party

import (
	"context"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/session"
)

// SendRequest is a message for Send.
type SendRequest struct {
	Role  string
	Text  string
	Force bool // send even with a menu or dialog on screen
	Raw   bool // send a command on purpose: no literal rule
	Clear bool // empty the input box of someone else's text first
	// Why, with Force, sends to an agent whose budget is spent, and is
	// logged with the override.
	Why string
}

// Sent is what Send did, as party send --json prints it: the role, the
// session of its pane, the delivery's result and its error.
type Sent struct {
	Role string `json:"role"`
	// Host is the host the role is on (ROLE@HOST); none: this one.
	Host    string `json:"host,omitempty"`
	Session string `json:"session,omitempty"`
	deliver.Result
	MS    int64               `json:"ms"`
	Error *exitcode.ErrorInfo `json:"error,omitempty"`
}

// Send delivers req.Text to the pane of req.Role through the one delivery
// path, a text too long to paste spilled to a file of the session's state
// dir. On an error, Sent still holds what was known: the session and pane
// once resolved, and the Failed outcome.
func Send(ctx context.Context, env *Env, req SendRequest) (s Sent, err error) {
	s = Sent{Role: req.Role, Result: deliver.Result{Outcome: deliver.Failed}}
	defer func() { s.MS, s.Error = s.Duration.Milliseconds(), exitcode.ErrorOf(err) }()
	role, host, err := remote.RoleAt(req.Role)
	if err != nil {
		return s, err
	}
	if host != "" {
		return hostSend(ctx, env, role, host, req)
	}
	t, err := env.Resolve(ctx, req.Role)
	if err != nil {
		host, err := roleElsewhere(ctx, env, req.Role, err)
		if host == "" {
			return s, err
		}
		return hostSend(ctx, env, req.Role, host, req)
	}
	s.Session, s.Pane = t.Session, t.Pane.ID
	root, err := env.StateRoot()
	if err != nil {
		return s, err
	}
	if err := checkBudget(env, t.Session, session.StateDir(root, t.Info), req.Role, req.Force, req.Why); err != nil {
		return s, err
	}
	text, err := deliver.Spill(session.StateDir(root, t.Info), req.Text)
	if err != nil {
		return s, err
	}
	cfg, err := env.Config()
	if err != nil {
		return s, err
	}
	d := env.Deliverer(root, t.Info, map[string]string{t.Pane.ID: req.Role})
	s.Result, err = d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(req.Role, t.Profile), Text: text,
		Force: req.Force, Raw: req.Raw, Clear: req.Clear})
	return s, err
}
