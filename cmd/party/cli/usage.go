package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newUsageCmd(f *Factory, runF func(context.Context, *party.UsageOptions) error) *cobra.Command {
	opts := &party.UsageOptions{}
	cmd := &cobra.Command{Use: "usage", Short: "What the agents spent: tokens by role, team, model, agent or day",
		Long: `Sum the tokens the agents of the teams party knows here (--all: in any
folder) spent, read from their own records: Claude Code's transcript,
Codex's rollout, Gemini CLI's chat file. Each response counts once. Input
is the input not read from a cache; cache read and cache write are the
cached input; reasoning is the output spent thinking where the agent
records it apart (Codex, Gemini). An agent whose records carry no usage
party reads is listed as unknown, never 0. Each team keeps a ledger in its
state dir, so a second run reads only what the agents wrote since. With
budgets set (budget.*), a second table says what each one bounds, what
was spent against it and what is left; at a budget's limit party send and
party talk to the agents it bounds refuse (exit 9, BUDGET_EXCEEDED) unless
--force --why TEXT.`,
		Example: `  party usage
  party usage --by model --since 24h
  party usage --by day --all --json`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, usageRun) }}
	fl := cmd.Flags()
	fl.StringVar(&opts.By, "by", "role", "group by "+strings.Join(party.UsageGroups, ", "))
	fl.StringVar(&opts.Since, "since", "", "only responses since: a duration back from now (24h) or an RFC 3339 time")
	fl.BoolVar(&opts.All, "all", false, "the teams of every folder")
	return cmd
}

func usageRun(ctx context.Context, f *Factory, opts *party.UsageOptions) error {
	rep, err := party.Usage(ctx, f.env(), *opts)
	if err != nil || f.JSON {
		return f.show(err, rep, "")
	}
	if len(rep.Usage) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no usage recorded here yet (party usage --all: every folder's teams)")
	} else {
		rows := make([][]string, len(rep.Usage))
		for i, s := range rep.Usage {
			rows[i] = party.UsageRow(s)
		}
		if err := termsafe.WriteTable(f.IO.Out, party.UsageHeader(opts.By), rows); err != nil {
			return err
		}
	}
	if len(rep.Budgets) == 0 {
		return nil
	}
	rows := make([][]string, len(rep.Budgets))
	for i, l := range rep.Budgets {
		rows[i] = party.BudgetRow(l)
	}
	fmt.Fprintln(f.IO.Out)
	return termsafe.WriteTable(f.IO.Out, party.BudgetHeader(), rows)
}
