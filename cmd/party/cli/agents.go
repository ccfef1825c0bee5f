package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
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
	// edit loads the registry, changes it and saves it.
	edit := func(change func(*supervise.Registry) error) error {
		r, err := openRegistry(f)
		if err != nil {
			return err
		}
		if err := change(r); err != nil {
			return err
		}
		return r.Save(config.TrustStoreFor(f.Getenv), f.Clock.Now())
	}
	register := func(update bool) func(c *cobra.Command, args []string) error {
		return func(c *cobra.Command, args []string) error {
			var remark *string
			if len(args) == 3 {
				remark = &args[2]
			}
			var e supervise.Entry
			err := edit(func(r *supervise.Registry) (err error) {
				e, err = r.Register(c.Context(), f.Tmux(), args[0], args[1], remark, update)
				return err
			})
			if err != nil {
				return err
			}
			return f.show(map[string]supervise.Entry{args[0]: e}, "%s -> %s", args[0], e.Pane)
		}
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "init", Short: "Create an empty registry in ./.party", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				var path string
				if err := edit(func(r *supervise.Registry) error { path = r.Path; return nil }); err != nil {
					return err
				}
				return f.show(map[string]string{"registry": path}, "%s", path)
			},
		},
		&cobra.Command{Use: "add NAME PANE [REMARK]", Short: "Register a pane (id %N or a tmux target) under NAME", Args: argsBetween(2, 3), RunE: register(false)},
		&cobra.Command{Use: "update NAME PANE [REMARK]", Short: "Point NAME at another pane", Args: argsBetween(2, 3), RunE: register(true)},
		&cobra.Command{
			Use: "remove NAME", Short: "Forget NAME", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				if err := edit(func(r *supervise.Registry) error { return r.Remove(args[0]) }); err != nil {
					return err
				}
				return f.show(map[string]string{"removed": args[0]}, "removed %s", args[0])
			},
		},
		&cobra.Command{
			Use: "list", Short: "List registered agents", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				r, err := openRegistry(f)
				if err != nil {
					return err
				}
				var rows [][]string
				for _, n := range r.Names() {
					rows = append(rows, []string{n, r.Agents[n].Pane, orDash(r.Agents[n].Agent), r.Agents[n].Remark})
				}
				return f.showTable(r.Agents, []string{"NAME", "PANE", "AGENT", "REMARK"}, rows)
			},
		},
	)
	return cmd
}

// openRegistry loads the registry of the working directory.
func openRegistry(f *Factory) (*supervise.Registry, error) {
	wd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	return supervise.Load(supervise.Path(wd))
}

// CheckOptions are the inputs of party check.
type CheckOptions struct {
	Role  string
	Lines int
}

func newCheckCmd(f *Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{}
	return &cobra.Command{Use: "check ROLE [LINES]", Short: "Print the last LINES lines (default 40) of an agent's pane", Args: argsBetween(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Lines = args[0], 40
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n <= 0 {
					return fmt.Errorf("%w: LINES %q must be a positive number", errUsage, args[1])
				}
				opts.Lines = n
			}
			return run(c, f, opts, runF, checkRun)
		}}
}

func checkRun(ctx context.Context, f *Factory, opts *CheckOptions) error {
	tc := f.Tmux()
	t, err := f.env().Resolve(ctx, opts.Role)
	if err != nil {
		return err
	}
	screen, err := tc.Capture(ctx, t.Pane.ID, opts.Lines)
	if err != nil {
		return err
	}
	lines := session.LastLines(screen, opts.Lines)
	return f.show(map[string]any{"role": opts.Role, "pane": t.Pane.ID, "lines": lines}, "%s", strings.Join(lines, "\n"))
}
