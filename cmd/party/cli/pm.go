package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// PMFlags are the flags every party pm command takes.
type PMFlags struct {
	Actor string // --actor; empty: $PARTY_ROLE, else human
	Repo  string // --repo
}

// PMInitOptions are the inputs of party pm init.
type PMInitOptions struct {
	PMFlags
	Name, Team string
}

// PMMilestoneAddOptions are the inputs of party pm milestone add.
type PMMilestoneAddOptions struct {
	PMFlags
	Name string
}

// PMMilestoneListOptions are the inputs of party pm milestone list.
type PMMilestoneListOptions struct{ PMFlags }

// PMMilestoneDoneOptions are the inputs of party pm milestone done.
type PMMilestoneDoneOptions struct {
	PMFlags
	ID string
}

// PMTaskAddOptions are the inputs of party pm task add.
type PMTaskAddOptions struct {
	PMFlags
	Title, ID, Milestone, Assignee string
}

// PMTaskListOptions are the inputs of party pm task list.
type PMTaskListOptions struct {
	PMFlags
	Milestone, Status, Assignee string
}

// PMTaskShowOptions are the inputs of party pm task show.
type PMTaskShowOptions struct {
	PMFlags
	ID string
}

// PMTaskUpdateOptions are the inputs of party pm task update.
type PMTaskUpdateOptions struct {
	PMFlags
	ID, Status, Assignee, Milestone string
	// AssigneeGiven and MilestoneGiven say --assignee or --milestone was
	// given (an empty one clears the field).
	AssigneeGiven, MilestoneGiven bool
	Force                         bool
}

// PMTaskDoneOptions are the inputs of party pm task done.
type PMTaskDoneOptions struct {
	PMFlags
	ID    string
	Force bool
}

// PMDocOptions are the inputs of party pm doc.
type PMDocOptions struct {
	PMFlags
	ID    string
	Print bool
	Set   string // --set: "-" reads stdin
}

// PMLogOptions are the inputs of party pm log.
type PMLogOptions struct {
	PMFlags
	ID string // "": the whole team's trail
}

// PMJumpOptions are the inputs of party pm jump.
type PMJumpOptions struct{ PMFlags }

// pmRunFs are the run functions a test gives party pm's commands; a nil
// one runs the command.
type pmRunFs struct {
	init          func(context.Context, *PMInitOptions) error
	milestoneAdd  func(context.Context, *PMMilestoneAddOptions) error
	milestoneList func(context.Context, *PMMilestoneListOptions) error
	milestoneDone func(context.Context, *PMMilestoneDoneOptions) error
	taskAdd       func(context.Context, *PMTaskAddOptions) error
	taskList      func(context.Context, *PMTaskListOptions) error
	taskShow      func(context.Context, *PMTaskShowOptions) error
	taskUpdate    func(context.Context, *PMTaskUpdateOptions) error
	taskDone      func(context.Context, *PMTaskDoneOptions) error
	doc           func(context.Context, *PMDocOptions) error
	log           func(context.Context, *PMLogOptions) error
	jump          func(context.Context, *PMJumpOptions) error
}

// pmRun returns the RunE of a pm command: it takes the pm flags into
// opts (through flagsOf), its argument, if any, into arg, and runs.
func pmRun[O any](f *Factory, flags *PMFlags, opts *O, flagsOf func(*O) *PMFlags, arg *string, runF func(context.Context, *O) error, do func(context.Context, *Factory, *O) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, a []string) error {
		*flagsOf(opts) = *flags
		if len(a) > 0 {
			*arg = a[0]
		}
		return run(c, f, opts, runF, do)
	}
}

