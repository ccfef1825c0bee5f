package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newTriggerCmd(f *Factory, runF func(context.Context, *party.TriggerOptions) error) *cobra.Command {
	opts := &party.TriggerOptions{}
	cmd := &cobra.Command{Use: "trigger ROLE[@HOST] [--] TEXT|-", Short: "Give a supervised agent a piece of work it acknowledges",
		Long: `Record a trigger for the runtime of ROLE; the session's supervisor (party
supervise start, or party start --supervise) delivers it once as one message

  [BRIDGE_TRIGGER id=ID thread=T reason=R]
  TEXT
  [/BRIDGE_TRIGGER]

waits for the agent to acknowledge it (its thread's read cursor, a heartbeat,
its own submit event, or an ACK_TRIGGER:ID line), defers it while someone types
in the pane, and retries without ever showing it to the agent twice. An id
given twice is the same trigger. --wait returns when it ends and prints the
answer; a failure exits with its class (see docs/exit-codes.md).

ROLE@HOST gives it to the role's supervisor on another host (hosts.NAME.ssh,
or an SSH destination; --session there, else the one session there with that
role), through the API bridge over SSH: the text goes in the request's body,
never on a command line (docs/hosts.md).`,
		Example: `  party trigger claude 'CI failed on main: look at run 4711' --reason ci --wait
  party trigger codex@box 'Run the slow tests' --wait
  party trigger codex --id deploy-42 --thread deploys -
  party trigger claude 'Stop now' --force --actor alice --why 'wrong branch'`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role, opts.Text = args[0], args[1]
			return run(c, f, opts, runF, triggerRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ID, "id", "", "the trigger's id, its idempotency key (default: a new one)")
	fl.StringVar(&opts.Thread, "thread", "", "the thread it belongs to (default: default)")
	fl.StringVar(&opts.Reason, "reason", "", "why, one line (shown in the envelope)")
	fl.BoolVar(&opts.Wait, "wait", false, "wait until the trigger ends and print the answer")
	durationVar(fl, &opts.Timeout, "timeout", 0, "supervise.turnTimeout", "how long --wait waits")
	fl.BoolVar(&opts.Force, "force", false, "deliver at once although a person pressed a key lately; never into their text, a dialog or a menu (needs --actor and --why)")
	fl.StringVar(&opts.Actor, "actor", "", "who forces it (audited)")
	fl.StringVar(&opts.Why, "why", "", "why it is forced (audited)")
	cmd.AddCommand(newTriggerShowCmd(f, nil), newTriggerListCmd(f, nil), newTriggerUnblockCmd(f, nil))
	return cmd
}

// TriggerShowOptions are the inputs of party trigger show.
type TriggerShowOptions struct{ ID string }

func newTriggerShowCmd(f *Factory, runF func(context.Context, *TriggerShowOptions) error) *cobra.Command {
	opts := &TriggerShowOptions{}
	return &cobra.Command{Use: "show ID", Short: "Show a trigger and its life", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			return run(c, f, opts, runF, triggerShowRun)
		}}
}

func triggerShowRun(ctx context.Context, f *Factory, opts *TriggerShowOptions) error {
	t, err := party.TriggerShow(ctx, f.env(), opts.ID)
	return showTrigger(f, err, t, false)
}

// TriggerUnblockOptions are the inputs of party trigger unblock.
type TriggerUnblockOptions struct{ Thread string }

func newTriggerUnblockCmd(f *Factory, runF func(context.Context, *TriggerUnblockOptions) error) *cobra.Command {
	opts := &TriggerUnblockOptions{}
	return &cobra.Command{Use: "unblock THREAD", Short: "Let a thread a safeguard blocked go on", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Thread = args[0]
			return run(c, f, opts, runF, triggerUnblockRun)
		}}
}

func triggerUnblockRun(ctx context.Context, f *Factory, opts *TriggerUnblockOptions) error {
	th, err := party.TriggerUnblock(ctx, f.env(), opts.Thread)
	return f.show(err, th, "thread %s unblocked", th.ID)
}

// TriggerListOptions are the inputs of party trigger list.
type TriggerListOptions = party.TriggerListOptions

