package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/demo"
	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/session"
)

// DemoOptions are the inputs of party demo.
type DemoOptions struct {
	MockDir string
}

func newDemoCmd(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a party of mock agents on a private tmux server",
		Long: `Start the default party (codex, claude, a shell) of mock agents on a private
tmux server, deliver a message to each by role and show what each received;
then run the review loop between a claude and a codex mock in a new git
repository until PR_READY; then stop everything, leaving nothing behind.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, demoRun) },
	}
	cmd.Flags().StringVar(&opts.MockDir, "mock-dir", "", "directory of the mock agents (default: mock/ beside the party binary)")
	return cmd
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error {
	exe, err := f.env().Executable()
	if err != nil {
		return err
	}
	setup, err := demo.NewSetup(opts.MockDir, exe, f.Getenv("PATH"), os.Getpid())
	if errors.Is(err, demo.ErrNoMocks) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err != nil {
		return err
	}
	defer func() { _ = setup.Close() }()
	df := *f
	df.e = nil
	df.Socket, df.SocketPath, df.Session, df.JSON = "", "", "", false
	df.Getenv = setup.Getenv(f.Getenv)
	df.Environ = func() []string { return setup.Environ(f.Environ()) }
	log := f.IO.ErrOut
	if !f.JSON {
		log = f.IO.Out
	}
	tc := df.Tmux()
	defer demo.StopServer(context.WithoutCancel(ctx), tc, f.Clock, demo.PartySession)
	d := &demo.Demo{Party: demoParty{&df}, Mux: tc, Clock: f.Clock, Log: log, Setup: setup, Environ: df.Environ()}
	res, err := d.Run(ctx)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, res)
	}
	fmt.Fprintf(log, "\n== stopping: the session, its agents and the tmux server\n")
	return nil
}

// demoParty runs party's commands for the demo, on the demo's Factory.
type demoParty struct{ f *Factory }

// on is the demo's Factory for session, printing into w.
func (p demoParty) on(session string, w io.Writer) *Factory {
	f := *p.f
	f.e = nil
	f.Session, f.IO.Out = session, w
	return &f
}

func (p demoParty) Start(ctx context.Context, w io.Writer, s demo.Session) (string, error) {
	f := p.on(s.Name, w)
	if err := startRun(ctx, f, &StartOptions{StartOptions: session.StartOptions{Name: s.Name, Cwd: s.Cwd, Panes: s.Panes, Review: s.Review, Size: "160x48"}, NoAttach: true}); err != nil {
		return "", err
	}
	sc, err := f.env().OpenParty(ctx)
	return sc.Info.StateDir, err
}

func (p demoParty) Panes(ctx context.Context, w io.Writer, session string) error {
	return panesRun(ctx, p.on(session, w))
}

func (p demoParty) Send(ctx context.Context, session, role, text string) (json.RawMessage, error) {
	var out strings.Builder
	f := p.on(session, &out)
	f.JSON = true
	err := sendRun(ctx, f, &party.SendRequest{Role: role, Text: text})
	return json.RawMessage(out.String()), err
}
