package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newTriggerCmd(f *Factory, runF func(context.Context, *party.TriggerOptions) error) *cobra.Command {
	opts := &party.TriggerOptions{}
	cmd := &cobra.Command{Use: "trigger ROLE [--] TEXT|-", Short: "Give a supervised agent a piece of work it acknowledges",
		Long: `Record a trigger for the runtime of ROLE; the session's supervisor (party
supervise start, or party start --supervise) delivers it once as one message

  [BRIDGE_TRIGGER id=ID thread=T reason=R]
  TEXT
  [/BRIDGE_TRIGGER]

waits for the agent to acknowledge it (its thread's read cursor, a heartbeat,
its own submit event, or an ACK_TRIGGER:ID line), defers it while someone types
in the pane, and retries without ever showing it to the agent twice. An id
given twice is the same trigger. --wait returns when it ends and prints the
answer; a failure exits with its class (see docs/exit-codes.md).`,
		Example: `  party trigger claude 'CI failed on main: look at run 4711' --reason ci --wait
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
	fl.BoolVar(&opts.Force, "force", false, "deliver at once although the operator is busy (needs --actor and --why)")
	fl.StringVar(&opts.Actor, "actor", "", "who forces it (audited)")
	fl.StringVar(&opts.Why, "why", "", "why it is forced (audited)")
	cmd.AddCommand(
		&cobra.Command{Use: "show ID", Short: "Show a trigger and its life", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				t, err := party.TriggerShow(c.Context(), f.env(), args[0])
				return showTrigger(f, err, t, false)
			}},
		newTriggerListCmd(f),
		&cobra.Command{Use: "unblock THREAD", Short: "Let a thread a safeguard blocked go on", Args: argsBetween(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				th, err := party.TriggerUnblock(c.Context(), f.env(), args[0])
				return f.show(err, th, "thread %s unblocked", th.ID)
			}},
	)
	return cmd
}

func newTriggerListCmd(f *Factory) *cobra.Command {
	var status string
	cmd := &cobra.Command{Use: "list", Short: "List the triggers, oldest first", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			ts, err := party.TriggerList(c.Context(), f.env(), status)
			return showRows(f, err, nil, ts, "ID", "ROLE", "THREAD", "STATUS", "CLASS", "ACK", "CREATED")
		}}
	cmd.Flags().StringVar(&status, "status", "", "only triggers in this status (queued, deferred, triggering, delivered, retrying, acked, fallback_resume, spawn_recovery, completed, failed)")
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
		_, err := fmt.Fprintln(f.IO.Out, party.TerminalText(*t.Answer))
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
		fmt.Fprintf(w, "error: %s\n", party.TerminalText(t.Error))
	}
	if t.Answer != nil {
		fmt.Fprintf(w, "answer:\n%s\n", party.TerminalText(*t.Answer))
	}
	return nil
}

func newRuntimesCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "runtimes", Short: "List the agents the supervisor manages, as it last saw them", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			rts, err := party.Runtimes(c.Context(), f.env())
			return showRows(f, err, nil, rts, "ROLE", "AGENT", "TARGET", "PANE", "STATUS", "BUSY", "TRIGGER", "AGENT SESSION")
		}}
}

func newInboxCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "inbox", Short: "Threads of messages between agents, bridges and people",
		Long: `Messages go to a role's inbox in a thread; the supervisor triggers the role
("N unread messages in thread T: run party inbox read --thread T"), and its
read cursor moving is the acknowledgement. Inside an agent's pane, read and
send act as that runtime (its PARTY_RUNTIME_TOKEN), never as a name given.`}
	var send party.MessageRequest
	sendCmd := &cobra.Command{Use: "send --to ROLE [--thread T] [--] TEXT|-", Short: "Put a message into ROLE's inbox", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			req := send
			var err error
			if req.Text, err = messageText(f, args[0]); err != nil {
				return err
			}
			m, err := party.InboxSend(c.Context(), f.env(), req)
			return f.show(err, m, "message %d to %s in thread %s", m.Seq, m.To, m.Thread)
		}}
	sendCmd.Flags().StringVar(&send.To, "to", "", "the role whose inbox gets it")
	sendCmd.Flags().StringVar(&send.Thread, "thread", "", "the thread (default: default)")
	sendCmd.Flags().StringVar(&send.From, "from", "", "who sends it, outside a pane (default: operator)")
	_ = sendCmd.MarkFlagRequired("to")
	var readThread, listThread string
	readCmd := &cobra.Command{Use: "read [--thread T]", Short: "Read this runtime's unread messages (inside its pane)", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			ms, err := party.InboxRead(c.Context(), f.env(), readThread)
			return showMessages(f, err, ms)
		}}
	readCmd.Flags().StringVar(&readThread, "thread", "", "only this thread")
	listCmd := &cobra.Command{Use: "list [--thread T]", Short: "List the messages of a thread", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			ms, err := party.InboxList(c.Context(), f.env(), listThread)
			return showMessages(f, err, ms)
		}}
	listCmd.Flags().StringVar(&listThread, "thread", "", "the thread (default: default)")
	cmd.AddCommand(sendCmd, readCmd, listCmd)
	return cmd
}

// showMessages prints messages: JSON, else each with its header.
func showMessages(f *Factory, err error, ms []party.Message) error {
	if err != nil || f.JSON {
		return f.show(err, nonNil(ms), "")
	}
	for _, m := range ms {
		fmt.Fprintf(f.IO.Out, "--- %d %s -> %s [%s] %s\n%s\n", m.Seq, m.From, m.To, m.Thread, m.At.Format("15:04:05"), party.TerminalText(m.Text))
	}
	return nil
}

func newHeartbeatCmd(f *Factory) *cobra.Command {
	var status string
	cmd := &cobra.Command{Use: "heartbeat [--status S]", Short: "Tell the supervisor this agent is alive (inside its pane)", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			err := party.Heartbeat(c.Context(), f.env(), status)
			return f.show(err, map[string]string{"status": status}, "ok")
		}}
	cmd.Flags().StringVar(&status, "status", "active", "active, idle, or a word of the agent's")
	return cmd
}

func newSuperviseCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "supervise", Short: "Start, stop or inspect the session's supervisor",
		Long: `The supervisor owns the agent panes party started as runtimes and delivers
their triggers (party trigger, party inbox, POST /v1/triggers). It runs in a
hidden window of the session (party-supervise), restarted 2 s after a crash;
its database, log and locks are in the session's state dir, under supervise/,
and its API listens on a unix socket (0600) in the runtime dir.`}
	proc := func(use, short, did string, op func(context.Context, *party.Env) (party.SupervisorProc, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				p, err := op(c.Context(), f.env())
				prefix := ""
				if did != "" {
					prefix = did + ": "
				}
				api := p.Socket
				if p.TCP != "" {
					api += " and " + p.TCP
				}
				return f.show(err, p, "%ssupervisor %s, API %s", prefix, p.Describe("not running"), api)
			}}
	}
	var runOpts party.RunOptions
	listen := func(c *cobra.Command) *cobra.Command {
		c.Flags().StringVar(&runOpts.Listen, "listen", "", "also serve the API on this loopback HOST:PORT (bearer token in the supervisor's dir, api.token)")
		return c
	}
	runCmd := listen(&cobra.Command{Use: "run", Short: "Run the supervisor in the foreground", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return party.RunSupervisor(c.Context(), f.env(), runOpts) }})
	var follow bool
	eventsCmd := &cobra.Command{Use: "events [--follow]", Short: "Print the supervisor's audit trail", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return party.SupervisorEvents(c.Context(), f.env(), follow, func(e party.AuditEvent) {
				if f.JSON {
					_ = party.WriteJSONLine(f.IO.Out, e)
					return
				}
				fmt.Fprintln(f.IO.Out, party.TerminalText(e.String()))
			})
		}}
	eventsCmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events")
	cmd.AddCommand(
		listen(proc("start", "Start the supervisor in a hidden window of the session", "started", func(ctx context.Context, env *party.Env) (party.SupervisorProc, error) {
			return party.StartSupervisor(ctx, env, runOpts)
		})),
		proc("stop", "Stop the supervisor (its records stay)", "stopped", party.StopSupervisor),
		proc("status", "Say whether the supervisor runs", "", party.SupervisorStatus),
		runCmd,
		listen(&cobra.Command{Use: "daemon", Short: "Run the supervisor and restart it when it crashes", Hidden: true, Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				return party.KeepSupervisor(c.Context(), f.env(), f.IO.Out, runOpts)
			}}),
		eventsCmd,
	)
	return cmd
}

func newRuntimeCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "runtime", Short: "Act on one of the supervisor's runtimes"}
	var opts party.RuntimeStopOptions
	stop := &cobra.Command{Use: "stop ROLE", Short: "Stop a runtime: C-c to its agent, its pane killed, deregistered", Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			rt, err := party.StopRuntime(c.Context(), f.env(), opts)
			return f.show(err, rt, "stopped %s (%s)", rt.Role, rt.Pane)
		}}
	durationVar(stop.Flags(), &opts.Grace, "grace", 5*time.Second, "", "how long the agent has to exit after C-c before its pane is killed")
	cmd.AddCommand(stop)
	return cmd
}
