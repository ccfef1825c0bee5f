package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
)

// PMOptions are the inputs of every party pm command: Cmd names it
// ("task add", "milestone list", …), the rest are its arguments and flags.
type PMOptions struct {
	Cmd   string
	Actor string // --actor; empty: $PARTY_ROLE, else human
	Repo  string // --repo

	ID, Name, Title, Team       string
	Milestone, Assignee, Status string
	// AssigneeGiven and MilestoneGiven say update was given --assignee
	// or --milestone (an empty one clears the field).
	AssigneeGiven, MilestoneGiven bool
	Force, Print                  bool
	DocSet                        string // doc --set: "-" reads stdin
}

func newPMCmd(f *Factory, runF func(context.Context, *PMOptions) error) *cobra.Command {
	opts := &PMOptions{}
	sub := func(name string, args func([]string)) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, a []string) error {
			opts.Cmd = name
			if args != nil {
				args(a)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return pmRun(c.Context(), f, opts)
		}
	}
	cmd := &cobra.Command{
		Use:   "pm",
		Short: "Tasks and milestones of the team linked to this directory",
		Long: `Keep the team's tasks and milestones, and the audit trail of who changed
what: in files under the state root (pm.storage = fs, the default) or in
GitHub Issues (pm.storage = github). 'party pm init' links this directory to
a new team (./.party/team.json holds its id); every other pm command finds
that link here or in a parent directory.

The actor of each change is --actor, else the pane's role ($PARTY_ROLE),
else human.`,
		Args: argsBetween(0, 0),
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&opts.Actor, "actor", "", "who makes the change (default: $PARTY_ROLE, else human)")
	pf.StringVar(&opts.Repo, "repo", "", "the GitHub repository owner/name (github store)")

	initCmd := &cobra.Command{Use: "init [--name N] [--team ID]", Short: "Link this directory to a new team (or, with --team, an existing one)",
		Args: argsBetween(0, 0), RunE: sub("init", nil)}
	initCmd.Flags().StringVar(&opts.Name, "name", "", "the team's name")
	initCmd.Flags().StringVar(&opts.Team, "team", "", "link to this existing team instead")

	ms := &cobra.Command{Use: "milestone", Short: "Add, list and finish milestones", Args: argsBetween(0, 0)}
	ms.AddCommand(
		&cobra.Command{Use: "add NAME", Short: "Add a milestone", Args: argsBetween(1, 1),
			RunE: sub("milestone add", func(a []string) { opts.Name = a[0] })},
		&cobra.Command{Use: "list", Short: "List the milestones", Args: argsBetween(0, 0), RunE: sub("milestone list", nil)},
		&cobra.Command{Use: "done ID", Short: "Mark a milestone done", Args: argsBetween(1, 1),
			RunE: sub("milestone done", func(a []string) { opts.ID = a[0] })},
	)

	tk := &cobra.Command{Use: "task", Short: "Add, list, show and update tasks", Args: argsBetween(0, 0)}
	add := &cobra.Command{Use: "add TITLE [--milestone ID] [--assignee ROLE] [--id ID]", Short: "Add a task (pending)",
		Args: argsBetween(1, 1), RunE: sub("task add", func(a []string) { opts.Title = a[0] })}
	add.Flags().StringVar(&opts.Milestone, "milestone", "", "the task's milestone")
	add.Flags().StringVar(&opts.Assignee, "assignee", "", "the role that does it")
	add.Flags().StringVar(&opts.ID, "id", "", "the task's id (default: the next free number; MILESTONE-N puts it in that milestone)")
	list := &cobra.Command{Use: "list [--milestone ID] [--status S] [--assignee ROLE]", Short: "List tasks",
		Args: argsBetween(0, 0), RunE: sub("task list", nil)}
	list.Flags().StringVar(&opts.Milestone, "milestone", "", "only this milestone's")
	list.Flags().StringVar(&opts.Status, "status", "", "only tasks in this status: pending, in_progress or done")
	list.Flags().StringVar(&opts.Assignee, "assignee", "", "only this role's")
	update := &cobra.Command{Use: "update ID [--status S] [--assignee ROLE] [--milestone ID] [--force]", Short: "Change a task's status, assignee or milestone",
		Args: argsBetween(1, 1), RunE: sub("task update", func(a []string) { opts.ID = a[0] })}
	update.Flags().StringVar(&opts.Status, "status", "", "pending, in_progress or done")
	update.Flags().StringVar(&opts.Assignee, "assignee", "", "the role that does it (empty: nobody)")
	update.Flags().StringVar(&opts.Milestone, "milestone", "", "the milestone (empty: none)")
	update.Flags().BoolVar(&opts.Force, "force", false, "overwrite a change made on GitHub meanwhile (last write wins)")
	update.PreRun = func(c *cobra.Command, _ []string) {
		opts.AssigneeGiven = c.Flags().Changed("assignee")
		opts.MilestoneGiven = c.Flags().Changed("milestone")
	}
	done := &cobra.Command{Use: "done ID", Short: "Mark a task done", Args: argsBetween(1, 1),
		RunE: sub("task done", func(a []string) { opts.ID = a[0] })}
	done.Flags().BoolVar(&opts.Force, "force", false, "overwrite a change made on GitHub meanwhile")
	tk.AddCommand(add, list,
		&cobra.Command{Use: "show ID", Short: "Show a task", Args: argsBetween(1, 1),
			RunE: sub("task show", func(a []string) { opts.ID = a[0] })},
		update, done)

	doc := &cobra.Command{Use: "doc ID [--print] [--set -]", Short: "Edit a task's Markdown document ($VISUAL/$EDITOR), print it, or set it from stdin",
		Long: `On a terminal, open the task's document in $VISUAL (else $EDITOR, else vi)
and save it back when it changed. With --print, or when stdin or stdout is
not a terminal, print it. --set - replaces it with stdin (for agents).`,
		Args: argsBetween(1, 1), RunE: sub("doc", func(a []string) { opts.ID = a[0] })}
	doc.Flags().BoolVar(&opts.Print, "print", false, "print the document")
	doc.Flags().StringVar(&opts.DocSet, "set", "", "replace the document with stdin (-)")

	cmd.AddCommand(initCmd, ms, tk, doc,
		&cobra.Command{Use: "log [ID]", Short: "Print the audit trail (of one task with ID)", Args: argsBetween(0, 1),
			RunE: sub("log", func(a []string) {
				if len(a) == 1 {
					opts.ID = a[0]
				}
			})},
		&cobra.Command{Use: "jump", Short: "Switch the tmux client to the team's party session", Args: argsBetween(0, 0),
			RunE: sub("jump", nil)},
	)
	return cmd
}