func newPMCmd(f *Factory, runFs pmRunFs) *cobra.Command {
	flags := &PMFlags{}
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
	pf.StringVar(&flags.Actor, "actor", "", "who makes the change (default: $PARTY_ROLE, else human)")
	pf.StringVar(&flags.Repo, "repo", "", "the GitHub repository owner/name (github store)")

	initOpts := &PMInitOptions{}
	initCmd := &cobra.Command{Use: "init [--name N] [--team ID]", Short: "Link this directory to a new team (or, with --team, an existing one)",
		Args: argsBetween(0, 0), RunE: pmRun(f, flags, initOpts, func(o *PMInitOptions) *PMFlags { return &o.PMFlags }, nil, runFs.init, pmInitRun)}
	initCmd.Flags().StringVar(&initOpts.Name, "name", "", "the team's name")
	initCmd.Flags().StringVar(&initOpts.Team, "team", "", "link to this existing team instead")

	msAdd, msList, msDone := &PMMilestoneAddOptions{}, &PMMilestoneListOptions{}, &PMMilestoneDoneOptions{}
	ms := &cobra.Command{Use: "milestone", Short: "Add, list and finish milestones", Args: argsBetween(0, 0)}
	ms.AddCommand(
		&cobra.Command{Use: "add NAME", Short: "Add a milestone", Args: argsBetween(1, 1),
			RunE: pmRun(f, flags, msAdd, func(o *PMMilestoneAddOptions) *PMFlags { return &o.PMFlags }, &msAdd.Name, runFs.milestoneAdd, pmMilestoneAddRun)},
		&cobra.Command{Use: "list", Short: "List the milestones", Args: argsBetween(0, 0),
			RunE: pmRun(f, flags, msList, func(o *PMMilestoneListOptions) *PMFlags { return &o.PMFlags }, nil, runFs.milestoneList, pmMilestoneListRun)},
		&cobra.Command{Use: "done ID", Short: "Mark a milestone done", Args: argsBetween(1, 1),
			RunE: pmRun(f, flags, msDone, func(o *PMMilestoneDoneOptions) *PMFlags { return &o.PMFlags }, &msDone.ID, runFs.milestoneDone, pmMilestoneDoneRun)},
	)

	tk := &cobra.Command{Use: "task", Short: "Add, list, show and update tasks", Args: argsBetween(0, 0)}
	addOpts := &PMTaskAddOptions{}
	add := &cobra.Command{Use: "add TITLE [--milestone ID] [--assignee ROLE] [--id ID]", Short: "Add a task (pending)",
		Args: argsBetween(1, 1), RunE: pmRun(f, flags, addOpts, func(o *PMTaskAddOptions) *PMFlags { return &o.PMFlags }, &addOpts.Title, runFs.taskAdd, pmTaskAddRun)}
	add.Flags().StringVar(&addOpts.Milestone, "milestone", "", "the task's milestone")
	add.Flags().StringVar(&addOpts.Assignee, "assignee", "", "the role that does it")
	add.Flags().StringVar(&addOpts.ID, "id", "", "the task's id (default: the next free number; MILESTONE-N puts it in that milestone)")
	listOpts := &PMTaskListOptions{}
	list := &cobra.Command{Use: "list [--milestone ID] [--status S] [--assignee ROLE]", Short: "List tasks",
		Args: argsBetween(0, 0), RunE: pmRun(f, flags, listOpts, func(o *PMTaskListOptions) *PMFlags { return &o.PMFlags }, nil, runFs.taskList, pmTaskListRun)}
	list.Flags().StringVar(&listOpts.Milestone, "milestone", "", "only this milestone's")
	list.Flags().StringVar(&listOpts.Status, "status", "", "only tasks in this status: pending, in_progress or done")
	list.Flags().StringVar(&listOpts.Assignee, "assignee", "", "only this role's")
	showOpts := &PMTaskShowOptions{}
	show := &cobra.Command{Use: "show ID", Short: "Show a task", Args: argsBetween(1, 1),
		RunE: pmRun(f, flags, showOpts, func(o *PMTaskShowOptions) *PMFlags { return &o.PMFlags }, &showOpts.ID, runFs.taskShow, pmTaskShowRun)}
	updOpts := &PMTaskUpdateOptions{}
	update := &cobra.Command{Use: "update ID [--status S] [--assignee ROLE] [--milestone ID] [--force]", Short: "Change a task's status, assignee or milestone",
		Args: argsBetween(1, 1), RunE: pmRun(f, flags, updOpts, func(o *PMTaskUpdateOptions) *PMFlags { return &o.PMFlags }, &updOpts.ID, runFs.taskUpdate, pmTaskUpdateRun)}
	update.Flags().StringVar(&updOpts.Status, "status", "", "pending, in_progress or done")
	update.Flags().StringVar(&updOpts.Assignee, "assignee", "", "the role that does it (empty: nobody)")
	update.Flags().StringVar(&updOpts.Milestone, "milestone", "", "the milestone (empty: none)")
	update.Flags().BoolVar(&updOpts.Force, "force", false, "overwrite a change made on GitHub meanwhile (last write wins)")
	update.PreRun = func(c *cobra.Command, _ []string) {
		updOpts.AssigneeGiven = c.Flags().Changed("assignee")
		updOpts.MilestoneGiven = c.Flags().Changed("milestone")
	}
	doneOpts := &PMTaskDoneOptions{}
	done := &cobra.Command{Use: "done ID", Short: "Mark a task done", Args: argsBetween(1, 1),
		RunE: pmRun(f, flags, doneOpts, func(o *PMTaskDoneOptions) *PMFlags { return &o.PMFlags }, &doneOpts.ID, runFs.taskDone, pmTaskDoneRun)}
	done.Flags().BoolVar(&doneOpts.Force, "force", false, "overwrite a change made on GitHub meanwhile")
	tk.AddCommand(add, list, show, update, done)

	docOpts := &PMDocOptions{}
	doc := &cobra.Command{Use: "doc ID [--print] [--set -]", Short: "Edit a task's Markdown document ($VISUAL/$EDITOR), print it, or set it from stdin",
		Long: `On a terminal, open the task's document in $VISUAL (else $EDITOR, else vi)
and save it back when it changed. With --print, or when stdin or stdout is
not a terminal, print it. --set - replaces it with stdin (for agents).`,
		Args: argsBetween(1, 1), RunE: pmRun(f, flags, docOpts, func(o *PMDocOptions) *PMFlags { return &o.PMFlags }, &docOpts.ID, runFs.doc, pmDocRun)}
	doc.Flags().BoolVar(&docOpts.Print, "print", false, "print the document")
	doc.Flags().StringVar(&docOpts.Set, "set", "", "replace the document with stdin (-)")

	logOpts, jumpOpts := &PMLogOptions{}, &PMJumpOptions{}
	cmd.AddCommand(initCmd, ms, tk, doc,
		&cobra.Command{Use: "log [ID]", Short: "Print the audit trail (of one task with ID)", Args: argsBetween(0, 1),
			RunE: pmRun(f, flags, logOpts, func(o *PMLogOptions) *PMFlags { return &o.PMFlags }, &logOpts.ID, runFs.log, pmLogRun)},
		&cobra.Command{Use: "jump", Short: "Switch the tmux client to the team's party session", Args: argsBetween(0, 0),
			RunE: pmRun(f, flags, jumpOpts, func(o *PMJumpOptions) *PMFlags { return &o.PMFlags }, nil, runFs.jump, pmJumpRun)},
	)
	return cmd
}

