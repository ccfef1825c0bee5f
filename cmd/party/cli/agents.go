package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newAgentsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Manage the local registry of agent panes party did not start",
		Long: `Name panes that party did not start, so that send, talk and check reach
them by name. The registry is ./.party/agents.json. A registered name wins
over a pane tagged with the same role.`,
		Args: argsBetween(0, 0),
	}
	register := func(update bool) func(c *cobra.Command, args []string) error {
		return func(c *cobra.Command, args []string) error {
			var remark *string
			if len(args) == 3 {
				remark = &args[2]
			}
			e, err := party.RegisterAgent(c.Context(), f.env(), args[0], args[1], remark, update)
			return f.show(err, map[string]party.RegistryEntry{args[0]: e}, "%s -> %s", args[0], e.Pane)
		}
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "init", Short: "Create an empty registry in ./.party", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				path, err := party.InitAgents(f.env())
				return f.show(err, map[string]string{"registry": path}, "%s", path)
			},
		},
		&cobra.Command{Use: "add NAME PANE [REMARK]", Short: "Register a pane (id %N or a tmux target) under NAME", Args: argsBetween(2, 3), RunE: register(false)},
		&cobra.Command{Use: "update NAME PANE [REMARK]", Short: "Point NAME at another pane", Args: argsBetween(2, 3), RunE: register(true)},
		&cobra.Command{
			Use: "remove NAME", Short: "Forget NAME", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				err := party.RemoveAgent(f.env(), args[0])
				return f.show(err, map[string]string{"removed": args[0]}, "removed %s", args[0])
			},
		},
		&cobra.Command{
			Use: "list", Short: "List registered agents", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				r, err := party.Agents(f.env())
				if err != nil {
					return err
				}
				return f.showTable(nil, r.Agents, []string{"NAME", "PANE", "AGENT", "REMARK"}, r.Rows())
			},
		},
	)
	return cmd
}

func newCheckCmd(f *Factory, runF func(context.Context, *party.CheckOptions) error) *cobra.Command {
	opts := &party.CheckOptions{}
	return &cobra.Command{Use: "check ROLE [LINES]", Short: "Print the last LINES lines (default 40) of an agent's pane", Args: argsBetween(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Lines = args[0], 40
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n <= 0 {
					return fmt.Errorf("%w: LINES %q must be a positive number", party.ErrUsage, args[1])
				}
				opts.Lines = n
			}
			return run(c, f, opts, runF, checkRun)
		}}
}

func checkRun(ctx context.Context, f *Factory, opts *party.CheckOptions) error {
	s, err := party.Check(ctx, f.env(), *opts)
	return f.show(err, map[string]any{"role": opts.Role, "pane": s.Pane, "lines": s.Lines}, "%s", strings.Join(s.Lines, "\n"))
}
