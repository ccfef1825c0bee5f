package cli

import (
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
	var global bool
	set := &cobra.Command{Use: "set KEY VALUE", Short: "Set KEY in the local config file (--global: the global one)", Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			path, err := party.SetConfig(f.env(), global, args[0], args[1])
			return f.show(err, map[string]string{"key": args[0], "value": args[1], "file": path}, "%s = %s (%s)", args[0], args[1], path)
		},
	}
	set.Flags().BoolVar(&global, "global", false, "write the global config file")
	cmd.AddCommand(
		&cobra.Command{
			Use: "show", Short: "Print the effective configuration and where each value comes from", Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				cfg, err := f.env().Config()
				if err != nil {
					return err
				}
				settings, byKey := cfg.Settings(), map[string]party.Setting{}
				for _, s := range settings {
					byKey[s.Key] = s
				}
				return showRows(f, nil, byKey, settings, "KEY", "VALUE", "SOURCE")
			},
		},
		&cobra.Command{
			Use: "get KEY", Short: "Print the effective value of KEY", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				cfg, err := f.env().Config()
				if err != nil {
					return err
				}
				v, err := cfg.Get(args[0])
				return f.show(err, map[string]string{"key": args[0], "value": v, "source": cfg.Sources[args[0]]}, "%s", v)
			},
		},
		set,
		newConfigTrustCmd(f),
	)
	return cmd
}

func newConfigTrustCmd(f *Factory) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{Use: "trust", Short: "Trust ./.party/config.json and ./.party/agents.json as they are now (--revoke: forget them)",
		Long: `Record the sha256 of ./.party/config.json and ./.party/agents.json in your
state ($XDG_STATE_HOME/party/trust.json), so that the config's keys that run
programs or change what agents are sent, and the registry's names, take
effect. Read them first: they came with the repository. Any change needs
trust again, except one by 'party config set' or 'party agents'.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := party.Trust(f.env(), revoke)
			return showLines(f, err, out, out)
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the trust of the file")
	return cmd
}