func pmInitRun(ctx context.Context, f *Factory, opts *PMInitOptions) error {
	res, err := party.PMInit(ctx, f.env(), party.PMInitOptions{Actor: opts.Actor, Name: opts.Name, Team: opts.Team})
	return f.show(err, res, "%s", res.Text())
}

func pmJumpRun(ctx context.Context, f *Factory, opts *PMJumpOptions) error {
	j, err := party.PMJump(ctx, f.env(), opts.Actor)
	return f.show(err, j, "%s", j.Text())
}

// openPM opens the team's store for a pm command with flags.
func openPM(ctx context.Context, f *Factory, flags PMFlags) (*party.PM, error) {
	return party.OpenPM(ctx, f.env(), party.PMOptions{Actor: flags.Actor, Repo: flags.Repo})
}

func pmMilestoneAddRun(ctx context.Context, f *Factory, opts *PMMilestoneAddOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	m, err := pm.Store.AddMilestone(ctx, pm.Actor, opts.Name)
	return f.show(err, m, "Milestone %s: %s", m.ID, party.Printable(m.Name))
}

func pmMilestoneListRun(ctx context.Context, f *Factory, opts *PMMilestoneListOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	ms, err := pm.Store.Milestones(ctx)
	return showRows(f, err, nil, ms, "ID", "STATE", "NAME")
}

