package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newSendCmd(f *Factory, runF func(context.Context, *party.SendRequest) error) *cobra.Command {
	opts := &party.SendRequest{}
	cmd := &cobra.Command{Use: "send ROLE[@HOST] [--] TEXT|-", Short: "Deliver a message to the agent with ROLE and confirm it was submitted",
		Long: `Paste TEXT (or stdin with -) into ROLE's input box, press Enter once it shows,
and confirm the agent took it: submitted, queued (busy), unconfirmed (exit
6). A leading '!' or '/' is made plain text or refused (exit 2) unless
--raw. Someone else's text in the box exits 7 unless --clear; a dead pane
or one not running its agent exits 3; a menu or dialog exits 1 unless --force.
An agent whose budget is spent (budget.*) exits 9 unless --force --why TEXT,
which the team's event log keeps.

ROLE@HOST sends to the role on another host (hosts.NAME.ssh, or an SSH
destination): party send runs there over SSH with the text on its stdin,
never on a command line, and its outcome and exit status come back
(docs/hosts.md). Not from inside an agent's pane.`,
		Example: `  party send claude 'Review the diff in /tmp/x.patch'
  git diff | party send codex -
  party send codex -- '-n is not a flag here'
  party send codex@box 'Pull main and run the tests'
  party send claude --raw /compact`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Text = args[0], args[1]
			return run(c, f, opts, runF, sendRun)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "send even when a menu or dialog is on screen, or (with --why) when the agent's budget is spent")
	cmd.Flags().StringVar(&opts.Why, "why", "", "with --force: why the agent's spent budget is overridden (kept in the event log)")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "send the text as the agent reads it: a leading / or ! is its command")
	cmd.Flags().BoolVar(&opts.Clear, "clear", false, "empty the input box first when it holds someone else's text")
	return cmd
}

// sendRun sends the text (stdin for "-"); with --json a failure prints
// what was known, as a success does.
func sendRun(ctx context.Context, f *Factory, opts *party.SendRequest) error {
	req := *opts
	var err error
	if req.Text, err = messageText(f, req.Text); err != nil {
		return err
	}
	s, err := party.Send(ctx, f.env(), req)
	if err != nil && f.JSON {
		writeJSON(f.IO.Out, s)
		return &reported{error: err, json: true}
	}
	if note := s.WentWith(); err == nil && note != "" && !f.JSON {
		fmt.Fprintf(f.IO.ErrOut, "party: send to %s: %s\n", s.Role, termsafe.Text(note))
	}
	return f.show(err, s, "%s to %s (%s)", s.Outcome, s.Role, s.Pane)
}
