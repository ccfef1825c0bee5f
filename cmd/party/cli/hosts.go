package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// VersionOptions are the inputs of party version (none but --json).
type VersionOptions struct{}

func newVersionCmd(f *Factory, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	return noArgsCmd(f, "version", "Print party's version", &VersionOptions{}, runF,
		func(_ context.Context, f *Factory, _ *VersionOptions) error {
			v := party.Versions(f.env())
			return f.show(nil, v, "party %s (API bridge protocol %d)", v.Version, v.Bridge)
		})
}

// HostsOptions are the inputs of party hosts.
type HostsOptions struct {
	Names []string
}

func newHostsCmd(f *Factory, runF func(context.Context, *HostsOptions) error) *cobra.Command {
	opts := &HostsOptions{}
	return &cobra.Command{Use: "hosts [HOST...]", Short: "Show the other machines party reaches over SSH: reachable, version, sessions, runtimes",
		Long: `Show each configured host (hosts.NAME.ssh, hosts.NAME.party), or the HOSTs
named (a configured name, or an SSH destination such as user@machine or an
alias of ~/.ssh/config): whether it answers over SSH (in batch mode, with
your own SSH config and keys), the party version there, its party sessions
and the runtimes their supervisors manage, read through the API bridge.
The hosts are looked at all at once; one that does not answer shows why
(HOST_TIMEOUT, HOST_AUTH_FAILED, HOST_KEY_UNVERIFIED, HOST_UNREACHABLE,
NO_PARTY_THERE, VERSION_MISMATCH) within seconds. See docs/hosts.md.`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Names = args
			return run(c, f, opts, runF, hostsRun)
		}}
}

func hostsRun(ctx context.Context, f *Factory, opts *HostsOptions) error {
	views, err := party.Hosts(ctx, f.env(), opts.Names)
	if err != nil {
		return err
	}
	if len(views) == 0 && !f.JSON {
		fmt.Fprintln(f.IO.ErrOut, "no hosts configured (party config set --global hosts.NAME.ssh user@machine)")
		return nil
	}
	var rows [][]string
	for _, v := range views {
		rows = append(rows, v.Rows()...)
	}
	if err := f.showTable(nil, nonNil(views), party.HostHeader, rows); err != nil {
		return err
	}
	if !f.JSON {
		for _, v := range views {
			if v.Error != nil {
				fmt.Fprintf(f.IO.ErrOut, "%s: %s\n", v.Name, v.Error.Message)
			}
		}
	}
	return nil
}

// SuperviseBridgeOptions are the inputs of party supervise bridge (none
// but --session).
type SuperviseBridgeOptions struct{}

func newSuperviseBridgeCmd(f *Factory, runF func(context.Context, *SuperviseBridgeOptions) error) *cobra.Command {
	cmd := noArgsCmd(f, "bridge", "Bridge stdin and stdout to the session's supervisor API (another host's party runs it over SSH)", &SuperviseBridgeOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *SuperviseBridgeOptions) error {
			return party.Bridge(ctx, f.env(), f.IO.In, f.IO.Out)
		})
	cmd.Hidden = true
	return cmd
}
