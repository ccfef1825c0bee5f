package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/review"
)

// InstructionsOptions are the inputs of party instructions.
type InstructionsOptions struct {
	Agent string // claude | codex
}

func newInstructionsCmd(f *Factory, runF func(context.Context, *InstructionsOptions) error) *cobra.Command {
	opts := &InstructionsOptions{}
	return &cobra.Command{
		Use:   "instructions claude|codex",
		Short: "Print the review-loop instructions for CLAUDE.md or AGENTS.md",
		Long: `Print Markdown that tells an agent how party's review loop works: for
claude, the implementer (add it to CLAUDE.md); for codex, the reviewer (add
it to AGENTS.md). For example: party instructions claude >> CLAUDE.md`,
		Args:      argsBetween(1, 1),
		ValidArgs: []string{"claude", "codex"},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Agent = args[0]
			if _, ok := review.Instructions(opts.Agent); !ok {
				return fmt.Errorf("%w: unknown agent %q (want claude or codex)", errUsage, opts.Agent)
			}
			return run(c, f, opts, runF, instructionsRun)
		},
	}
}

func instructionsRun(_ context.Context, f *Factory, opts *InstructionsOptions) error {
	text, _ := review.Instructions(opts.Agent)
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"agent": opts.Agent, "text": text})
		return nil
	}
	_, err := io.WriteString(f.IO.Out, text)
	return err
}
