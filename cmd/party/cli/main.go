package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// IOStreams are the process's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY, OutTTY and ErrTTY say whether stdin, stdout and stderr
	// are terminals.
	InTTY, OutTTY, ErrTTY bool
}

// isTerminal says whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Factory holds the dependencies of every command. Tests build it by hand.
type Factory struct {
	IO      IOStreams
	Getenv  func(string) string
	Environ func() []string
	Getwd   func() (string, error)
	Clock   party.Clock
	// Runner runs tmux; nil means tmux.ExecRunner.
	Runner party.TmuxRunner

	// Global flags, filled by the root command.
	Socket     string
	SocketPath string
	Session    string
	JSON       bool
	// CallerVersion is the version of the party on another host that
	// runs this command here (hidden --caller-version).
	CallerVersion string

	e *party.Env // built by env
}

// takesText names the commands whose last argument is a message.
var takesText = map[string]bool{"send": true, "talk": true, "trigger": true}

// env is the Env of the command's operations, built once (after the
// flags are parsed).
func (f *Factory) env() *party.Env {
	if f.e == nil {
		var environ []string
		if f.Environ != nil {
			environ = f.Environ()
		}
		tc := party.NewTmux(party.Socket{Name: f.Socket, Path: f.SocketPath}, f.Getenv, environ, f.Runner)
		f.e = &party.Env{Tmux: tc, Clock: f.Clock, Getenv: f.Getenv, Environ: environ, Getwd: f.Getwd, Session: f.Session, Stderr: f.IO.ErrOut, StderrTTY: f.IO.ErrTTY}
	}
	return f.e
}

// Main runs party with os.Args and returns the exit status.
func Main() int {
	f := &Factory{
		IO: IOStreams{
			In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
			InTTY:  isTerminal(os.Stdin),
			OutTTY: isTerminal(os.Stdout),
			ErrTTY: isTerminal(os.Stderr),
		},
		Getenv:  os.Getenv,
		Environ: os.Environ,
		Getwd:   os.Getwd,
		Clock:   party.RealClock{},
	}
	// SIGHUP too: a command running in a pane (party record, party route)
	// gets it when its session is killed, and must still finish cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return Run(ctx, f, os.Args[1:])
}

// Run executes the command line args with f and returns the exit status.
func Run(ctx context.Context, f *Factory, args []string) int {
	return runRoot(ctx, f, NewRootCmd(f), args)
}

// runRoot executes args on the command tree root.
func runRoot(ctx context.Context, f *Factory, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitcode.ExitOK
	}
	if errors.As(err, new(badFlags)) && !f.JSON {
		f.JSON = jsonAsked(args)
	}
	code, exit := exitcode.Classify(err)
	var rep *reported
	if !errors.As(err, &rep) {
		rep = &reported{error: err}
	}
	if f.JSON && !rep.json {
		writeJSON(f.IO.Out, map[string]any{"error": exitcode.ErrorJSON(err, code, rep.Error())})
	}
	if !rep.text {
		// A message may quote what an agent wrote (a failed turn's
		// error, a screen): terminal-safe.
		fmt.Fprintf(f.IO.ErrOut, "party: %s\n", termsafe.Text(rep.Error()))
	}
	if errors.Is(err, party.ErrUsage) {
		if c, _, ferr := root.Find(args); ferr == nil {
			fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", c.CommandPath())
		}
	}
	return exit
}

