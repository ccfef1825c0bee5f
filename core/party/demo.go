package party

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/partyhq/party/core/demo"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/termsafe"
	"github.com/partyhq/party/core/tmux"
)

// Demo runs the demo (demo.Demo) with the mock agents of mockDir ("" is
// mock/ beside the party binary) on a private tmux server, telling log what
// it does, and stops the server after, leaving nothing behind.
func Demo(ctx context.Context, env *Env, mockDir string, log io.Writer) (demo.Result, error) {
	exe, err := env.Executable()
	if err != nil {
		return demo.Result{}, err
	}
	setup, err := demo.NewSetup(mockDir, exe, env.Getenv("PATH"), os.Getpid())
	if errors.Is(err, demo.ErrNoMocks) {
		return demo.Result{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if err != nil {
		return demo.Result{}, err
	}
	defer func() { _ = setup.Close() }()
	de := &Env{Clock: env.Clock, Getenv: setup.Getenv(env.Getenv), Environ: setup.Environ(env.Environ), Getwd: env.Getwd, Stderr: env.Stderr, StderrTTY: env.StderrTTY, Exe: exe}
	runner := env.Tmux.Runner
	if _, ok := runner.(tmux.ExecRunner); ok {
		runner = nil // runs tmux with the demo's environment
	}
	de.Tmux = NewTmux(tmux.Socket{}, de.Getenv, de.Environ, runner)
	defer demo.StopServer(context.WithoutCancel(ctx), de.Tmux, env.Clock, demo.PartySession)
	d := &demo.Demo{Party: demoParty{de}, Mux: de.Tmux, Clock: env.Clock, Log: log, Setup: setup, Environ: de.Environ}
	res, err := d.Run(ctx)
	if err == nil {
		fmt.Fprintf(log, "\n== stopping: the session, its agents and the tmux server\n")
	}
	return res, err
}

// demoParty runs party's operations for the demo and prints what the
// commands print.
type demoParty struct{ env *Env }

// on is the demo's Env for session.
func (p demoParty) on(session string) *Env {
	e := *p.env
	e.Session, e.cfg, e.registryNoted = session, nil, false
	return &e
}

func (p demoParty) Start(ctx context.Context, w io.Writer, s demo.Session) (string, error) {
	env := p.on(s.Name)
	res, err := Start(ctx, env, session.StartOptions{Name: s.Name, Cwd: s.Cwd, Panes: s.Panes, Review: s.Review, Size: "160x48", Fresh: true})
	if err != nil {
		return "", err
	}
	fmt.Fprintln(w, res)
	sc, err := env.OpenParty(ctx)
	return sc.Info.StateDir, err
}

func (p demoParty) Panes(ctx context.Context, w io.Writer, session string) error {
	panes, err := Panes(ctx, p.on(session))
	if err != nil {
		return err
	}
	return termsafe.WriteTable(w, PaneHeader(panes), termsafe.Rows(panes))
}

func (p demoParty) Send(ctx context.Context, session, role, text string) (json.RawMessage, error) {
	s, err := Send(ctx, p.on(session), SendRequest{Role: role, Text: text})
	var out bytes.Buffer
	_ = termsafe.WriteJSON(&out, s)
	return out.Bytes(), err
}
