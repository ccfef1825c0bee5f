package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
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
	if len(c.Ignored) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "party: %s is not trusted: ignoring %s (read it, then run 'party config trust')\n",
			c.Local, strings.Join(c.Ignored, ", "))
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
the local ./.party/config.json, then flags. Keys: ` + keyList() + `, where NAME is a role or an agent kind.

The local file comes with the repository. Until you trust it ('party config
trust', which records the sha256 of its content; any change needs trust
again) party ignores its keys that run programs or change what agents are
sent and where: agents.NAME.{command,preamble,marker}, preambleMode,
relay.{planner,executor}, review.{implementer,reviewer,markerDir}.`,
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
			// A local file that was trusted, or that this command creates,
			// holds only the user's settings: it stays trusted.
			store := config.TrustStoreFor(f.Getenv)
			keepTrust := false
			if !global {
				old, err := os.ReadFile(path)
				switch {
				case errors.Is(err, os.ErrNotExist):
					keepTrust = true
				case err != nil:
					return err
				default:
					if keepTrust, err = store.Trusted(path, old); err != nil {
						return err
					}
				}
			}
			if err := config.Set(path, args[0], args[1]); err != nil {
				return err
			}
			if keepTrust {
				if _, err := store.Trust(path, f.Clock.Now()); err != nil {
					return err
				}
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
		newConfigTrustCmd(f),
	)
	return cmd
}

// keyList names every config key for the help text.
func keyList() string {
	var names []string
	for _, k := range config.Keys() {
		names = append(names, strings.Replace(k.Name, "*", "NAME", 1))
	}
	return strings.Join(names, ", ")
}

func newConfigTrustCmd(f *Factory) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Trust the local ./.party/config.json as it is now (--revoke: forget it)",
		Long: `Record the sha256 of the local ./.party/config.json in your state
($XDG_STATE_HOME/party/trust.json, mode 0600), so that its keys that run
programs or change what agents are sent take effect. Read the file first:
it came with the repository. Any change to it needs trust again.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			cwd, err := f.Getwd()
			if err != nil {
				return err
			}
			_, local := config.Paths(f.Getenv, cwd)
			store := config.TrustStoreFor(f.Getenv)
			if revoke {
				if err := store.Revoke(local); err != nil {
					return err
				}
				if f.JSON {
					writeJSON(f.IO.Out, map[string]any{"file": local, "trusted": false})
				} else {
					fmt.Fprintf(f.IO.Out, "no longer trusted: %s\n", local)
				}
				return nil
			}
			if _, err := os.Stat(local); err != nil {
				return fmt.Errorf("%w: no %s to trust", errUsage, local)
			}
			if _, _, err := config.Load(f.Getenv, cwd); err != nil {
				return err // never trust a file party would refuse
			}
			sum, err := store.Trust(local, f.Clock.Now())
			if err != nil {
				return err
			}
			if f.JSON {
				writeJSON(f.IO.Out, map[string]any{"file": local, "trusted": true, "sha256": sum})
			} else {
				fmt.Fprintf(f.IO.Out, "trusted %s (sha256 %s)\n", local, sum)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the trust of the file")
	return cmd
}
