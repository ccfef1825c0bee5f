package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/talk"
)

// TalkOptions are the inputs of party talk: the options of party.Talk, and
// Stdin when the text is to be read from stdin ("-").
type TalkOptions struct {
	party.TalkOptions
	Stdin bool
}

func newTalkCmd(f *Factory, runF func(context.Context, *TalkOptions) error) *cobra.Command {
	opts := &TalkOptions{}
	cmd := &cobra.Command{Use: "talk ROLE|all TEXT|-", Short: "Send a message and, with --wait, wait for the agent's answer",
		Long: `Deliver TEXT (or stdin with -) to ROLE, or to every agent pane with "all";
with --wait print the answer, known from the agent's hooks or else from a
nonce marker (--marker forces it). A timeout exits 4 with the last screen,
a dying pane 3, Ctrl-C 130. A second talk to a busy agent waits its turn,
or with --no-queue exits 5.`,
		Example: `  party talk codex 'Run the tests' --wait --timeout 5m
  party talk all 'Summarize your work so far' --wait --json`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if args[1] == "-" {
				opts.Stdin = true
			} else {
				opts.Text = args[1]
			}
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
	return cmd
}

func talkRun(ctx context.Context, f *Factory, opts *TalkOptions) error {
	o := opts.TalkOptions
	var err error
	if o.Text, err = messageText(f, o.Text, opts.Stdin); err != nil {
		return err
	}
	results, err := party.Talk(ctx, f.env(), o)
	if err != nil {
		return err
	}
	return talkReport(f, opts, results)
}

// talkJSON is one agent's outcome.
type talkJSON struct {
	Role    string          `json:"role"`
	Pane    string          `json:"pane,omitempty"`
	Outcome deliver.Outcome `json:"outcome"`
	Answer  *string         `json:"answer,omitempty"`
	Via     string          `json:"via,omitempty"`
	MS      int64           `json:"ms"`
	Error   *errorJSON      `json:"error,omitempty"`
	err     error
}

// talkReport prints the results and returns the first error.
func talkReport(f *Factory, opts *TalkOptions, results []talk.Result) error {
	all := opts.Role == "all"
	out := make([]talkJSON, len(results))
	var first error
	for i, r := range results {
		out[i] = talkJSON{Role: r.Role, Pane: r.Pane, Outcome: r.Outcome, Answer: r.Answer, Via: r.Via, MS: r.Elapsed.Milliseconds(), err: r.Err}
		if r.Err != nil {
			out[i].Error = newErrorJSON(r.Err)
			if first == nil {
				first = r.Err
			}
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
		case r.err != nil && all:
			fmt.Fprintf(f.IO.ErrOut, "party: %s (%s): %v\n", r.Role, r.Pane, r.err)
		case r.err != nil:
		case opts.Wait && all:
			fmt.Fprintf(f.IO.Out, "== %s (%s)\n%s\n", r.Role, r.Pane, *r.Answer)
		case opts.Wait:
			fmt.Fprintln(f.IO.Out, *r.Answer)
		default:
			fmt.Fprintf(f.IO.Out, "%s to %s (%s)\n", r.Outcome, r.Role, r.Pane)
		}
	}
	if all && first != nil {
		return &reported{error: first, text: true}
	}
	return first
}
