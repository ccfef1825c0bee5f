package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// registry is the local agent registry (.party/agents.json): names for
// panes party did not start, as tmux-team keeps them.
type registry struct {
	Agents map[string]registered `json:"agents"`
}

type registered struct {
	Pane   string `json:"pane"`
	Remark string `json:"remark,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

const registryFile = ".party/agents.json"

func registryPath(f *Factory) (string, error) {
	wd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, registryFile), nil
}

// loadRegistry reads the registry; a missing file is an empty registry.
func loadRegistry(path string) (registry, error) {
	r := registry{Agents: map[string]registered{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%w: %s: %v", errUsage, path, err)
	}
	if r.Agents == nil {
		r.Agents = map[string]registered{}
	}
	return r, nil
}

// saveRegistry writes the registry; it stays trusted when it was (or is
// new), as the change is the user's.
func saveRegistry(f *Factory, path string, r registry) error {
	return keepTrust(f, path, func() error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(r, "", "  ")
		return state.WriteFile(path, append(b, '\n'), 0o644)
	})
}

func newAgentsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Manage the local registry of agent panes party did not start",
		Long: `Name panes that party did not start, so that send, talk and check reach
them by name. The registry is ./.party/agents.json. A registered name wins
over a pane tagged with the same role.`,
		Args: argsBetween(0, 0),
	}
	add := func(update bool) func(c *cobra.Command, args []string) error {
		return func(c *cobra.Command, args []string) error {
			path, r, err := openRegistry(f)
			if err != nil {
				return err
			}
			name, pane := args[0], args[1]
			_, exists := r.Agents[name]
			switch {
			case update && !exists:
				return fmt.Errorf("%w: no agent %q registered (use 'party agents add')", errUsage, name)
			case !update && exists:
				return fmt.Errorf("agent %q is already registered (use 'party agents update'): %w", name, errConflict)
			}
			if !session.ValidRole(name) {
				return fmt.Errorf("%w: agent name %q: letters, digits, '_', '.' or '-'", errUsage, name)
			}
			id, command, err := paneID(c.Context(), f, pane)
			if err != nil {
				return err
			}
			e := r.Agents[name]
			e.Pane, e.Agent = id, string(agent.Infer([]string{name}))
			if e.Agent == string(agent.Generic) {
				e.Agent = string(agent.Infer([]string{command})) // what the pane runs
			}
			if len(args) == 3 {
				e.Remark = args[2]
			}
			r.Agents[name] = e
			if err := saveRegistry(f, path, r); err != nil {
				return err
			}
			return printAgent(f, name, e)
		}
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "init", Short: "Create an empty registry in ./.party", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				path, r, err := openRegistry(f)
				if err != nil {
					return err
				}
				if err := saveRegistry(f, path, r); err != nil {
					return err
				}
				if f.JSON {
					writeJSON(f.IO.Out, map[string]string{"registry": path})
				} else {
					fmt.Fprintln(f.IO.Out, path)
				}
				return nil
			},
		},
		&cobra.Command{Use: "add NAME PANE [REMARK]", Short: "Register a pane (id %N or a tmux target) under NAME", Args: argsBetween(2, 3), RunE: add(false)},
		&cobra.Command{Use: "update NAME PANE [REMARK]", Short: "Point NAME at another pane", Args: argsBetween(2, 3), RunE: add(true)},
		&cobra.Command{
			Use: "remove NAME", Short: "Forget NAME", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				path, r, err := openRegistry(f)
				if err != nil {
					return err
				}
				if _, ok := r.Agents[args[0]]; !ok {
					return fmt.Errorf("no agent %q registered: %w", args[0], errNotRegistered)
				}
				delete(r.Agents, args[0])
				if err := saveRegistry(f, path, r); err != nil {
					return err
				}
				if f.JSON {
					writeJSON(f.IO.Out, map[string]string{"removed": args[0]})
				} else {
					fmt.Fprintf(f.IO.Out, "removed %s\n", args[0])
				}
				return nil
			},
		},
		&cobra.Command{
			Use: "list", Short: "List registered agents", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				_, r, err := openRegistry(f)
				if err != nil {
					return err
				}
				if f.JSON {
					writeJSON(f.IO.Out, r.Agents)
					return nil
				}
				names := make([]string, 0, len(r.Agents))
				for n := range r.Agents {
					names = append(names, n)
				}
				sort.Strings(names)
				t := newTable(f.IO.Out, "NAME", "PANE", "AGENT", "REMARK")
				for _, n := range names {
					e := r.Agents[n]
					t.row(n, e.Pane, orDash(e.Agent), e.Remark)
				}
				return t.flush()
			},
		},
	)
	return cmd
}

var errNotRegistered = fmt.Errorf("not registered: %w", mux.ErrNoPane)

func openRegistry(f *Factory) (string, registry, error) {
	path, err := registryPath(f)
	if err != nil {
		return "", registry{}, err
	}
	r, err := loadRegistry(path)
	return path, r, err
}

// paneID turns a tmux target into a stable pane id, checking it exists,
// and says what the pane runs.
func paneID(ctx context.Context, f *Factory, target string) (string, string, error) {
	rows, err := f.Tmux().Query(ctx, []string{"#{pane_id}", "#{pane_current_command}"}, "display-message", "-p", "-t", target)
	if err != nil {
		return "", "", fmt.Errorf("pane %q: %w", target, err)
	}
	if len(rows) != 1 || (strings.HasPrefix(target, "%") && rows[0][0] != target) {
		return "", "", fmt.Errorf("pane %q: %w", target, mux.ErrNoPane)
	}
	return rows[0][0], rows[0][1], nil
}

func printAgent(f *Factory, name string, e registered) error {
	if f.JSON {
		writeJSON(f.IO.Out, map[string]registered{name: e})
		return nil
	}
	fmt.Fprintf(f.IO.Out, "%s -> %s\n", name, e.Pane)
	return nil
}

// registeredTarget looks role up in the local registry.
func registeredTarget(ctx context.Context, f *Factory, role string) (target, bool, error) {
	path, err := registryPath(f)
	if err != nil {
		return target{}, false, nil
	}
	r, err := loadRegistry(path)
	if err != nil {
		return target{}, false, err
	}
	e, ok := r.Agents[role]
	if !ok {
		return target{}, false, nil
	}
	// The registry came with the repository: until the user trusts it, its
	// names could send text to any pane (a shell), so none is used.
	if b, err := os.ReadFile(path); err == nil {
		if trusted, err := config.TrustStoreFor(f.Getenv).Trusted(path, b); err != nil || !trusted {
			if !f.registryNoted {
				f.registryNoted = true
				fmt.Fprintf(f.IO.ErrOut, "party: %s is not trusted: ignoring its names (read it, then run 'party config trust')\n", path)
			}
			return target{}, false, err
		}
	}
	p, err := f.Tmux().Pane(ctx, e.Pane)
	if err != nil {
		return target{}, true, fmt.Errorf("agent %q is registered at %s: %w", role, e.Pane, err)
	}
	kind := agent.Kind(e.Agent)
	if p.Agent != "" {
		kind = agent.Kind(p.Agent)
	}
	if p.Role == "" {
		p.Role = role
	}
	info, err := f.Tmux().SessionInfo(ctx, p.Session)
	if err != nil {
		return target{}, true, err
	}
	return target{Session: p.Session, Info: info, Pane: p, Profile: agent.Lookup(kind)}, true, nil
}

// CheckOptions are the inputs of party check.
type CheckOptions struct {
	Role  string
	Lines int
}

func newCheckCmd(f *Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{}
	return &cobra.Command{
		Use:   "check ROLE [LINES]",
		Short: "Print the last LINES lines (default 40) of an agent's pane",
		Args:  argsBetween(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Lines = args[0], 40
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n <= 0 {
					return fmt.Errorf("%w: LINES %q must be a positive number", errUsage, args[1])
				}
				opts.Lines = n
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return checkRun(c.Context(), f, opts)
		},
	}
}

func checkRun(ctx context.Context, f *Factory, opts *CheckOptions) error {
	tc := f.Tmux()
	t, err := resolveRole(ctx, f, tc, opts.Role)
	if err != nil {
		return err
	}
	screen, err := tc.Capture(ctx, t.Pane.ID, opts.Lines)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) > opts.Lines {
		lines = lines[len(lines)-opts.Lines:]
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]any{"role": opts.Role, "pane": t.Pane.ID, "lines": lines})
		return nil
	}
	fmt.Fprintln(f.IO.Out, strings.Join(lines, "\n"))
	return nil
}