func newTriggerListCmd(f *Factory, runF func(context.Context, *TriggerListOptions) error) *cobra.Command {
	opts := &TriggerListOptions{}
	cmd := noArgsCmd(f, "list", "List the newest triggers, oldest first", opts, runF, func(ctx context.Context, f *Factory, opts *TriggerListOptions) error {
		page, err := party.TriggerList(ctx, f.env(), *opts)
		if err := showRows(f, err, nil, page.Triggers, "ID", "ROLE", "THREAD", "STATUS", "CLASS", "ACK", "CREATED"); err != nil || f.JSON {
			return err
		}
		if page.More {
			fmt.Fprintf(f.IO.ErrOut, "the newest %d shown; earlier ones: --before %s, all: --limit 0\n", opts.Limit, termsafe.Text(page.Triggers[0].ID))
		}
		return nil
	})
	cmd.Flags().StringVar(&opts.Status, "status", "", "only triggers in this status (queued, deferred, triggering, delivered, retrying, acked, fallback_resume, spawn_recovery, completed, failed)")
	cmd.Flags().IntVar(&opts.Limit, "limit", party.DefaultTriggerLimit, "show at most this many, the newest (0: all)")
	cmd.Flags().StringVar(&opts.Since, "since", "", "only triggers created since then: a duration back from now (90m, 24h) or an RFC 3339 time")
	cmd.Flags().StringVar(&opts.Before, "before", "", "only triggers recorded before the trigger of this id (the page before)")
	return cmd
}

// triggerRun records the trigger (the text from stdin for "-") and prints
// it; with --wait its answer.
func triggerRun(ctx context.Context, f *Factory, opts *party.TriggerOptions) error {
	o := *opts
	var err error
	if o.Text, err = messageText(f, o.Text); err != nil {
		return err
	}
	res, err := party.Trigger(ctx, f.env(), o)
	if err != nil && f.JSON && res.ID != "" {
		writeJSON(f.IO.Out, res)
		return &reported{error: err, json: true}
	}
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, res)
		return nil
	}
	if o.Wait {
		return showTrigger(f, nil, res.Trigger, true)
	}
	verb := "queued"
	if !res.Created {
		verb = "exists"
	}
	return f.show(nil, res, "%s %s for %s (%s)", verb, res.ID, res.Role, res.Status)
}

// showTrigger prints t: with answerOnly and an answer, the answer alone.
func showTrigger(f *Factory, err error, t party.TriggerRecord, answerOnly bool) error {
	if err != nil || f.JSON {
		return f.show(err, t, "")
	}
	if answerOnly && t.Answer != nil {
		_, err := fmt.Fprintln(f.IO.Out, termsafe.Text(*t.Answer))
		return err
	}
	w := f.IO.Out
	fmt.Fprintf(w, "trigger %s: %s", t.ID, t.Status)
	if t.Class != "" {
		fmt.Fprintf(w, " %s", t.Class)
	}
	fmt.Fprintf(w, "\nrole %s, thread %s, attempts %d, ack windows %d", t.Role, t.Thread, t.Attempts, t.Waits)
	if t.AckSource != "" {
		fmt.Fprintf(w, ", acked by %s", t.AckSource)
	}
	fmt.Fprintln(w)
	if t.Error != "" {
		fmt.Fprintf(w, "error: %s\n", termsafe.Text(t.Error))
	}
	if t.Answer != nil {
		fmt.Fprintf(w, "answer:\n%s\n", termsafe.Text(*t.Answer))
	}
	return nil
}

// RuntimesOptions are the inputs of party runtimes.
type RuntimesOptions struct {
	Host string // another host's (--host)
}

func newRuntimesCmd(f *Factory, runF func(context.Context, *RuntimesOptions) error) *cobra.Command {
	opts := &RuntimesOptions{}
	cmd := noArgsCmd(f, "runtimes [--host HOST]", "List the agents the supervisor manages, as it last saw them", opts, runF,
		func(ctx context.Context, f *Factory, opts *RuntimesOptions) error {
			var rts []party.Runtime
			var err error
			if opts.Host != "" {
				rts, err = party.HostRuntimes(ctx, f.env(), opts.Host)
			} else {
				rts, err = party.Runtimes(ctx, f.env())
			}
			return showRows(f, err, nil, rts, "ROLE", "AGENT", "TARGET", "PANE", "STATUS", "BUSY", "TRIGGER", "AGENT SESSION")
		})
	cmd.Flags().StringVar(&opts.Host, "host", "", "another host's (hosts.NAME.ssh, or an SSH destination), through the API bridge over SSH: --session there, else its one party session")
	return cmd
}

func newInboxCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "inbox", Short: "Threads of messages between agents, bridges and people",
		Long: `Messages go to a role's inbox in a thread; the supervisor triggers the role
("N unread messages in thread T: run party inbox read --thread T"), and its
read cursor moving is the acknowledgement. Inside an agent's pane, read and
send act as that runtime (its PARTY_RUNTIME_TOKEN), never as a name given.
There, send --to ROLE@HOST is recorded in the session's outbox and the
supervisor forwards it to that host, once (list shows how it stands).`}
	cmd.AddCommand(newInboxSendCmd(f, nil), newInboxReadCmd(f, nil), newInboxListCmd(f, nil))
	return cmd
}

func newInboxSendCmd(f *Factory, runF func(context.Context, *party.MessageRequest) error) *cobra.Command {
	opts := &party.MessageRequest{}
	cmd := &cobra.Command{Use: "send --to ROLE [--thread T] [--] TEXT|-", Short: "Put a message into ROLE's inbox", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Text = args[0]
			return run(c, f, opts, runF, inboxSendRun)
		}}
	cmd.Flags().StringVar(&opts.To, "to", "", "the role whose inbox gets it; ROLE@HOST: on another host, through the API bridge over SSH (from inside an agent's pane: recorded in this supervisor's outbox, which forwards it)")
	cmd.Flags().StringVar(&opts.Thread, "thread", "", "the thread (default: default)")
	cmd.Flags().StringVar(&opts.From, "from", "", "who sends it, outside a pane (default: operator)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// inboxSendRun sends the message (its text from stdin for "-").
func inboxSendRun(ctx context.Context, f *Factory, opts *party.MessageRequest) error {
	req := *opts
	var err error
	if req.Text, err = messageText(f, req.Text); err != nil {
		return err
	}
	m, err := party.InboxSend(ctx, f.env(), req)
	if m.Forward != nil {
		// Recorded in this supervisor's outbox; it forwards it.
		return f.show(err, m, "message %s to %s in thread %s: %s", m.ID, m.To, m.Thread, m.Forward.State)
	}
	return f.show(err, m, "message %d to %s in thread %s", m.Seq, m.To, m.Thread)
}

// InboxReadOptions are the inputs of party inbox read.
type InboxReadOptions struct{ Thread string }

func newInboxReadCmd(f *Factory, runF func(context.Context, *InboxReadOptions) error) *cobra.Command {
	opts := &InboxReadOptions{}
	cmd := noArgsCmd(f, "read [--thread T]", "Read this runtime's unread messages (inside its pane)", opts, runF,
		func(ctx context.Context, f *Factory, opts *InboxReadOptions) error {
			ms, err := party.InboxRead(ctx, f.env(), opts.Thread)
			return showMessages(f, err, ms)
		})
	cmd.Flags().StringVar(&opts.Thread, "thread", "", "only this thread")
	return cmd
}

// InboxListOptions are the inputs of party inbox list.
type InboxListOptions struct{ Thread string }

func newInboxListCmd(f *Factory, runF func(context.Context, *InboxListOptions) error) *cobra.Command {
	opts := &InboxListOptions{}
	cmd := noArgsCmd(f, "list [--thread T]", "List the messages of a thread", opts, runF,
		func(ctx context.Context, f *Factory, opts *InboxListOptions) error {
			ms, err := party.InboxList(ctx, f.env(), opts.Thread)
			return showMessages(f, err, ms)
		})
	cmd.Flags().StringVar(&opts.Thread, "thread", "", "the thread (default: default)")
	return cmd
}

// showMessages prints messages: JSON, else each with its header.
func showMessages(f *Factory, err error, ms []party.Message) error {
	if err != nil || f.JSON {
		return f.show(err, nonNil(ms), "")
	}
	for _, m := range ms {
		if m.Forward != nil {
			fmt.Fprintf(f.IO.Out, "--- %s %s -> %s [%s] %s %s\n%s\n", m.ID, m.From, m.To, m.Thread, m.At.Format("15:04:05"),
				forwardState(m.Forward), termsafe.Text(m.Text))
			continue
		}
		fmt.Fprintf(f.IO.Out, "--- %d %s -> %s [%s] %s\n%s\n", m.Seq, m.From, m.To, m.Thread, m.At.Format("15:04:05"), termsafe.Text(m.Text))
	}
	return nil
}

// forwardState is how the forwarding of a message to another host stands,
// in words: forwarded (its seq there), pending (tries, the next, the last
// error) or failed (the error).
func forwardState(fw *party.Forward) string {
	s := fw.State.String()
	switch fw.State {
	case party.FwdForwarded:
		s += fmt.Sprintf(" (message %d there, %d tries)", fw.Seq, fw.Attempts)
	case party.FwdPending:
		s += fmt.Sprintf(" (%d tries", fw.Attempts)
		if fw.Attempts > 0 {
			s += ", next " + fw.NextAt.Format("15:04:05")
		}
		s += ")"
	}
	if fw.Code != "" {
		s += " " + fw.Code + ": " + termsafe.Text(fw.Error)
	}
	return s
}

// HeartbeatOptions are the inputs of party heartbeat.
type HeartbeatOptions struct{ Status string }

func newHeartbeatCmd(f *Factory, runF func(context.Context, *HeartbeatOptions) error) *cobra.Command {
	opts := &HeartbeatOptions{}
	cmd := noArgsCmd(f, "heartbeat [--status S]", "Tell the supervisor this agent is alive (inside its pane)", opts, runF,
		func(ctx context.Context, f *Factory, opts *HeartbeatOptions) error {
			err := party.Heartbeat(ctx, f.env(), opts.Status)
			return f.show(err, map[string]string{"status": opts.Status}, "ok")
		})
	cmd.Flags().StringVar(&opts.Status, "status", "active", "active, idle, or a word of the agent's")
	return cmd
}

func newSuperviseCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "supervise", Short: "Start, stop or inspect the session's supervisor",
		Long: `The supervisor owns the agent panes party started as runtimes and delivers
their triggers (party trigger, party inbox, POST /v1/triggers). It runs in a
hidden window of the session (party-supervise), restarted 2 s after a crash;
its database, log and locks are in the session's state dir, under supervise/,
and its API listens on a unix socket (0600) in the runtime dir.`}
	start, keep := newSuperviseStartCmd(f, nil), newSuperviseKeepCmd(f, nil)
	keep.Hidden = true
	cmd.AddCommand(start, newSuperviseStopCmd(f, nil), newSuperviseStatusCmd(f, nil),
		newSuperviseRunCmd(f, nil), keep, newSuperviseEventsCmd(f, nil), newSuperviseBridgeCmd(f, nil))
	return cmd
}

