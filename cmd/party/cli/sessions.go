package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// SessionsOptions are the inputs of party sessions.
type SessionsOptions struct{ All bool }

func newSessionsCmd(f *Factory, runF func(context.Context, *SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{}
	cmd := &cobra.Command{Use: "sessions", Short: "List the teams party knows here: live, restorable or stopped, with each agent's own session",
		Long: `List the teams party started in this folder (--all: in any) on this
server, live or not: each agent's role, its own session id (Claude's and
Gemini's session, Codex's thread), when the team last heard of it, and
whether party start would resume it. A team whose server died is
restorable: party start brings it back. One that party stop ended starts
anew unless party start --restore.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, sessionsRun) }}
	cmd.Flags().BoolVar(&opts.All, "all", false, "the teams of every folder")
	cmd.AddCommand(newSessionsForgetCmd(f, nil), newSessionsRestoreCmd(f, nil), newSessionsUnitCmd(f, nil))
	return cmd
}

func sessionsRun(ctx context.Context, f *Factory, opts *SessionsOptions) error {
	teams, err := party.Teams(ctx, f.env(), opts.All)
	if err != nil {
		return err
	}
	if len(teams) == 0 && !f.JSON {
		fmt.Fprintln(f.IO.ErrOut, "no teams known here (party sessions --all lists every folder's)")
		return nil
	}
	var rows [][]string
	for _, t := range teams {
		if len(t.Agents) == 0 {
			rows = append(rows, []string{t.Name, t.State, "-", "-", "-", "-", "-", t.Cwd})
		}
		for _, a := range t.Agents {
			rows = append(rows, []string{t.Name, t.State, a.Role, string(a.Agent), dash(a.Session), lastActive(a.LastActive), resumeNote(a), t.Cwd})
		}
	}
	return f.showTable(nil, nonNil(teams), []string{"TEAM", "STATE", "ROLE", "AGENT", "SESSION", "LAST ACTIVE", "RESUME", "FOLDER"}, rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lastActive(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func resumeNote(a party.AgentSession) string {
	if a.Resumable {
		return "yes"
	}
	return "no: " + strings.TrimSpace(a.Why)
}

// SessionsForgetOptions are the inputs of party sessions forget.
type SessionsForgetOptions struct{ Name string }

func newSessionsForgetCmd(f *Factory, runF func(context.Context, *SessionsForgetOptions) error) *cobra.Command {
	opts := &SessionsForgetOptions{}
	return &cobra.Command{Use: "forget NAME", Short: "Drop a stored team: party start will not bring it back",
		Long: `Drop the stored team NAME (not running): its record, its supervisor's
store and logs, and party's hooks left in its folder. The agents' own
transcripts are theirs and stay; claude --resume ID and the like still
open them.`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Name = args[0]
			return run(c, f, opts, runF, sessionsForgetRun)
		}}
}

func sessionsForgetRun(ctx context.Context, f *Factory, opts *SessionsForgetOptions) error {
	dir, err := party.ForgetTeam(ctx, f.env(), opts.Name)
	return f.show(err, map[string]string{"forgot": opts.Name, "state_dir": dir}, "forgot %s (removed %s)", opts.Name, dir)
}

// SessionsRestoreOptions are the inputs of party sessions restore.
type SessionsRestoreOptions struct{ All bool }

func newSessionsRestoreCmd(f *Factory, runF func(context.Context, *SessionsRestoreOptions) error) *cobra.Command {
	opts := &SessionsRestoreOptions{}
	cmd := &cobra.Command{Use: "restore", Short: "Bring back every team of this folder (--all: of every folder) whose server died",
		Long: `Bring back each restorable team (party sessions lists them) as party
start in its folder would: its panes, each agent resuming its own session,
its supervisor and notifier. After a reboot, party sessions restore --all
brings back every team at once (party sessions unit prints a user service
that runs it at login). A team that cannot come back is reported and the
others still are; the exit status is then 1.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, sessionsRestoreRun) }}
	cmd.Flags().BoolVar(&opts.All, "all", false, "the teams of every folder")
	return cmd
}

func sessionsRestoreRun(ctx context.Context, f *Factory, opts *SessionsRestoreOptions) error {
	done, err := party.RestoreTeams(ctx, f.env(), opts.All)
	if f.JSON {
		writeJSON(f.IO.Out, nonNil(done))
		return err
	}
	if len(done) == 0 && err == nil {
		fmt.Fprintln(f.IO.ErrOut, "no team to bring back here (party sessions lists them)")
	}
	for _, r := range done {
		if r.Err != nil {
			fmt.Fprintf(f.IO.ErrOut, "party: %s (%s): %v\n", r.Team, r.Cwd, r.Err)
			continue
		}
		fmt.Fprintln(f.IO.Out, termsafe.Text(r.Result.String()))
	}
	return err
}

// SessionsUnitOptions are the inputs of party sessions unit.
type SessionsUnitOptions struct{ Launchd bool }

func newSessionsUnitCmd(f *Factory, runF func(context.Context, *SessionsUnitOptions) error) *cobra.Command {
	opts := &SessionsUnitOptions{}
	cmd := &cobra.Command{Use: "unit", Short: "Print a user service that brings the teams back at login (systemd, or --launchd)",
		Long: `Print a user service that runs party sessions restore --all once at
login, with this shell's PATH and party's variables: a systemd user unit
(save it as ~/.config/systemd/user/party-restore.service, then systemctl
--user enable party-restore), or with --launchd a launchd agent (save it as
~/Library/LaunchAgents/com.partyhq.party-restore.plist). party writes
nothing itself.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, sessionsUnitRun) }}
	cmd.Flags().BoolVar(&opts.Launchd, "launchd", false, "a launchd agent (macOS) instead of a systemd user unit")
	return cmd
}

func sessionsUnitRun(_ context.Context, f *Factory, opts *SessionsUnitOptions) error {
	kind := "systemd"
	if opts.Launchd {
		kind = "launchd"
	}
	unit, err := party.RestoreUnit(f.env(), kind)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"kind": kind, "unit": unit})
		return nil
	}
	_, err = fmt.Fprint(f.IO.Out, unit)
	return err
}