// NewRootCmd builds the party command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "party",
		Short: "Run teams of AI coding agents in tmux panes",
		Long: `party runs interactive AI coding agents (claude, codex, gemini, any TUI)
side by side in tmux panes, tags each pane with a role, and delivers
messages to agents by role.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&f.Socket, "socket", "L", "", "tmux socket name (env PARTY_TMUX_SOCKET)")
	pf.StringVarP(&f.SocketPath, "socket-path", "S", "", "tmux socket path (env PARTY_TMUX_SOCKET_PATH)")
	pf.StringVar(&f.Session, "session", "", "party session (env PARTY_SESSION)")
	pf.BoolVar(&f.JSON, "json", false, "print JSON")
	pf.StringVar(&f.CallerVersion, "caller-version", "", "the version of the party on another host that runs this command here (it must be this one's)")
	_ = pf.MarkHidden("caller-version")
	// -L and -S name one tmux server two ways: both is a usage error
	// (exit 2). Checked here rather than by cobra's flag groups, whose
	// error is untyped (exit 1).
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if fl := c.Flags(); fl.Changed("socket") && fl.Changed("socket-path") {
			return fmt.Errorf("%w: -L/--socket and -S/--socket-path name the tmux server two ways; give one", party.ErrUsage)
		}
		if f.CallerVersion != "" {
			return party.CheckCaller(f.env(), f.CallerVersion)
		}
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			if _, ok := bad.GetFlag().Value.(*durationValue); ok {
				err = bad.Unwrap() // it names the flag and says why
			}
		}
		err = badFlags{err}
		if takesText[c.Name()] && strings.HasPrefix(err.Error(), "unknown") {
			return fmt.Errorf("%w: %w (a TEXT that starts with '-' goes after '--': party %s ROLE -- '-n …')", party.ErrUsage, err, c.Name())
		}
		return fmt.Errorf("%w: %w", party.ErrUsage, err)
	})
	root.AddCommand(
		newStartCmd(f, nil),
		newStopCmd(f, nil),
		newSessionsCmd(f, nil),
		newLsCmd(f, nil),
		newPanesCmd(f, nil),
		newResolveCmd(f, nil),
		newSendCmd(f, nil),
		newDemoCmd(f, nil),
		newHookCmd(f, nil),
		newTalkCmd(f, nil),
		newAgentsCmd(f),
		newCheckCmd(f, nil),
		newBlocksCmd(f, nil),
		newRelayCmd(f, nil),
		newLogCmd(f, nil),
		newRouteCmd(f, nil),
		newConfigCmd(f),
		newRecordCmd(f, nil),
		newReplayCmd(f, nil),
		newReviewCmd(f, nil),
		newAskCmd(f, nil),
		newEvidenceCmd(f, nil),
		newStatusCmd(f, nil, "status"),
		newCoordinatorCmd(f),
		newHooksCmd(f, nil),
		newInstructionsCmd(f, nil),
		newExecSpecCmd(f, nil),
		newPMCmd(f, pmRunFs{}),
		newTriggerCmd(f, nil),
		newRuntimesCmd(f, nil),
		newInboxCmd(f),
		newHeartbeatCmd(f, nil),
		newMCPCmd(f, nil),
		newSuperviseCmd(f),
		newRuntimeCmd(f),
		newDashCmd(f, nil),
		newAttachCmd(f, nil), newITermCmd(f, nil), newNotifyCmd(f),
		newDiffCmd(f, nil), newMergeCmd(f, nil), newWorktreeCmd(f), newUsageCmd(f, nil),
		newHostsCmd(f, nil), newVersionCmd(f, nil),
	)
	requireSubcommands(root)
	// A group's usage lists its commands, not "party pm task [flags]" as
	// if it ran alone: cobra's usage, shown while the group is not
	// runnable.
	usage := root.UsageFunc()
	root.SetUsageFunc(func(c *cobra.Command) error {
		if c.Annotations[groupMark] != "" {
			runE := c.RunE
			c.RunE = nil
			defer func() { c.RunE = runE }()
		}
		return usage(c)
	})
	return root
}

// groupMark annotates a command that only groups others.
const groupMark = "party.group"

// requireSubcommands makes each command under c that only groups others
// (review, pm, pm task, coordinator, evidence, …) a usage error (exit 2)
// when it is run without a subcommand or with one it does not have,
// instead of cobra's help and exit 0; and party itself for an unknown
// command (cobra's exit 1). party alone still prints its help.
func requireSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs // Find leaves the words to RunE
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[groupMark] = "1"
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			if !c.HasParent() {
				return c.Help()
			}
			var names []string
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return fmt.Errorf("%w: %s needs a command: %s", party.ErrUsage, c.CommandPath(), strings.Join(names, ", "))
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += " (did you mean " + strings.Join(s, " or ") + "?)"
		}
		return fmt.Errorf("%w: %s", party.ErrUsage, msg)
	}
}

// badFlags is an error in the command line's flags: parsing stopped at it.
type badFlags struct{ error }

func (e badFlags) Unwrap() error { return e.error }

// jsonAsked says whether args, which a flag error stopped parsing, ask for
// --json before any "--".
func jsonAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
		if a == "--json" {
			return true
		}
	}
	return false
}

// argsBetween is cobra.RangeArgs with a usage error.
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return fmt.Errorf("%w: %s takes %d argument(s), got %d", party.ErrUsage, c.Name(), lo, len(args))
			}
			return fmt.Errorf("%w: %s takes %d to %d arguments, got %d", party.ErrUsage, c.Name(), lo, hi, len(args))
		}
		return nil
	}
}

func writeJSON(w io.Writer, v any) { _ = termsafe.WriteJSON(w, v) }
