package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/termsafe"
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
	// sub runs the pm command name; its argument, if any, goes to arg.
	sub := func(name string, arg *string) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, a []string) error {
			if opts.Cmd = name; len(a) > 0 {
				*arg = a[0]
			}
			return run(c, f, opts, runF, pmRun)
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
		&cobra.Command{Use: "add NAME", Short: "Add a milestone", Args: argsBetween(1, 1), RunE: sub("milestone add", &opts.Name)},
		&cobra.Command{Use: "list", Short: "List the milestones", Args: argsBetween(0, 0), RunE: sub("milestone list", nil)},
		&cobra.Command{Use: "done ID", Short: "Mark a milestone done", Args: argsBetween(1, 1), RunE: sub("milestone done", &opts.ID)},
	)

	tk := &cobra.Command{Use: "task", Short: "Add, list, show and update tasks", Args: argsBetween(0, 0)}
	add := &cobra.Command{Use: "add TITLE [--milestone ID] [--assignee ROLE] [--id ID]", Short: "Add a task (pending)",
		Args: argsBetween(1, 1), RunE: sub("task add", &opts.Title)}
	add.Flags().StringVar(&opts.Milestone, "milestone", "", "the task's milestone")
	add.Flags().StringVar(&opts.Assignee, "assignee", "", "the role that does it")
	add.Flags().StringVar(&opts.ID, "id", "", "the task's id (default: the next free number; MILESTONE-N puts it in that milestone)")
	list := &cobra.Command{Use: "list [--milestone ID] [--status S] [--assignee ROLE]", Short: "List tasks",
		Args: argsBetween(0, 0), RunE: sub("task list", nil)}
	list.Flags().StringVar(&opts.Milestone, "milestone", "", "only this milestone's")
	list.Flags().StringVar(&opts.Status, "status", "", "only tasks in this status: pending, in_progress or done")
	list.Flags().StringVar(&opts.Assignee, "assignee", "", "only this role's")
	update := &cobra.Command{Use: "update ID [--status S] [--assignee ROLE] [--milestone ID] [--force]", Short: "Change a task's status, assignee or milestone",
		Args: argsBetween(1, 1), RunE: sub("task update", &opts.ID)}
	update.Flags().StringVar(&opts.Status, "status", "", "pending, in_progress or done")
	update.Flags().StringVar(&opts.Assignee, "assignee", "", "the role that does it (empty: nobody)")
	update.Flags().StringVar(&opts.Milestone, "milestone", "", "the milestone (empty: none)")
	update.Flags().BoolVar(&opts.Force, "force", false, "overwrite a change made on GitHub meanwhile (last write wins)")
	update.PreRun = func(c *cobra.Command, _ []string) {
		opts.AssigneeGiven = c.Flags().Changed("assignee")
		opts.MilestoneGiven = c.Flags().Changed("milestone")
	}
	done := &cobra.Command{Use: "done ID", Short: "Mark a task done", Args: argsBetween(1, 1), RunE: sub("task done", &opts.ID)}
	done.Flags().BoolVar(&opts.Force, "force", false, "overwrite a change made on GitHub meanwhile")
	tk.AddCommand(add, list, &cobra.Command{Use: "show ID", Short: "Show a task", Args: argsBetween(1, 1), RunE: sub("task show", &opts.ID)}, update, done)

	doc := &cobra.Command{Use: "doc ID [--print] [--set -]", Short: "Edit a task's Markdown document ($VISUAL/$EDITOR), print it, or set it from stdin",
		Long: `On a terminal, open the task's document in $VISUAL (else $EDITOR, else vi)
and save it back when it changed. With --print, or when stdin or stdout is
not a terminal, print it. --set - replaces it with stdin (for agents).`,
		Args: argsBetween(1, 1), RunE: sub("doc", &opts.ID)}
	doc.Flags().BoolVar(&opts.Print, "print", false, "print the document")
	doc.Flags().StringVar(&opts.DocSet, "set", "", "replace the document with stdin (-)")

	cmd.AddCommand(initCmd, ms, tk, doc,
		&cobra.Command{Use: "log [ID]", Short: "Print the audit trail (of one task with ID)", Args: argsBetween(0, 1),
			RunE: sub("log", &opts.ID)},
		&cobra.Command{Use: "jump", Short: "Switch the tmux client to the team's party session", Args: argsBetween(0, 0),
			RunE: sub("jump", nil)},
	)
	return cmd
}