// listenFlag adds --listen to c, into listen.
func listenFlag(c *cobra.Command, listen *string) *cobra.Command {
	c.Flags().StringVar(listen, "listen", "", "also serve the API on this loopback HOST:PORT (bearer token in the supervisor's dir, api.token)")
	return c
}

// printSupervisor returns err, else prints p after what the command did
// (did) if anything.
func printSupervisor(f *Factory, err error, p party.SupervisorProc, did string) error {
	if did != "" {
		did += ": "
	}
	api := p.Socket
	if p.TCP != "" {
		api += " and " + p.TCP
	}
	return f.show(err, p, "%ssupervisor %s, API %s", did, p.Describe(), api)
}

func newSuperviseStartCmd(f *Factory, runF func(context.Context, *party.RunOptions) error) *cobra.Command {
	opts := &party.RunOptions{}
	return listenFlag(noArgsCmd(f, "start", "Start the supervisor in a hidden window of the session", opts, runF,
		func(ctx context.Context, f *Factory, opts *party.RunOptions) error {
			p, err := party.StartSupervisor(ctx, f.env(), *opts)
			return printSupervisor(f, err, p, "started")
		}), &opts.Listen)
}

// SuperviseStopOptions are the inputs of party supervise stop (none).
type SuperviseStopOptions struct{}

