package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/session"
)

// SendOptions are the inputs of party send.
type SendOptions struct {
	Role  string
	Text  string
	Stdin bool // read the text from stdin ("-")
	Force bool
	Raw   bool // send a command on purpose: no literal rule
	Clear bool // empty the input box of someone else's text first
}

func newSendCmd(f *Factory, runF func(context.Context, *SendOptions) error) *cobra.Command {
	opts := &SendOptions{}
	cmd := &cobra.Command{Use: "send ROLE [--] TEXT|-", Short: "Deliver a message to the agent with ROLE and confirm it was submitted",
		Long: `Paste TEXT (or stdin with -) into ROLE's input box, press Enter once it shows,
and confirm the agent took it: submitted, queued (busy), unconfirmed (exit
6). A leading '!' or '/' is made plain text or refused (exit 2) unless
--raw. Someone else's text in the box exits 7 unless --clear; a dead pane
or one not running its agent exits 3; a menu or dialog exits 1 unless --force.`,
		Example: `  party send claude 'Review the diff in /tmp/x.patch'
  git diff | party send codex -
  party send codex -- '-n is not a flag here'
  party send claude --raw /compact`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if args[1] == "-" {
				opts.Stdin = true
			} else {
				opts.Text = args[1]
			}
			return run(c, f, opts, runF, sendRun)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "send even when a menu or dialog is on screen")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "send the text as the agent reads it: a leading / or ! is its command")
	cmd.Flags().BoolVar(&opts.Clear, "clear", false, "empty the input box first when it holds someone else's text")
	return cmd
}

// sendJSON is what party send --json prints.
type sendJSON struct {
	Role    string `json:"role"`
	Session string `json:"session,omitempty"`
	deliver.Result
	MS    int64      `json:"ms"`
	Error *errorJSON `json:"error,omitempty"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// newErrorJSON is err as --json reports it.
func newErrorJSON(err error) *errorJSON {
	code, _ := classify(err)
	return &errorJSON{Code: code, Message: err.Error()}
}

func sendRun(ctx context.Context, f *Factory, opts *SendOptions) error {
	text, err := messageText(f, opts.Text, opts.Stdin)
	if err != nil {
		return err
	}
	out := sendJSON{Role: opts.Role, Result: deliver.Result{Outcome: deliver.Failed}}
	err = func() error {
		t, err := f.env().Resolve(ctx, opts.Role)
		if err != nil {
			return err
		}
		out.Session, out.Pane = t.Session, t.Pane.ID
		root, err := f.env().StateRoot()
		if err != nil {
			return err
		}
		if text, err = deliver.Spill(session.StateDir(root, t.Info), text); err != nil {
			return err
		}
		cfg, err := f.env().Config()
		if err != nil {
			return err
		}
		d := f.env().Deliverer(root, t.Info, map[string]string{t.Pane.ID: opts.Role})
		out.Result, err = d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(opts.Role, t.Profile), Text: text, Force: opts.Force, Raw: opts.Raw, Clear: opts.Clear})
		out.MS = out.Result.Duration.Milliseconds()
		return err
	}()
	switch {
	case err != nil && f.JSON:
		out.Error = newErrorJSON(err)
		writeJSON(f.IO.Out, out)
		return &reported{error: err, json: true}
	case err != nil:
		return err
	}
	return f.show(out, "%s to %s (%s)", out.Outcome, opts.Role, out.Pane)
}
