package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// StartOptions are the inputs of party start.
type StartOptions struct {
	party.StartOptions
	NoAttach bool
	Raw      bool // a plain tmux client, also in iTerm2
	// Host starts the team on another host (party start there, over
	// ssh), detached.
	Host string
}

func newStartCmd(f *Factory, runF func(context.Context, *StartOptions) error) *cobra.Command {
	opts := &StartOptions{}
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a session with one pane per role",
		Long: `Start a tmux session with a pane per --pane ROLE[=COMMAND], in order. A
role named claude, codex or gemini without COMMAND runs that agent, any
other a shell; the default is codex, claude and a shell. Each pane is
tagged with @party_role and @party_agent.

A team of that name that died in this folder (its tmux server killed, the
machine rebooted) comes back instead: the same panes, each agent resuming
its own session by its id, and the supervisor and notifier it ran, which
deliver what was queued. party start says, per role, what it resumed. A
team ended by party stop starts anew unless --restore; --fresh starts anew
in any case.

--host HOST starts the team on another host (a configured host or an SSH
destination) by running party start there over ssh, detached; it prints
how to attach to it (ssh -t DEST party attach). Only plain words cross:
--pane ROLE or ROLE=AGENT (a command line is refused), and --cwd, --record,
--base, --layout and --size values without spaces or shell characters;
--cwd is on that host, relative to the home there.`,
		Example: `  party start --pane planner=claude --pane executor=codex
  party start            # after a reboot: the team of this folder comes back
  party start --session review --pane claude --pane codex --no-attach
  party start --pane claude --pane codex --worktree   # a git worktree each
  party start --pane impl=claude --pane reviewer=codex --worktree=impl --base main
  party start --host box --session t --supervise --pane claude   # on host box (docs/hosts.md)`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && c.Flags().Changed("worktree") {
				return fmt.Errorf("%w: unexpected %q: a role of --worktree is written --worktree=ROLE (alone, --worktree gives every agent one)", party.ErrUsage, args[0])
			}
			return argsBetween(0, 0)(c, args)
		},
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Name = f.Session
			return run(c, f, opts, runF, startRun)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Panes, "pane", nil, "a pane as ROLE[=COMMAND]; repeat in pane order")
	fl.StringVar(&opts.Cwd, "cwd", "", "working directory of the panes (default: current)")
	fl.StringVar(&opts.Layout, "layout", "", "panes (one window, a pane per role; the default) or windows (a window per role, named for it); a team brought back keeps its own")
	fl.StringVar(&opts.Size, "size", "200x50", "window size WxH while detached")
	fl.BoolVar(&opts.Replace, "replace", false, "replace a session of the same name")
	fl.BoolVar(&opts.NoAttach, "no-attach", false, "do not attach, even on a terminal")
	fl.StringVar(&opts.Record, "record", "", "record every pane into this directory (party record, in a window of the session)")
	fl.BoolVar(&opts.Review, "review", false, "run the review coordinator (party coordinator) in a hidden window")
	fl.BoolVar(&opts.Supervise, "supervise", false, "run the supervisor (party supervise) in a hidden window: triggers, inbox, runtimes")
	fl.BoolVar(&opts.Dashboard, "dashboard", false, "run party dash (the live dashboard) in a window of the session, party-dash")
	fl.BoolVar(&opts.Raw, "raw", false, "attach a plain tmux client, also in iTerm2 (which gets tmux -CC otherwise)")
	fl.BoolVar(&opts.Notify, "notify", false, "run the notifier (party notify) in a hidden window, as notify.enabled does")
	fl.BoolVar(&opts.Fresh, "fresh", false, "start a new team where a team of this name died and would come back (its agents' sessions stay listed in party sessions)")
	fl.StringArrayVar(&opts.Worktree, "worktree", nil, "give each agent pane (--worktree=ROLE: that role's) a git worktree of its own, on branch party/SESSION/ROLE; repeat for several roles")
	fl.Lookup("worktree").NoOptDefVal = party.AllAgents
	fl.StringVar(&opts.Base, "base", "", "the branch, tag or commit the worktrees start from (default: the one checked out)")
	fl.BoolVar(&opts.Restore, "restore", false, "bring back a team that party stop ended, each agent resuming its own session")
	fl.StringVar(&opts.Host, "host", "", "start the team on this host (configured, or an SSH destination) over ssh, detached")
	return cmd
}

func startRun(ctx context.Context, f *Factory, opts *StartOptions) error {
	if opts.Host != "" {
		res, err := party.HostStart(ctx, f.env(), opts.Host, opts.StartOptions)
		if err := f.show(err, res, "%s", res); err != nil {
			return err
		}
		_, err = fmt.Fprintf(f.IO.ErrOut, "attach: %s\n", res.Attach)
		return err
	}
	res, err := party.Start(ctx, f.env(), opts.StartOptions)
	if err := f.show(err, res, "%s", res); err != nil {
		return err
	}
	if opts.NoAttach || !f.IO.InTTY || !f.IO.OutTTY {
		return nil
	}
	plan, err := party.PlanAttach(ctx, f.env(), party.AttachOptions{Session: res.Session, Raw: opts.Raw})
	if err != nil {
		return err
	}
	return party.Attach(ctx, f.env(), plan, f.terminal())
}