// pmActor is who makes a change: --actor, else the pane's role, else
// human; a role as panes are named.
func pmActor(f *Factory, opts *PMOptions) (string, error) {
	for _, a := range []string{opts.Actor, f.Getenv("PARTY_ROLE")} {
		if a = strings.TrimSpace(a); a != "" {
			return a, task.CheckRole("actor", a)
		}
	}
	return task.HumanActor, nil
}

// The local config is the linked directory's (./.party/ beside
// team.json), also from a subdirectory.
func openStore(ctx context.Context, f *Factory, opts *PMOptions) (task.Store, error) {
	cwd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	dir := cwd
	if link, err := task.FindLink(cwd); err == nil {
		dir = link.Dir
	}
	cfg, err := f.env().ConfigIn(dir)
	if err != nil {
		return nil, err
	}
	root, err := f.env().StateRoot()
	if err != nil {
		return nil, err
	}
	var env []string
	if f.Environ != nil {
		env = f.Environ()
	}
	return task.Open(ctx, task.OpenOptions{
		Root: root, Cwd: cwd,
		Storage: cfg.PM.Storage, StorageSet: cfg.Sources["pm.storage"] != "default",
		Repo: opts.Repo, ConfigRepo: cfg.PM.Repo, Env: env, Clock: f.Clock,
		Warn: func(msg string) { fmt.Fprintf(f.IO.ErrOut, "party: warning: %s\n", msg) },
	})
}

