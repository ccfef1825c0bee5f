package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newTalkCmd(f *Factory, runF func(context.Context, *party.TalkOptions) error) *cobra.Command {
	opts := &party.TalkOptions{}
	cmd := &cobra.Command{Use: "talk ROLE[@HOST]|all[@HOST] TEXT|-", Short: "Send a message and, with --wait, wait for the agent's answer",
		Long: `Deliver TEXT (or stdin with -) to ROLE, or to every agent pane with "all";
with --wait print the answer, known from the agent's hooks or else from a
nonce marker (--marker forces it). A timeout exits 4 with the last screen,
a dying pane 3, Ctrl-C 130. A second talk to a busy agent waits its turn,
or with --no-queue exits 5. An agent whose budget is spent (budget.*) exits
9 unless --force --why TEXT, which the team's event log keeps.

ROLE@HOST talks to the role on another host (hosts.NAME.ssh, or an SSH
destination): party talk runs there over SSH with the text on its stdin,
never on a command line, and waits there. A connection that breaks during
--wait exits 10 (HOST_CONNECTION_LOST); the turn there goes on
(docs/hosts.md). Not from inside an agent's pane.`,
		Example: `  party talk codex 'Run the tests' --wait --timeout 5m
  party talk all 'Summarize your work so far' --wait --json
  party talk codex@box 'Run the slow tests' --wait`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Text = args[0], args[1]
			return run(c, f, opts, runF, talkRun)
		},
	}
	fl := cmd.Flags()
	durationVar(fl, &opts.Delay, "delay", 0, "", "wait this long before sending (500ms, 2s, or milliseconds)")
	fl.BoolVar(&opts.Wait, "wait", false, "wait for the answer and print it")
	durationVar(fl, &opts.Timeout, "timeout", 0, "defaults.timeout", "give up waiting after this long (default: defaults.timeout, 60s)")
	fl.BoolVar(&opts.NoPreamble, "no-preamble", false, "do not prepend the agent's preamble")
	fl.BoolVar(&opts.Marker, "marker", false, "detect completion with a nonce marker even when hooks are wired")
	fl.BoolVar(&opts.NoQueue, "no-queue", false, "fail at once (exit 5) when another talk is waiting on the agent")
	fl.BoolVar(&opts.Clear, "clear", false, "empty the input box first when it holds someone else's text")
	fl.BoolVar(&opts.Force, "force", false, "with --why: talk to an agent whose budget is spent")
	fl.StringVar(&opts.Why, "why", "", "with --force: why the agent's spent budget is overridden (kept in the event log)")
	return cmd
}

// talkRun talks (the text from stdin for "-") and prints each agent's
// outcome; it returns the first agent's error.
func talkRun(ctx context.Context, f *Factory, opts *party.TalkOptions) error {
	o := *opts
	var err error
	if o.Text, err = messageText(f, o.Text); err != nil {
		return err
	}
	o.Usage = f.JSON // the turn's usage is in the JSON only
	out, err := party.Talk(ctx, f.env(), o)
	if err != nil {
		return err
	}
	all := o.Role == "all"
	var first error
	for _, r := range out {
		if first == nil {
			first = r.Err
		}
	}
	if f.JSON {
		if all {
			writeJSON(f.IO.Out, out)
		} else {
			writeJSON(f.IO.Out, out[0])
		}
		if first != nil {
			return &reported{error: first, json: true}
		}
		return nil
	}
	for _, r := range out {
		switch {
		case r.Err != nil && all:
			fmt.Fprintf(f.IO.ErrOut, "party: %s (%s): %s\n", r.Role, r.Pane, termsafe.Text(r.Err.Error()))
		case r.Err != nil:
		case o.Wait && all:
			// The answer is the agent's own text: terminal-safe.
			fmt.Fprintf(f.IO.Out, "== %s (%s)\n%s\n", r.Role, r.Pane, termsafe.Text(*r.Answer))
		case o.Wait:
			fmt.Fprintln(f.IO.Out, termsafe.Text(*r.Answer))
		default:
			fmt.Fprintf(f.IO.Out, "%s to %s (%s)\n", r.Outcome, r.Role, r.Pane)
		}
	}
	if all && first != nil {
		return &reported{error: first, text: true}
	}
	return first
}
