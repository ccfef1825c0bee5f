package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
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
	cmd.AddCommand(newSessionsForgetCmd(f, nil))
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
