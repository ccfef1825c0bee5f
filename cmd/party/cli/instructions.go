package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// InstructionsOptions are the inputs of party instructions.
type InstructionsOptions struct {
	Agent string // claude | codex | pm
}

func newInstructionsCmd(f *Factory, runF func(context.Context, *InstructionsOptions) error) *cobra.Command {
	opts := &InstructionsOptions{}
	return &cobra.Command{
		Use:   "instructions claude|codex|pm",
		Short: "Print the review-loop and task instructions for CLAUDE.md or AGENTS.md",
		Long: `Print Markdown that tells an agent how party's review loop works: for
claude, the implementer (add it to CLAUDE.md); for codex, the reviewer (add
it to AGENTS.md). Both end with the party pm commands for the team's tasks;
pm prints only those, short enough for a preamble. For example:
party instructions claude >> CLAUDE.md`,
		Args:      argsBetween(1, 1),
		ValidArgs: []string{"claude", "codex", "pm"},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Agent = args[0]
			if _, ok := party.Instructions(opts.Agent); !ok {
				return fmt.Errorf("%w: unknown agent %q (want claude, codex or pm)", party.ErrUsage, opts.Agent)
			}
			return run(c, f, opts, runF, instructionsRun)
		},
	}
}

func instructionsRun(_ context.Context, f *Factory, opts *InstructionsOptions) error {
	text, _ := party.Instructions(opts.Agent)
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"agent": opts.Agent, "text": text})
		return nil
	}
	_, err := io.WriteString(f.IO.Out, text)
	return err
}
