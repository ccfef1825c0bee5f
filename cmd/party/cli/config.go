package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
)

// Config loads the configuration once per command; warnings about unknown
// keys go to stderr.
func (f *Factory) Config() (config.Config, error) {
	if f.cfg != nil {
		return *f.cfg, nil
	}
	cwd, err := f.Getwd()
	if err != nil {
		return config.Config{}, err
	}
	c, warns, err := config.Load(f.Getenv, cwd)
	for _, w := range warns {
		fmt.Fprintf(f.IO.ErrOut, "party: warning: %s\n", w)
	}
	if err != nil {
		return c, err
	}
	f.cfg = &c
	return c, nil
}

// tuned applies the configured settle time of an agent to its profile.
func tuned(c config.Config, role string, p agent.Profile) agent.Profile {
	if a := c.AgentFor(role, string(p.Kind)); a.SettleMs > 0 {
		p.Settle = time.Duration(a.SettleMs) * time.Millisecond
	}
	return p
}

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show, get and set configuration",
		Long: `Configuration is layered: built-in defaults, then the global file
($XDG_CONFIG_HOME/party/config.json, else ~/.config/party/config.json), then
the local ./.party/config.json, then flags. Keys: defaults.timeout,
defaults.pollInterval, defaults.captureLines, preambleMode (always|disabled),
agents.NAME.{command,preamble,settleMs,marker}, where NAME is a role or an
agent kind.`,
		Args: argsBetween(0, 0),
	}
	var global bool
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set KEY in the local config file (--global: the global one)",
		Args:  argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			cwd, err := f.Getwd()
			if err != nil {
				return err
			}
			g, l := config.Paths(f.Getenv, cwd)
			path := l
			if global {
				path = g
			}
			if err := config.Set(path, args[0], args[1]); err != nil {
				return err
			}
			if f.JSON {
				writeJSON(f.IO.Out, map[string]string{"key": args[0], "value": args[1], "file": path})
			} else {
				fmt.Fprintf(f.IO.Out, "%s = %s (%s)\n", args[0], args[1], path)
			}
			return nil
		},
	}
	set.Flags().BoolVar(&global, "global", false, "write the global config file")
	cmd.AddCommand(
		&cobra.Command{
			Use: "show", Short: "Print the effective configuration and where each value comes from", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				cfg, err := f.Config()
				if err != nil {
					return err
				}
				flat := cfg.Flat()
				if f.JSON {
					out := map[string]map[string]string{}
					for _, k := range cfg.Keys() {
						out[k] = map[string]string{"value": flat[k], "source": cfg.Sources[k]}
					}
					writeJSON(f.IO.Out, out)
					return nil
				}
				t := newTable(f.IO.Out, "KEY", "VALUE", "SOURCE")
				for _, k := range cfg.Keys() {
					t.row(k, flat[k], orDash(cfg.Sources[k]))
				}
				return t.flush()
			},
		},
		&cobra.Command{
			Use: "get KEY", Short: "Print the effective value of KEY", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				cfg, err := f.Config()
				if err != nil {
					return err
				}
				v, err := cfg.Get(args[0])
				if err != nil {
					return err
				}
				if f.JSON {
					writeJSON(f.IO.Out, map[string]string{"key": args[0], "value": v, "source": cfg.Sources[args[0]]})
				} else {
					fmt.Fprintln(f.IO.Out, v)
				}
				return nil
			},
		},
		set,
	)
	return cmd
}
