// Package supervise is party's supervisor: it owns the agent panes party
// started as runtimes and gets work to them unattended. A trigger is one
// message, delivered once through core/deliver, that the agent
// acknowledges (its thread's read cursor, a heartbeat or its own submit
// event, an ACK_TRIGGER line); it is deferred while an operator types in
// the pane, retried without ever reaching the agent twice, and kept in a
// durable store so that a crash of the supervisor loses and doubles
// nothing.
//
// Its parts: Step is the pure policy of one trigger (types.go, step.go:
// the phase table); Store is the SQLite database of runtimes, triggers and
// their transitions, threads, messages (each id once), read cursors, the
// outbox of messages to other hosts and the audit trail (store.go); Ops are the operations the CLI and the API call (ops.go);
// Loop is the daemon's effect loop over the Effects it is given
// (effects.go; core/supervise/panes has those of tmux panes): the pass
// over the open triggers (loop.go), the scan that reconciles the runtimes
// (scan.go), the workers that deliver, wait and fall back (workers.go),
// the inbox (inbox.go), the watch for stalls (stall.go), retention
// (prune.go) and the outbox's forwards to other hosts through a
// Forwarder (forward.go; StepForward, in outbox.go, is their pure
// policy, and the Store keeps the outbox, store_outbox.go); Server is the HTTP+JSON API on a unix socket
// with Prometheus metrics (api.go, metrics.go), and Client its client;
// Door is how every command reaches it (door.go): the client on the
// socket it serves on now (APISocket), a call made again once a
// restarting supervisor serves (Call), the records a stopped one left
// read instead (CallOr, RecordedSession), long polls across restarts,
// a trigger's end (AwaitEnd), a page of the triggers (ListTriggers)
// and the audit trail (AuditTrail).
// Process is the supervisor as a process of its own, a core/daemon
// (process.go): its directory (Dir) and API socket (SocketPath), Run,
// which holds its lock, serves the API and runs the Loop it is given,
// Keep, its keeper with the crash-loop bound, and the ProcFile in which a
// run says it serves or why it failed (AwaitServing, DownError); Start
// starts it and waits until it serves, and Status says whether it runs
// (status.go); PolicyOf, LimitsOf and RecoveryOf read its numbers from
// the configuration, and OpenOps opens its store and operations under
// them (settings.go).
package supervise
