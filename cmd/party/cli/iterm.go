package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// AttachOptions are the inputs of party attach.
type AttachOptions struct {
	party.AttachOptions
}

func newAttachCmd(f *Factory, runF func(context.Context, *AttachOptions) error) *cobra.Command {
	opts := &AttachOptions{}
	cmd := &cobra.Command{
		Use:   "attach",
		Short: "Show a running session on this terminal",
		Long: `Attach this terminal to the session (--session, else the only one). In
iTerm2 (TERM_PROGRAM=iTerm.app, or LC_TERMINAL=iTerm2 over ssh) and outside
tmux it attaches in tmux's control mode (tmux -CC): the agents' windows open
as native tabs and splits, party's background windows stay hidden. --raw,
PARTY_RAW=1 or iterm.controlMode=false give a plain tmux client. Inside
tmux it switches the client to the session. With --json it prints how it
attaches (control_mode, why) first.`,
		Example: `  party attach
  party attach --session review --raw`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Session = f.Session
			return run(c, f, opts, runF, attachRun)
		},
	}
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "a plain tmux client, also in iTerm2")
	return cmd
}

func attachRun(ctx context.Context, f *Factory, opts *AttachOptions) error {
	inTmux := f.Getenv("TMUX") != ""
	if !inTmux && (!f.IO.InTTY || !f.IO.OutTTY) {
		return fmt.Errorf("%w: party attach needs a terminal (stdin and stdout)", party.ErrUsage)
	}
	plan, err := party.PlanAttach(ctx, f.env(), opts.AttachOptions)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, plan)
	}
	return party.Attach(ctx, f.env(), plan, f.terminal())
}

// terminal is the command's terminal, for Attach.
func (f *Factory) terminal() party.Terminal {
	return party.Terminal{In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut}
}

// ITermProfileOptions are the inputs of party iterm profile.
type ITermProfileOptions struct {
	Install bool
}

func newITermCmd(f *Factory, runF func(context.Context, *ITermProfileOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "iterm", Short: "Set up iTerm2 for party",
		Long: `party opens its sessions in iTerm2 through tmux's control mode on its own
(see party attach). party iterm profile prints or installs the "Party"
dynamic profile, which starts a party in the current tab's directory.`}
	opts := &ITermProfileOptions{}
	profile := &cobra.Command{
		Use:   "profile [--install]",
		Short: "Print or install iTerm2's Party profile, and how to bind its keys",
		Long: `Print the iTerm2 dynamic profile "Party" (a tab that runs party start in
the directory of the tab it was opened from); with --install write it to
~/Library/Application Support/iTerm2/DynamicProfiles/party.json, which iTerm2
loads at once. How to bind Cmd+Shift+P (a new Party tab) and Cmd+Shift+K
(party stop) goes to stderr: dynamic profiles cannot set keys.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, itermProfileRun) },
	}
	profile.Flags().BoolVar(&opts.Install, "install", false, "write the profile where iTerm2 reads it")
	cmd.AddCommand(profile)
	return cmd
}

func itermProfileRun(_ context.Context, f *Factory, opts *ITermProfileOptions) error {
	res, err := party.ITermProfile(f.env(), opts.Install)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, res)
		return nil
	}
	switch {
	case !res.Installed:
		if _, err := f.IO.Out.Write(res.Profile.Marshal()); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "install it with: party iterm profile --install (writes %s)\n", res.Path)
	case res.Changed:
		fmt.Fprintf(f.IO.Out, "wrote %s\n", res.Path)
	default:
		fmt.Fprintf(f.IO.Out, "%s is up to date\n", res.Path)
	}
	fmt.Fprintln(f.IO.ErrOut, strings.Join(res.Keys, "\n"))
	return nil
}
