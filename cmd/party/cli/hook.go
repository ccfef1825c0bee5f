package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// HookOptions are the inputs of party hook.
type HookOptions struct {
	Agent   string // claude | gemini | codex-notify
	Payload []byte // codex: the last argument
}

func newHookCmd(f *Factory, runF func(context.Context, *HookOptions) error) *cobra.Command {
	opts := &HookOptions{}
	return &cobra.Command{
		Use:   "hook claude | hook gemini | hook codex-notify JSON",
		Short: "Record an agent's hook event (run by the agents, not by you)",
		Long: `Record one hook of an agent in its session's event log and wake whoever
waits for it. Claude Code and Gemini CLI give the hook JSON on stdin, Codex
as the last argument. It always exits 0 at once, so it never blocks or
fails the agent; problems go to stderr. For Gemini it prints {} (Gemini
reads a hook's stdout as its decision) and exits 1 only when the payload is
not Gemini's hook JSON.`,
		Hidden: true,
		// Any words: a hook that cannot be used says why on stderr and
		// still exits 0.
		Args:               cobra.ArbitraryArgs,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				fmt.Fprintf(f.IO.ErrOut, "party hook: want an agent (claude, gemini, codex-notify) and, for codex, its JSON; got %d arguments\n", len(args))
				return nil
			}
			opts.Agent = args[0]
			if len(args) == 2 {
				opts.Payload = []byte(args[1])
			}
			return run(c, f, opts, runF, hookRun)
		},
	}
}

// hookRun records the hook. Gemini parses a hook's stdout (or, when it is
// empty, its stderr) as the hook's decision, and an exit status of 2 as a
// denial that re-prompts the model: so for Gemini stdout is always {} (no
// decision), the status 0, or 1 (a warning in Gemini, never a denial) when
// the payload is not Gemini's hook JSON.
func hookRun(ctx context.Context, f *Factory, opts *HookOptions) error {
	err := party.Hook(ctx, f.env(), f.IO.In, f.IO.Out, opts.Agent, opts.Payload)
	if opts.Agent == "gemini" {
		fmt.Fprintln(f.IO.Out, "{}")
	}
	if err == nil {
		return nil
	}
	fmt.Fprintf(f.IO.ErrOut, "party hook: %v\n", err)
	if opts.Agent == "gemini" && errors.Is(err, party.ErrHookPayload) {
		return &reported{error: err, text: true, json: true}
	}
	return nil
}
