package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
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
state dir, so a second run reads only what the agents wrote since.`,
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
	sums, err := party.Usage(ctx, f.env(), *opts)
	if err == nil && len(sums) == 0 && !f.JSON {
		fmt.Fprintln(f.IO.ErrOut, "no usage recorded here yet (party usage --all: every folder's teams)")
		return nil
	}
	rows := make([][]string, len(sums))
	for i, s := range sums {
		rows[i] = party.UsageRow(s)
	}
	return f.showTable(err, nonNil(sums), party.UsageHeader(opts.By), rows)
}
