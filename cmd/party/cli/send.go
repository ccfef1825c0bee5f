package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/party"
)

// SendOptions are the inputs of party send: the request of party.Send, and
// Stdin when the text is to be read from stdin ("-").
type SendOptions struct {
	party.SendRequest
	Stdin bool
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

func sendRun(ctx context.Context, f *Factory, opts *SendOptions) error {
	req := opts.SendRequest
	var err error
	if req.Text, err = messageText(f, req.Text, opts.Stdin); err != nil {
		return err
	}
	s, err := party.Send(ctx, f.env(), req)
	out := sendJSON{Role: opts.Role, Session: s.Session, Result: s.Result, MS: s.Duration.Milliseconds()}
	switch {
	case err != nil && f.JSON:
		out.Error = newErrorJSON(err)
		writeJSON(f.IO.Out, out)
		return &reported{error: err, json: true}
	case err != nil:
		return err
	}
	return f.show(nil, out, "%s to %s (%s)", out.Outcome, opts.Role, out.Pane)
}
