package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Show, get and set configuration",
		Long: `Configuration is layered: built-in defaults, then the global file
($XDG_CONFIG_HOME/party/config.json, else ~/.config/party/config.json), then
the local ./.party/config.json, then flags. Keys: ` + strings.Join(party.ConfigKeys(false), ", ") + `, where NAME is a role or an agent kind.

The local file comes with the repository. Until you trust it ('party config
trust', which records the sha256 of its content; any change needs trust
again) party ignores its keys that run programs or change what agents are
sent and where: ` + strings.Join(party.ConfigKeys(true), ", ") + `.`,
		Args: argsBetween(0, 0),
	}
	cmd.AddCommand(newConfigShowCmd(f, nil), newConfigGetCmd(f, nil), newConfigSetCmd(f, nil), newConfigTrustCmd(f, nil))
	return cmd
}

// ConfigShowOptions are the inputs of party config show (none).
type ConfigShowOptions struct{}

func newConfigShowCmd(f *Factory, runF func(context.Context, *ConfigShowOptions) error) *cobra.Command {
	opts := &ConfigShowOptions{}
	return &cobra.Command{
		Use: "show", Short: "Print the effective configuration and where each value comes from", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, configShowRun) },
	}
}

func configShowRun(_ context.Context, f *Factory, _ *ConfigShowOptions) error {
	cfg, err := f.env().Config()
	if err != nil {
		return err
	}
	settings, byKey := cfg.Settings(), map[string]party.Setting{}
	for _, s := range settings {
		byKey[s.Key] = s
	}
	return showRows(f, nil, byKey, settings, "KEY", "VALUE", "SOURCE")
}

// ConfigGetOptions are the inputs of party config get.
type ConfigGetOptions struct{ Key string }

func newConfigGetCmd(f *Factory, runF func(context.Context, *ConfigGetOptions) error) *cobra.Command {
	opts := &ConfigGetOptions{}
	return &cobra.Command{
		Use: "get KEY", Short: "Print the effective value of KEY", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Key = args[0]
			return run(c, f, opts, runF, configGetRun)
		},
	}
}

func configGetRun(_ context.Context, f *Factory, opts *ConfigGetOptions) error {
	cfg, err := f.env().Config()
	if err != nil {
		return err
	}
	v, err := cfg.Get(opts.Key)
	return f.show(err, map[string]string{"key": opts.Key, "value": v, "source": cfg.Sources[opts.Key]}, "%s", v)
}

// ConfigSetOptions are the inputs of party config set.
type ConfigSetOptions struct {
	Key, Value string
	Global     bool // the global file, not the local one
}

func newConfigSetCmd(f *Factory, runF func(context.Context, *ConfigSetOptions) error) *cobra.Command {
	opts := &ConfigSetOptions{}
	cmd := &cobra.Command{Use: "set KEY VALUE", Short: "Set KEY in the local config file (--global: the global one)", Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Key, opts.Value = args[0], args[1]
			return run(c, f, opts, runF, configSetRun)
		},
	}
	cmd.Flags().BoolVar(&opts.Global, "global", false, "write the global config file")
	return cmd
}

func configSetRun(_ context.Context, f *Factory, opts *ConfigSetOptions) error {
	path, err := party.SetConfig(f.env(), opts.Global, opts.Key, opts.Value)
	return f.show(err, map[string]string{"key": opts.Key, "value": opts.Value, "file": path}, "%s = %s (%s)", opts.Key, opts.Value, path)
}

// ConfigTrustOptions are the inputs of party config trust.
type ConfigTrustOptions struct{ Revoke bool }

func newConfigTrustCmd(f *Factory, runF func(context.Context, *ConfigTrustOptions) error) *cobra.Command {
	opts := &ConfigTrustOptions{}
	cmd := &cobra.Command{Use: "trust", Short: "Trust ./.party/config.json and ./.party/agents.json as they are now (--revoke: forget them)",
		Long: `Record the sha256 of ./.party/config.json and ./.party/agents.json in your
state ($XDG_STATE_HOME/party/trust.json), so that the config's keys that run
programs or change what agents are sent, and the registry's names, take
effect. Read them first: they came with the repository. Any change needs
trust again, except one by 'party config set' or 'party agents'.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, configTrustRun) },
	}
	cmd.Flags().BoolVar(&opts.Revoke, "revoke", false, "forget the trust of the file")
	return cmd
}

func configTrustRun(_ context.Context, f *Factory, opts *ConfigTrustOptions) error {
	out, err := party.Trust(f.env(), opts.Revoke)
	return showLines(f, err, out, out)
}