func pmRun(ctx context.Context, f *Factory, opts *PMOptions) error {
	actor, err := pmActor(f, opts)
	if err != nil {
		return err
	}
	switch opts.Cmd {
	case "init":
		return pmInit(ctx, f, opts, actor)
	case "jump":
		return pmJump(ctx, f)
	}
	st, err := openStore(ctx, f, opts)
	if err != nil {
		return err
	}
	switch opts.Cmd {
	case "milestone add":
		m, err := st.AddMilestone(ctx, actor, opts.Name)
		if err != nil {
			return err
		}
		return f.show(m, "Milestone %s: %s", m.ID, task.Printable(m.Name))
	case "milestone list":
		ms, err := st.Milestones(ctx)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, m := range ms {
			rows = append(rows, []string{m.ID, map[bool]string{false: "open", true: "done"}[m.Done], task.Printable(m.Name)})
		}
		return f.showTable(nonNil(ms), []string{"ID", "STATE", "NAME"}, rows)
	case "milestone done":
		m, err := st.DoneMilestone(ctx, actor, opts.ID)
		if err != nil {
			return err
		}
		return f.show(m, "Milestone %s done: %s", m.ID, task.Printable(m.Name))
	case "task add":
		t, err := st.AddTask(ctx, actor, task.NewTask{ID: opts.ID, Title: opts.Title, Milestone: opts.Milestone, Assignee: opts.Assignee})
		if err != nil {
			return err
		}
		return f.show(t, "%s: %s", t.Label(), task.Printable(t.Title))
	case "task list":
		filter := task.Filter{Milestone: opts.Milestone, Assignee: opts.Assignee}
		if opts.Status != "" {
			if filter.Status, err = task.ParseStatus(opts.Status); err != nil {
				return err
			}
		}
		ts, err := st.Tasks(ctx, filter)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, t := range ts {
			rows = append(rows, []string{strings.TrimPrefix(t.Label(), "Task "), string(t.Status), orDash(t.Assignee), orDash(t.Milestone), task.Printable(t.Title)})
		}
		return f.showTable(nonNil(ts), []string{"ID", "STATUS", "ASSIGNEE", "MILESTONE", "TITLE"}, rows)
	case "task show":
		t, err := st.Task(ctx, opts.ID)
		if err != nil {
			return err
		}
		return f.show(t, "%s", taskText(t))
	case "task update", "task done":
		c := task.Change{Force: opts.Force}
		if opts.Cmd == "task done" {
			opts.Status = string(task.Done)
		}
		if opts.Status != "" {
			s, err := task.ParseStatus(opts.Status)
			if err != nil {
				return err
			}
			c.Status = &s
		}
		if opts.AssigneeGiven {
			c.Assignee = &opts.Assignee
		}
		if opts.MilestoneGiven {
			c.Milestone = &opts.Milestone
		}
		if c.Status == nil && c.Assignee == nil && c.Milestone == nil {
			return fmt.Errorf("%w: nothing to change: give --status, --assignee or --milestone", errUsage)
		}
		t, err := st.Update(ctx, actor, opts.ID, c)
		if len(t.Forced) > 0 {
			var diffs []string
			for _, d := range t.Forced {
				diffs = append(diffs, fmt.Sprintf("%s %q → %q", d.Field, d.Cached, d.Remote))
			}
			fmt.Fprintf(f.IO.ErrOut, "party: warning: task %s had changed on GitHub since party last wrote it (%s); --force applied this update over it\n", t.ID, strings.Join(diffs, ", "))
		}
		if err != nil {
			return err
		}
		return f.show(t, "%s", taskText(t))
	case "doc":
		return pmDoc(ctx, f, st, opts, actor)
	case "log":
		events, err := st.Log(ctx, opts.ID)
		if err != nil {
			return err
		}
		if f.JSON {
			return f.show(nonNil(events), "")
		}
		for _, e := range events {
			fmt.Fprintln(f.IO.Out, e)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown pm command %q", errUsage, opts.Cmd)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// taskText is a task as party pm task show prints it.
func taskText(t task.Task) string {
	return fmt.Sprintf("%s: %s\nstatus:    %s\nassignee:  %s\nmilestone: %s\nupdated:   %s", t.Label(), task.Printable(t.Title),
		t.Status, orDash(task.Printable(t.Assignee)), orDash(task.Printable(t.Milestone)), t.Updated.UTC().Format("2006-01-02T15:04:05Z"))
}

func pmInit(ctx context.Context, f *Factory, opts *PMOptions, actor string) error {
	root, err := f.env().StateRoot()
	if err != nil {
		return err
	}
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	res, err := task.Init(ctx, task.InitOptions{Root: root, Dir: cwd, Name: opts.Name, Team: opts.Team, Actor: actor, Clock: f.Clock})
	if err != nil {
		return err
	}
	verb, name := "linked to team", ""
	if res.Created {
		verb = "created team"
	}
	if res.Team.Name != "" {
		name = " (" + task.Printable(res.Team.Name) + ")"
	}
	return f.show(res, "%s %s%s: %s", verb, res.Team.ID, name, res.Pointer)
}

// pmDoc sets, prints or edits a task's document.
func pmDoc(ctx context.Context, f *Factory, st task.Store, opts *PMOptions, actor string) error {
	if opts.DocSet != "" {
		if opts.DocSet != "-" {
			return fmt.Errorf("%w: --set takes - (the document on stdin)", errUsage)
		}
		text, err := messageText(f, "", true)
		if err != nil {
			return err
		}
		if err := st.SetDoc(ctx, actor, opts.ID, text); err != nil {
			return err
		}
		return f.show(map[string]any{"id": opts.ID, "bytes": len(text)}, "Task %s: document saved (%d bytes)", opts.ID, len(text))
	}
	text, err := st.Doc(ctx, opts.ID)
	if err != nil {
		return err
	}
	if opts.Print || f.JSON || !f.IO.InTTY || !f.IO.OutTTY {
		if f.JSON {
			return f.show(map[string]string{"id": opts.ID, "doc": text}, "")
		}
		_, err := io.WriteString(f.IO.Out, text)
		return err
	}
	edited, err := task.Edit(f.Getenv, task.Terminal{In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut}, text)
	if err != nil || edited == text {
		return err
	}
	if err := st.SetDoc(ctx, actor, opts.ID, edited); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "party: task %s: document saved\n", opts.ID)
	return nil
}

// pmJump switches the tmux client to the party session started in the
// team's directory (or --session); outside tmux, or when the client is
// another server's, it prints the command that attaches to it.
func pmJump(ctx context.Context, f *Factory) error {
	tc, name := f.Tmux(), f.Session
	if name == "" {
		cwd, err := f.Getwd()
		if err != nil {
			return err
		}
		if name, err = task.TeamSession(ctx, tc, cwd); err != nil {
			return err
		}
	}
	target := tmux.SessionTarget(name)
	attach := shellwords.Join(tc.Argv("attach-session", "-t", target))
	if f.Getenv("TMUX") != "" {
		if _, err := tc.Run(ctx, "switch-client", "-t", target); err == nil {
			return f.show(map[string]any{"session": name, "switched": true, "attach": attach}, "switched to %s", name)
		}
		fmt.Fprintf(f.IO.ErrOut, "party: this client is another tmux server's; attach to %s with the command below\n", name)
	}
	return f.show(map[string]any{"session": name, "switched": false, "attach": attach}, "%s", attach)
}
