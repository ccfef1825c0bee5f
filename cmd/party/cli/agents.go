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
	cmd.AddCommand(newAgentsInitCmd(f, nil), newAgentsRegisterCmd(f, false, nil), newAgentsRegisterCmd(f, true, nil),
		newAgentsRemoveCmd(f, nil), newAgentsListCmd(f, nil))
	return cmd
}

// AgentsInitOptions are the inputs of party agents init (none).
type AgentsInitOptions struct{}

func newAgentsInitCmd(f *Factory, runF func(context.Context, *AgentsInitOptions) error) *cobra.Command {
	opts := &AgentsInitOptions{}
	return &cobra.Command{Use: "init", Short: "Create an empty registry in ./.party", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, agentsInitRun) }}
}

func agentsInitRun(_ context.Context, f *Factory, _ *AgentsInitOptions) error {
	path, err := party.InitAgents(f.env())
	return f.show(err, map[string]string{"registry": path}, "%s", path)
}

// AgentsRegisterOptions are the inputs of party agents add and update.
type AgentsRegisterOptions struct {
	Name, Pane string
	Remark     *string // nil: keep (update) or none (add)
	Update     bool    // update: NAME must exist; add: it must not
}

func newAgentsRegisterCmd(f *Factory, update bool, runF func(context.Context, *AgentsRegisterOptions) error) *cobra.Command {
	opts := &AgentsRegisterOptions{Update: update}
	cmd := &cobra.Command{Use: "add NAME PANE [REMARK]", Short: "Register a pane (id %N or a tmux target) under NAME", Args: argsBetween(2, 3)}
	if update {
		cmd.Use, cmd.Short = "update NAME PANE [REMARK]", "Point NAME at another pane"
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		opts.Name, opts.Pane, opts.Remark = args[0], args[1], nil
		if len(args) == 3 {
			opts.Remark = &args[2]
		}
		return run(c, f, opts, runF, agentsRegisterRun)
	}
	return cmd
}

func agentsRegisterRun(ctx context.Context, f *Factory, opts *AgentsRegisterOptions) error {
	e, err := party.RegisterAgent(ctx, f.env(), opts.Name, opts.Pane, opts.Remark, opts.Update)
	return f.show(err, map[string]party.RegistryEntry{opts.Name: e}, "%s -> %s", opts.Name, e.Pane)
}

// AgentsRemoveOptions are the inputs of party agents remove.
type AgentsRemoveOptions struct{ Name string }

func newAgentsRemoveCmd(f *Factory, runF func(context.Context, *AgentsRemoveOptions) error) *cobra.Command {
	opts := &AgentsRemoveOptions{}
	return &cobra.Command{Use: "remove NAME", Short: "Forget NAME", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Name = args[0]
			return run(c, f, opts, runF, agentsRemoveRun)
		}}
}

func agentsRemoveRun(_ context.Context, f *Factory, opts *AgentsRemoveOptions) error {
	err := party.RemoveAgent(f.env(), opts.Name)
	return f.show(err, map[string]string{"removed": opts.Name}, "removed %s", opts.Name)
}

// AgentsListOptions are the inputs of party agents list (none).
type AgentsListOptions struct{}

func newAgentsListCmd(f *Factory, runF func(context.Context, *AgentsListOptions) error) *cobra.Command {
	opts := &AgentsListOptions{}
	return &cobra.Command{Use: "list", Short: "List registered agents", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, agentsListRun) }}
}

func agentsListRun(_ context.Context, f *Factory, _ *AgentsListOptions) error {
	r, err := party.Agents(f.env())
	if err != nil {
		return err
	}
	return f.showTable(nil, r.Agents, []string{"NAME", "PANE", "AGENT", "REMARK"}, r.Rows())
}

func newCheckCmd(f *Factory, runF func(context.Context, *party.CheckOptions) error) *cobra.Command {
	opts := &party.CheckOptions{}
	return &cobra.Command{Use: "check ROLE[@HOST] [LINES]", Short: "Print the last LINES lines (default 40) of an agent's pane", Args: argsBetween(1, 2),
		Long: `Print the last LINES lines (default 40) of the pane of ROLE; ROLE@HOST
reads it on another host (party check there, over SSH; docs/hosts.md).`,
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
	v := map[string]any{"role": opts.Role, "pane": s.Pane, "lines": s.Lines}
	if s.Host != "" {
		v["role"], _, _ = strings.Cut(opts.Role, "@")
		v["host"] = s.Host
	}
	return f.show(err, v, "%s", strings.Join(s.Lines, "\n"))
}