func newSuperviseStopCmd(f *Factory, runF func(context.Context, *SuperviseStopOptions) error) *cobra.Command {
	return noArgsCmd(f, "stop", "Stop the supervisor (its records stay)", &SuperviseStopOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *SuperviseStopOptions) error {
			p, err := party.StopSupervisor(ctx, f.env())
			return printSupervisor(f, err, p, "stopped")
		})
}

// SuperviseStatusOptions are the inputs of party supervise status (none).
type SuperviseStatusOptions struct{}

func newSuperviseStatusCmd(f *Factory, runF func(context.Context, *SuperviseStatusOptions) error) *cobra.Command {
	return noArgsCmd(f, "status", "Say whether the supervisor runs", &SuperviseStatusOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *SuperviseStatusOptions) error {
			p, err := party.SupervisorStatus(ctx, f.env())
			var down *party.SupervisorFailedError
			if err != nil && !errors.As(err, &down) {
				return err
			}
			// Down after a failure: the state and its reason are what
			// was asked for, printed; the exit status is the failure's.
			if err := printSupervisor(f, nil, p, ""); err != nil {
				return err
			}
			if down != nil {
				return &reported{error: err, json: true, text: true}
			}
			return nil
		})
}

func newSuperviseRunCmd(f *Factory, runF func(context.Context, *party.RunOptions) error) *cobra.Command {
	opts := &party.RunOptions{}
	return listenFlag(noArgsCmd(f, "run", "Run the supervisor in the foreground", opts, runF,
		func(ctx context.Context, f *Factory, opts *party.RunOptions) error {
			return party.RunSupervisor(ctx, f.env(), *opts)
		}), &opts.Listen)
}

// newSuperviseKeepCmd is party supervise keep; its old name, daemon,
// stays an alias for one release.
func newSuperviseKeepCmd(f *Factory, runF func(context.Context, *party.RunOptions) error) *cobra.Command {
	opts := &party.RunOptions{}
	c := listenFlag(noArgsCmd(f, "keep", "Run the supervisor and restart it when it crashes", opts, runF,
		func(ctx context.Context, f *Factory, opts *party.RunOptions) error {
			return party.KeepSupervisor(ctx, f.env(), f.IO.Out, *opts)
		}), &opts.Listen)
	c.Aliases = []string{"daemon"}
	return c
}

// SuperviseEventsOptions are the inputs of party supervise events.
type SuperviseEventsOptions struct{ Follow bool }

func newSuperviseEventsCmd(f *Factory, runF func(context.Context, *SuperviseEventsOptions) error) *cobra.Command {
	opts := &SuperviseEventsOptions{}
	cmd := noArgsCmd(f, "events [--follow]", "Print the supervisor's audit trail", opts, runF,
		func(ctx context.Context, f *Factory, opts *SuperviseEventsOptions) error {
			return party.SupervisorEvents(ctx, f.env(), opts.Follow, func(e party.AuditEvent) {
				if f.JSON {
					_ = termsafe.WriteJSONLine(f.IO.Out, e)
					return
				}
				fmt.Fprintln(f.IO.Out, termsafe.Text(e.String()))
			})
		})
	cmd.Flags().BoolVar(&opts.Follow, "follow", false, "keep printing new events")
	return cmd
}

func newRuntimeCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "runtime", Short: "Act on one of the supervisor's runtimes"}
	cmd.AddCommand(newRuntimeStopCmd(f, nil))
	return cmd
}

func newRuntimeStopCmd(f *Factory, runF func(context.Context, *party.RuntimeStopOptions) error) *cobra.Command {
	opts := &party.RuntimeStopOptions{}
	cmd := &cobra.Command{Use: "stop ROLE", Short: "Stop a runtime: C-c to its agent, its pane killed, deregistered", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			return run(c, f, opts, runF, runtimeStopRun)
		}}
	durationVar(cmd.Flags(), &opts.Grace, "grace", 5*time.Second, "", "how long the agent has to exit after C-c before its pane is killed")
	return cmd
}

func runtimeStopRun(ctx context.Context, f *Factory, opts *party.RuntimeStopOptions) error {
	rt, err := party.StopRuntime(ctx, f.env(), *opts)
	return f.show(err, rt, "stopped %s (%s)", rt.Role, rt.Pane)
}