func pmMilestoneDoneRun(ctx context.Context, f *Factory, opts *PMMilestoneDoneOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	m, err := pm.Store.DoneMilestone(ctx, pm.Actor, opts.ID)
	return f.show(err, m, "Milestone %s done: %s", m.ID, party.Printable(m.Name))
}

func pmTaskAddRun(ctx context.Context, f *Factory, opts *PMTaskAddOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	t, err := pm.Store.AddTask(ctx, pm.Actor, party.NewTask{ID: opts.ID, Title: opts.Title, Milestone: opts.Milestone, Assignee: opts.Assignee})
	return f.show(err, t, "%s: %s", t.Label(), party.Printable(t.Title))
}

func pmTaskListRun(ctx context.Context, f *Factory, opts *PMTaskListOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	filter := party.TaskFilter{Milestone: opts.Milestone, Assignee: opts.Assignee}
	if opts.Status != "" {
		if filter.Status, err = party.ParseTaskStatus(opts.Status); err != nil {
			return err
		}
	}
	ts, err := pm.Store.Tasks(ctx, filter)
	return showRows(f, err, nil, ts, "ID", "STATUS", "ASSIGNEE", "MILESTONE", "TITLE")
}

func pmTaskShowRun(ctx context.Context, f *Factory, opts *PMTaskShowOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	t, err := pm.Store.Task(ctx, opts.ID)
	return f.show(err, t, "%s", t.Text())
}

func pmTaskUpdateRun(ctx context.Context, f *Factory, opts *PMTaskUpdateOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	t, err := pm.Update(ctx, party.TaskUpdate{ID: opts.ID, Status: opts.Status, Assignee: opts.Assignee, Milestone: opts.Milestone,
		AssigneeGiven: opts.AssigneeGiven, MilestoneGiven: opts.MilestoneGiven, Force: opts.Force})
	return f.show(err, t, "%s", t.Text())
}

func pmTaskDoneRun(ctx context.Context, f *Factory, opts *PMTaskDoneOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	t, err := pm.Update(ctx, party.TaskUpdate{ID: opts.ID, Status: string(party.TaskDone), Force: opts.Force})
	return f.show(err, t, "%s", t.Text())
}

func pmLogRun(ctx context.Context, f *Factory, opts *PMLogOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	events, err := pm.Store.Log(ctx, opts.ID)
	return showLines(f, err, nil, events)
}

// pmDocRun sets a task's document from stdin, prints it, or, on a
// terminal, edits it.
func pmDocRun(ctx context.Context, f *Factory, opts *PMDocOptions) error {
	pm, err := openPM(ctx, f, opts.PMFlags)
	if err != nil {
		return err
	}
	switch {
	case opts.Set != "" && opts.Set != "-":
		return fmt.Errorf("%w: --set takes - (the document on stdin)", party.ErrUsage)
	case opts.Set == "-":
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
	return pm.EditDoc(ctx, opts.ID, party.TaskTerminal{In: f.IO.In, Out: f.IO.Out, ErrOut: f.IO.ErrOut})
}