func pmRun(ctx context.Context, f *Factory, opts *PMOptions) error {
	switch opts.Cmd {
	case "init":
		res, err := party.PMInit(ctx, f.env(), party.PMInitOptions{Actor: opts.Actor, Name: opts.Name, Team: opts.Team})
		return f.show(err, res, "%s", res.Text())
	case "jump":
		j, err := party.PMJump(ctx, f.env(), opts.Actor)
		return f.show(err, j, "%s", j.Text())
	}
	pm, err := party.OpenPM(ctx, f.env(), party.PMOptions{Actor: opts.Actor, Repo: opts.Repo})
	if err != nil {
		return err
	}
	switch opts.Cmd {
	case "milestone add":
		m, err := pm.Store.AddMilestone(ctx, pm.Actor, opts.Name)
		return f.show(err, m, "Milestone %s: %s", m.ID, task.Printable(m.Name))
	case "milestone list":
		ms, err := pm.Store.Milestones(ctx)
		return showRows(f, err, nil, ms, "ID", "STATE", "NAME")
	case "milestone done":
		m, err := pm.Store.DoneMilestone(ctx, pm.Actor, opts.ID)
		return f.show(err, m, "Milestone %s done: %s", m.ID, task.Printable(m.Name))
	case "task add":
		t, err := pm.Store.AddTask(ctx, pm.Actor, task.NewTask{ID: opts.ID, Title: opts.Title, Milestone: opts.Milestone, Assignee: opts.Assignee})
		return f.show(err, t, "%s: %s", t.Label(), task.Printable(t.Title))
	case "task list":
		filter := task.Filter{Milestone: opts.Milestone, Assignee: opts.Assignee}
		if opts.Status != "" {
			if filter.Status, err = task.ParseStatus(opts.Status); err != nil {
				return err
			}
		}
		ts, err := pm.Store.Tasks(ctx, filter)
		return showRows(f, err, nil, ts, "ID", "STATUS", "ASSIGNEE", "MILESTONE", "TITLE")
	case "task show":
		t, err := pm.Store.Task(ctx, opts.ID)
		return f.show(err, t, "%s", t.Text())
	case "task update", "task done":
		if opts.Cmd == "task done" {
			opts.Status = string(task.Done)
		}
		t, err := pm.Update(ctx, party.TaskUpdate{ID: opts.ID, Status: opts.Status, Assignee: opts.Assignee, Milestone: opts.Milestone,
			AssigneeGiven: opts.AssigneeGiven, MilestoneGiven: opts.MilestoneGiven, Force: opts.Force})
		return f.show(err, t, "%s", t.Text())
	case "doc":
		return pmDoc(ctx, f, pm, opts)
	case "log":
		events, err := pm.Store.Log(ctx, opts.ID)
		return showLines(f, err, nil, events)
	}
	return fmt.Errorf("%w: unknown pm command %q", party.ErrUsage, opts.Cmd)
}

// pmDoc sets a task's document from stdin, prints it, or, on a terminal,
// edits it.
func pmDoc(ctx context.Context, f *Factory, pm *party.PM, opts *PMOptions) error {
	switch {
	case opts.DocSet != "" && opts.DocSet != "-":
		return fmt.Errorf("%w: --set takes - (the document on stdin)", party.ErrUsage)
	case opts.DocSet == "-":
		text, err := messageText(f, "-")
		if err == nil {
			err = pm.Store.SetDoc(ctx, pm.Actor, opts.ID, text)
		}
		return f.show(err, map[string]any{"id": opts.ID, "bytes": len(text)}, "Task %s: document saved (%d bytes)", opts.ID, len(text))
	case opts.Print || f.JSON || !f.IO.InTTY || !f.IO.OutTTY:
		text, err := pm.Store.Doc(ctx, opts.ID)
		if err != nil || f.JSON {
			return f.show(err, map[string]string{"id": opts.ID, "doc": text}, "")
		}
		_, err = io.WriteString(f.IO.Out, termsafe.Text(text)) // agents write documents
		return err
	}
	return pm.EditDoc(ctx, opts.ID, task.Terminal{In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut})
}
